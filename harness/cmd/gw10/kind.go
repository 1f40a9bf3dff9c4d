//go:build !gw10checkonly

package main

import (
	"context"
	"io"
	"path/filepath"

	"github.com/10xdev/gw10/harness/cluster"
	"github.com/10xdev/gw10/harness/cluster/kindbackend"
	"github.com/10xdev/gw10/harness/runner"
)

// kindBackend sets the run on a kind cluster. The engine and the config are
// checked before anything is built, so a missing engine fails fast.
func kindBackend(ctx context.Context, f checkFlags, opts *runner.Options) error {
	if _, err := cluster.FindEngine(ctx); err != nil {
		return err
	}
	config := filepath.Join(opts.Root, kindbackend.KindConfigPath)
	if _, err := kindbackend.LoadKindConfig(config); err != nil {
		return err
	}
	opts.NewBackend = func(ctx context.Context, _ string, progress io.Writer) (cluster.Backend, error) {
		return kindbackend.NewKindBackend(ctx, kindbackend.KindOptions{
			Name: f.kindName, ConfigPath: config, Keep: f.keep, Progress: progress,
		})
	}
	return nil
}

// fullCommands are the subcommands only bin/gw10-full has (see checkonly.go).
func fullCommands() map[string]command {
	return map[string]command{
		"bench":      {"measure how a step's controller scales with the number of its routes, against the API server's own limit", runBench},
		"kind-image": {"build the kind node image from the Go module proxy and Debian packages (no registry needed)", runKindImage},
	}
}
