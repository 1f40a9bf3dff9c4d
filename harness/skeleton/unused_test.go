package skeleton

import (
	"strings"
	"testing"
)

// TestUnusedImportsAreDroppedFromTheCodeAlone: imports the stubs no longer
// use go (named, unnamed, versioned, gopkg.in), those still used stay, and
// an unnamed import whose package name its path does not suggest stays.
func TestUnusedImportsAreDroppedFromTheCodeAlone(t *testing.T) {
	solution := `package p

import (
	"fmt"
	"strings"

	ginkgo "github.com/onsi/ginkgo/v2"
	"gopkg.in/yaml.v3"
	"k8s.io/utils/ptr"
	"example.com/go-oddname"
)

func F() { fmt.Println(strings.ToUpper(""), ginkgo.By, yaml.Marshal, ptr.To(1), odd.X) }
`
	stubbed := `package p

import (
	"fmt"
	"strings"

	ginkgo "github.com/onsi/ginkgo/v2"
	"gopkg.in/yaml.v3"
	"k8s.io/utils/ptr"
	"example.com/go-oddname"
)

func F() { fmt.Println(ptr.To(1)) }
`
	out, err := dropUnusedImports("p.go", []byte(solution), []byte(stubbed))
	if err != nil {
		t.Fatal(err)
	}
	got := string(out)
	for _, gone := range []string{`"strings"`, `ginkgo "github.com/onsi/ginkgo/v2"`, `"gopkg.in/yaml.v3"`} {
		if strings.Contains(got, gone) {
			t.Errorf("%s is still imported:\n%s", gone, got)
		}
	}
	for _, kept := range []string{`"fmt"`, `"k8s.io/utils/ptr"`, `"example.com/go-oddname"`} {
		if !strings.Contains(got, kept) {
			t.Errorf("%s was dropped:\n%s", kept, got)
		}
	}
}
