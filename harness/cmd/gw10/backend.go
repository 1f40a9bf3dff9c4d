package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/10xdev/gw10/harness/cluster"
	"github.com/10xdev/gw10/harness/runner"
)

// selectBackend sets how the run gets its cluster. kind and existing are
// checked before anything is built, so a missing engine or a refused
// context fails fast.
func selectBackend(ctx context.Context, f checkFlags, opts *runner.Options) error {
	switch f.cluster {
	case "envtest", "":
		return nil // the runner starts its own
	case "kind":
		return kindBackend(ctx, f, opts) // kind.go, or checkonly.go in bin/gw10
	case "existing":
		var allowed []string
		if f.allowContext != "" {
			allowed = strings.Split(f.allowContext, ",")
		}
		// Load once now to refuse a foreign context before building anything.
		if _, err := cluster.NewExistingBackend(f.kubeContext, allowed); err != nil {
			return err
		}
		opts.NewBackend = func(context.Context, string, io.Writer) (cluster.Backend, error) {
			return cluster.NewExistingBackend(f.kubeContext, allowed)
		}
		return nil
	default:
		return fmt.Errorf("unknown cluster backend %q: use envtest, kind or existing", f.cluster)
	}
}
