package main

import (
	"context"
	"fmt"

	"github.com/10xdev/gw10/harness/runner"
)

// selectBackend sets how the run gets its cluster.
func selectBackend(_ context.Context, f checkFlags, opts *runner.Options) error {
	switch f.cluster {
	case "envtest", "":
		return nil // the runner starts its own
	default:
		return fmt.Errorf("unknown cluster backend %q: use envtest, kind or existing", f.cluster)
	}
}
