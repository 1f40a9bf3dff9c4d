package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/10xdev/gw10/harness/assets"
)

func runAssets(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("assets", flag.ContinueOnError)
	printPath := fs.Bool("print-path", false, "print only the directory (progress goes to stderr)")
	noDownload := fs.Bool("no-download", false, "skip the setup-envtest download and build from source when missing")
	if err := fs.Parse(args); err != nil {
		return exitError{2}
	}
	var progress io.Writer = os.Stdout
	if *printPath {
		progress = os.Stderr
	}
	res, err := assets.Ensure(ctx, assets.Options{Progress: progress, NoDownload: *noDownload})
	if err != nil {
		return err
	}
	if *printPath {
		fmt.Println(res.Dir)
		return nil
	}
	fmt.Printf("envtest binaries %s (%s): %s\n", assets.KubernetesVersion, res.Source, res.Dir)
	return nil
}
