package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/10xdev/gw10/harness/devcluster"
	"github.com/10xdev/gw10/harness/steps"
)

func clusterDirFlag(fs *flag.FlagSet) *string {
	return fs.String("dir", devcluster.Dir("."), "state directory of the dev cluster")
}

func runClusterUp(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("cluster-up", flag.ContinueOnError)
	dir := clusterDirFlag(fs)
	if err := fs.Parse(args); err != nil {
		return exitError{2}
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("locating the gw10 binary: %w", err)
	}
	return devcluster.Up(ctx, *dir, self, steps.Default(), os.Stdout)
}

func runClusterDown(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("cluster-down", flag.ContinueOnError)
	dir := clusterDirFlag(fs)
	if err := fs.Parse(args); err != nil {
		return exitError{2}
	}
	return devcluster.Down(ctx, *dir, os.Stdout)
}

func runClusterServe(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("cluster-serve", flag.ContinueOnError)
	dir := clusterDirFlag(fs)
	if err := fs.Parse(args); err != nil {
		return exitError{2}
	}
	return devcluster.Serve(ctx, *dir)
}
