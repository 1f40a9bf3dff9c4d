package runner

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/10xdev/gw10/harness/checks"
	"github.com/10xdev/gw10/harness/evidence"
	"github.com/10xdev/gw10/harness/report"
	"github.com/10xdev/gw10/harness/step"
	"github.com/10xdev/gw10/harness/steps"
	"github.com/10xdev/gw10/harness/testenv"
)

// tinyStep is a step that is not one of the course's: one check, its own
// name, chapter and module path, on a copy of the newest solution's code.
func tinyStep(base step.Step) step.Step {
	return step.Step{
		Name:           "tiny",
		Dir:            "tiny",
		Module:         "example.com/tiny",
		SolutionDir:    "tiny-solution",
		SolutionModule: "example.com/tiny-solution",
		Chapter:        "harness/testdata/tiny/chapter.md",
		// The kind its controller reconciles (the solution's code, so its
		// kind), declared here without the course step's causes: the checks
		// record, create and name its objects from this alone.
		Primary: checks.Primary{GVK: base.Primary.GVK, Resource: base.Primary.Resource},
		Cleanup: append(append([]schema.GroupVersionKind(nil), base.Cleanup...), configMaps),
		// A kind no course step watches: the recorder follows it because
		// the descriptor says so, with no change to package checks.
		Watched: []schema.GroupVersionKind{configMaps},
		// Its own trigger: the Service it makes is its business, not
		// package evidence's.
		Triggers: []evidence.Trigger{tinyServiceCreated},
		Checks: []checks.Check{{
			ID:        "tiny-programmed",
			Title:     "a route to an existing Service is programmed",
			SeedRef:   "the tiny step's only line",
			Points:    7,
			Hint:      "program it",
			Direction: "look at the proxy", LongHint: "program the route",
			Run: func(ctx context.Context, t *checks.T) {
				// The step's own helpers make what its routes need: package
				// checks knows no Service.
				svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "tiny-svc", Namespace: t.Namespace},
					Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 8080}}}}
				t.Did(tinyServiceCreated, "Service "+t.Namespace+"/tiny-svc", "creating Service tiny-svc")
				t.Must(t.Client.Create(ctx, svc), "creating Service tiny-svc")
				r := t.NewRoute(ctx, "tiny", "tiny-svc", 8080)
				r.Eventually(ctx, t.Timeouts.Converge, checks.Want{Type: "Programmed", Status: "True"})
				if !slices.ContainsFunc(t.History().Versions, func(v checks.Version) bool { return v.Name == "tiny" && v.StatusWrite }) {
					t.Fatalf("the recorder did not follow the primary kind the step declares: versions %v", t.History().Versions)
				}
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "tiny-config", Namespace: t.Namespace}}
				if err := t.Client.Create(ctx, cm); err != nil {
					t.Fatalf("creating ConfigMap tiny-config: %v", err)
				}
				t.WaitFor(ctx, t.Timeouts.Converge, "the recorder sees ConfigMap tiny-config, a kind the step watches", func() error {
					for _, o := range t.History().Objects {
						if o.Kind == "ConfigMap" && o.Name == "tiny-config" && o.Exists {
							return nil
						}
					}
					return fmt.Errorf("the history's watched objects are %v", t.History().Objects)
				})
			},
		}},
	}
}

// tinyServiceCreated is the tiny step's own trigger.
const tinyServiceCreated evidence.Trigger = "tiny-service-created"

// configMaps is the tiny step's own watched kind.
var configMaps = schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}

func TestThePipelineRunsAStepThatIsNotACourseStep(t *testing.T) {
	testenv.Needs(t, testenv.Cluster)
	t.Parallel() // beside the package's other long runs (planes)
	st := tinyStep(steps.Default())
	if err := st.Validate(); err != nil {
		t.Fatal(err)
	}
	dir := copyModule(t, filepath.Join(root, steps.Default().SolutionDir))
	rep, out := runStep(t, st, dir, "tiny", nil, passingTimeouts())
	if !rep.Summary.OK || len(rep.Checks) != 1 || rep.Summary.TotalPoints != 7 {
		t.Fatalf("the tiny step does not pass its one check:\n%s", out)
	}
	c := rep.Checks[0]
	if c.ID != "tiny-programmed" || c.Doc != "harness/testdata/tiny/chapter.md#check-tiny-programmed" || rep.Dir != "tiny" {
		t.Errorf("the report does not follow the descriptor: step %q, check %q, doc %q", rep.Dir, c.ID, c.Doc)
	}
	// The harness's own stages say so (a grade gives no grade when one
	// fails); the submission's do not.
	own := map[string]bool{"cluster": true, "controller identity": true, "proxy stand-in": true}
	for _, stage := range rep.Stages {
		if stage.Harness != own[stage.Name] {
			t.Errorf("stage %s: marked the harness's own %v, want %v", stage.Name, stage.Harness, own[stage.Name])
		}
		delete(own, stage.Name)
		if stage.Name == "unit tests" {
			t.Errorf("a step without unit tests ran a unit stage")
		}
		if stage.Status != report.Pass {
			t.Errorf("stage %s: %s", stage.Name, stage.Detail)
		}
	}
	if len(own) > 0 {
		t.Errorf("the run had no stage %v", own)
	}
	if !strings.Contains(out, "gw10: checking tiny") {
		t.Errorf("the output does not name the step:\n%s", out)
	}
}
