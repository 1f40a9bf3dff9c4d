package ctrlproc

import (
	"slices"
	"strings"
	"testing"
)

func TestExcerptFoldsForeignStackFramesAndKeepsTheLearnersLine(t *testing.T) {
	lines := []string{
		"2026-12-02T12:00:00Z\tERROR\tReconciler error\t{\"controller\": \"edgeroute\", \"error\": \"boom\"}",
		"sigs.k8s.io/controller-runtime/pkg/internal/controller.(*Controller[...]).reconcileHandler",
		"\t/root/go/pkg/mod/sigs.k8s.io/controller-runtime@v0.25.2/pkg/internal/controller/controller.go:474",
		"sigs.k8s.io/controller-runtime/pkg/internal/controller.(*Controller[...]).processNextWorkItem",
		"\t/root/go/pkg/mod/sigs.k8s.io/controller-runtime@v0.25.2/pkg/internal/controller/controller.go:421",
		"panic: assignment to entry in nil map",
		"goroutine 7 [running]:",
		"github.com/10xdev/gw10/stepNN/internal/controller.(*EdgeRouteReconciler).Reconcile(...)",
		"\t/work/main/stepNN/internal/controller/edgeroute_controller.go:42 +0x1d",
		"sigs.k8s.io/controller-runtime/pkg/internal/controller.(*Controller[...]).Reconcile",
		"\t/root/go/pkg/mod/sigs.k8s.io/controller-runtime@v0.25.2/pkg/internal/controller/controller.go:216",
	}
	got := strings.Join(Excerpt(lines), "\n")
	for _, want := range []string{
		"ERROR\tReconciler error", "… 4 stack frame lines folded", "panic: assignment to entry in nil map",
		"edgeroute_controller.go:42", "(*EdgeRouteReconciler).Reconcile", "… 2 stack frame lines folded",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the excerpt lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "controller.go:474") {
		t.Errorf("a controller-runtime frame was not folded:\n%s", got)
	}
}

func TestShortenCutsLongLinesAndExpandsTabs(t *testing.T) {
	if got := Shorten("a\tb", 10); got != "a b" {
		t.Errorf("Shorten = %q", got)
	}
	if got := Shorten(strings.Repeat("x", 20), 10); len([]rune(got)) != 10 || !strings.HasSuffix(got, "…") {
		t.Errorf("Shorten = %q", got)
	}
}

// TestExcerptKeepsALoneErrorLine: a line that is no stack frame (main's
// own error before it exits, which matches no log record's start) is kept,
// never folded as a frame; the frames of a panic after it still are.
func TestExcerptKeepsALoneErrorLine(t *testing.T) {
	lone := "manager: creating manager: unable to find leader election namespace: not running in-cluster, please specify LeaderElectionNamespace"
	if got := Excerpt([]string{"--- controller started (pid 7) ---", lone, "--- controller exited: exit status 1 ---"}); !slices.Contains(got, lone) {
		t.Errorf("the lone error line was not kept: %q", got)
	}
	for _, frame := range []string{
		"sigs.k8s.io/controller-runtime/pkg/internal/controller.(*Controller[...]).reconcileHandler",
		"\t/root/go/pkg/mod/sigs.k8s.io/controller-runtime@v0.25.2/pkg/internal/controller/controller.go:474",
		"main.main()",
		"k8s.io/client-go/tools/leaderelection.(*LeaderElector).Run(0xc000123, {0x1a2b3c, 0xc0004})",
		"created by k8s.io/client-go/tools/cache.(*Reflector).Run in goroutine 12",
	} {
		if !stackFrame(frame) {
			t.Errorf("%q is a stack frame", frame)
		}
	}
	for _, line := range []string{lone, "error: exit status 1", "Error: unknown flag: --leader-elect"} {
		if stackFrame(line) {
			t.Errorf("%q was taken for a stack frame", line)
		}
	}
}
