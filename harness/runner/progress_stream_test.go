package runner

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/10xdev/gw10/harness/cluster"
	"github.com/10xdev/gw10/harness/report"
)

// noBackend is a started cluster that holds nothing: these tests are about
// the output of its start.
type noBackend struct{}

func (noBackend) Name() string               { return "none" }
func (noBackend) Admin() *rest.Config        { return &rest.Config{} }
func (noBackend) Stop(context.Context) error { return nil }
func (noBackend) Outlives() bool             { return false }
func (noBackend) ControllerIdentity(context.Context, client.Client, string) (*rest.Config, error) {
	return &rest.Config{}, nil
}

// clusterWhileBuilding runs what setup runs — the cluster started in the
// background, the build stage, then the cluster stage — with a cluster
// start that reports its progress while the build runs (a first run builds
// etcd from source), and returns the output.
func clusterWhileBuilding(t *testing.T, terminal bool) string {
	t.Helper()
	var out lockedBuffer
	wrote := make(chan struct{})
	r := &run{opts: Options{Out: &out, StageTick: time.Hour, Terminal: terminal,
		NewBackend: func(_ context.Context, _ string, progress io.Writer) (cluster.Backend, error) {
			fmt.Fprintln(progress, "  building etcd 3.6.16 from source (first run) ...")
			fmt.Fprintln(progress, "  still building etcd: 10s elapsed")
			close(wrote)
			return noBackend{}, nil
		}}.withDefaults(), rep: &report.Report{}}
	wait := r.startClusterMeanwhile(context.Background())
	ctx := context.Background()
	if !r.runStages(ctx, stage{name: "build", do: func(context.Context) error {
		select {
		case <-wrote:
		case <-time.After(time.Minute): // generous: the machine may be busy
			return fmt.Errorf("the cluster's start wrote nothing")
		}
		return nil // the build ends after the cluster's lines were written
	}}) {
		t.Fatalf("build stage failed:\n%s", out.String())
	}
	if !r.runStages(ctx, stage{name: "cluster", harness: true, do: func(context.Context) error { return wait() }}) {
		t.Fatalf("cluster stage failed:\n%s", out.String())
	}
	return out.String()
}

// TestTheClustersProgressStaysWithItsStageInALog: in a log (CI, a pipe) the
// cluster's progress, written while the build stage runs, appears under the
// cluster stage, not inside the build's: one stream, top to bottom.
func TestTheClustersProgressStaysWithItsStageInALog(t *testing.T) {
	got := clusterWhileBuilding(t, false)
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	want := []string{"  build ...  ok", "  cluster ...  ", "  building etcd", "  still building etcd", "  cluster ...  ok"}
	if len(lines) != len(want) {
		t.Fatalf("want %d lines (the build's result, then the cluster stage with its progress and its result), got:\n%s", len(want), got)
	}
	for i, w := range want {
		if !strings.HasPrefix(squeeze(lines[i]), w) {
			t.Errorf("line %d is %q, want it to start %q; the whole output:\n%s", i+1, lines[i], w, got)
		}
	}
}

// TestTheClustersProgressShowsAsItComesOnATerminal: on a terminal the
// progress shows while the build runs, each line whole.
func TestTheClustersProgressShowsAsItComesOnATerminal(t *testing.T) {
	got := clusterWhileBuilding(t, true)
	squeezed := squeeze(got)
	build, etcd := strings.Index(squeezed, "  build ...  ok"), strings.Index(squeezed, "still building etcd")
	if etcd < 0 || build < 0 || etcd > build {
		t.Errorf("on a terminal the cluster's progress must show during the build stage:\n%s", got)
	}
}

// squeeze folds the padding of a stage's line ("build ...      ok") to two spaces.
func squeeze(s string) string {
	for strings.Contains(s, "   ") {
		s = strings.ReplaceAll(s, "   ", "  ")
	}
	return s
}
