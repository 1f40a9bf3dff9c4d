package step

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/10xdev/gw10/harness/checks"
	"github.com/10xdev/gw10/harness/evidence"
)

// TestAStepsTriggersAreItsOwn: a descriptor declares triggers of its own,
// never one of every step's (package evidence) or one twice.
func TestAStepsTriggersAreItsOwn(t *testing.T) {
	base := Step{Name: "tiny", Dir: "tiny", SolutionDir: "tiny-solution", Module: "example.com/tiny", SolutionModule: "example.com/tiny-solution",
		Primary: checks.Primary{GVK: schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}, Resource: "widgets"},
		Checks:  []checks.Check{{ID: "one", Title: "t", SeedRef: "s", Hint: "h", Direction: "d", LongHint: "l", Run: func(context.Context, *checks.T) {}}},
	}
	ok := base
	ok.Triggers = []evidence.Trigger{"gadget-created", "gadget-deleted"}
	if err := ok.Validate(); err != nil {
		t.Fatalf("its own triggers: %v", err)
	}
	for _, bad := range [][]evidence.Trigger{{evidence.RouteCreated}, {"gadget-created", "gadget-created"}, {""}} {
		st := base
		st.Triggers = bad
		if err := st.Validate(); err == nil || !strings.Contains(err.Error(), "trigger") {
			t.Errorf("triggers %q: Validate says %v", bad, err)
		}
	}
}
