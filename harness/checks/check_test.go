package checks

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestEveryTimeoutIsSetAndDocumented: each wait's duration is a field of
// Timeouts with a default, and docs/harness.md's table names it.
func TestEveryTimeoutIsSetAndDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "harness.md"))
	if err != nil {
		t.Fatal(err)
	}
	v := reflect.ValueOf(DefaultTimeouts())
	for i := range v.NumField() {
		name := v.Type().Field(i).Name
		if d, ok := v.Field(i).Interface().(time.Duration); !ok || d <= 0 {
			t.Errorf("DefaultTimeouts().%s is %v: every wait needs a duration", name, v.Field(i).Interface())
		}
		if !strings.Contains(string(doc), "`"+name+"`") {
			t.Errorf("docs/harness.md's table of timeouts does not name %s", name)
		}
	}
}
