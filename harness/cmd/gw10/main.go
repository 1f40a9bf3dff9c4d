// Command gw10 is the workbook's harness: it provides the envtest binaries,
// runs the dev cluster, and runs the acceptance checks against a step.
package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/signal"
	"sort"
	"syscall"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/10xdev/gw10/harness/report"
	"github.com/10xdev/gw10/harness/sandbox"
)

// command is one subcommand of gw10.
type command struct {
	summary string
	run     func(ctx context.Context, args []string) error
}

func commands() map[string]command {
	cmds := map[string]command{
		"assets":        {"obtain the envtest binaries (kube-apiserver, etcd) into setup-envtest's store", runAssets},
		"cluster-up":    {"start the dev control plane in the background and print its KUBECONFIG", runClusterUp},
		"cluster-down":  {"stop the dev control plane and remove its data", runClusterDown},
		"cluster-serve": {"(internal) run the dev control plane in the foreground", runClusterServe},
		"check":         {"run the acceptance checks against a step", runCheckCmd},
		"watch":         {"run the checks again on every saved change to the step, on a control plane kept up between runs", runWatch},
		"grade":         {"grade a submission's learner module in a pristine upstream tree (--submission; none: feedback on this checkout), write reports/", gradeCommand},
		"gradebook":     {"grade a roster of submissions (--roster; each as grade does, those graded before by this grader skipped) into gradebook.csv and .html; merge <dirs>: the gradebook of grades made elsewhere", gradebookCommand},
		"sketch":        {"save the card's sketch over the file of the learner's module it replaces (--force: over uncommitted edits too)", runSketch},
		"skeleton":      {"regenerate each step's learner module from its solution (overwrites it)", runSkeleton},
		"diff":          {"show the learner's module (--step, or --submission's at --ref) against the solution, or --against skeleton: what the learner changed", runDiff},
		"template":      {"write a learner's copy of the workbook (no solutions/, no answer key) as a new git repository", runTemplate},
		"hint":          {"print the longer hint of a check", runHint},
		"proxy":         {"run the stand-in proxy (the data plane the checks use) for the hand-run tasks; Ctrl-C stops it", runProxy},
		"mutants":       {"score the checks against mutants generated in the solution's exercise regions (--sample N --seed S; --list)", runMutants},
		"steps":         {"list the course's steps, one a line (--field name, dir or solution), for the Makefile and scripts", runSteps},
	}
	maps.Copy(cmds, fullCommands())
	return cmds
}

// exitError carries a specific exit status out of a subcommand.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

func main() {
	// The grade's sandbox re-executes this binary to drop to its user.
	sandbox.MaybeHelper()
	cmds := commands()
	if len(os.Args) < 2 || os.Args[1] == "-h" || os.Args[1] == "--help" || os.Args[1] == "help" {
		usage(cmds)
		if len(os.Args) < 2 {
			os.Exit(2)
		}
		return
	}
	cmd, ok := cmds[os.Args[1]]
	if !ok {
		fmt.Fprintf(os.Stderr, "gw10: unknown command %q\n\n", os.Args[1])
		usage(cmds)
		os.Exit(2)
	}
	// controller-runtime's packages log through this; the harness reports
	// through its own output.
	ctrllog.SetLogger(logr.Discard())
	// Ctrl-C and SIGTERM cancel the context; every subcommand cleans up on it.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := cmd.run(ctx, os.Args[2:])
	stop()
	var ee exitError
	switch {
	case errors.As(err, &ee):
		os.Exit(ee.code)
	case err != nil:
		// An error may quote what a submission chose (a file name, git's
		// message about its repository): text, never terminal commands.
		fmt.Fprintf(report.PlainText(os.Stderr), "gw10 %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
}

func usage(cmds map[string]command) {
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	fmt.Fprintln(os.Stderr, "usage: gw10 <command> [flags]\n\ncommands:")
	for _, n := range names {
		fmt.Fprintf(os.Stderr, "  %-14s %s\n", n, cmds[n].summary)
	}
}

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
