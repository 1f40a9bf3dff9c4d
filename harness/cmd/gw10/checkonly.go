//go:build gw10checkonly

package main

import (
	"context"
	"fmt"

	"github.com/10xdev/gw10/harness/runner"
)

// bin/gw10, which make check and every learner's target build, is built
// with -tags gw10checkonly: it leaves out what checking does not need — the
// bench and its charts (gonum/plot), the kind backend and the kind node
// image builder — so a fresh machine's first make check compiles less.
// bin/gw10-full (make bench, make kind-image, make check CLUSTER=kind, and
// go run ./harness/cmd/gw10) has them.

// fullOnly says which build has a subcommand and which make target builds it.
func fullOnly(what, target string) error {
	return fmt.Errorf("%s is not in this build of gw10 (bin/gw10 is built for checking only): %s builds and runs bin/gw10-full, which has it", what, target)
}

func kindBackend(context.Context, checkFlags, *runner.Options) error {
	return fullOnly("the kind backend", "make check CLUSTER=kind")
}

func fullCommands() map[string]command {
	return map[string]command{
		"bench": {"(bin/gw10-full only: make bench) measure how a step's controller scales", func(context.Context, []string) error {
			return fullOnly("bench", "make bench")
		}},
		"kind-image": {"(bin/gw10-full only: make kind-image) build the kind node image", func(context.Context, []string) error {
			return fullOnly("kind-image", "make kind-image")
		}},
	}
}
