//go:build !gw10checkonly

package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/10xdev/gw10/harness/kindimage"
)

func runKindImage(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("kind-image", flag.ContinueOnError)
	choose := fs.Bool("choose", false, "print the node image kind should use here (kind's own where a registry serves it or the engine has it, else the local one, built if missing); progress goes to stderr")
	rebuild := fs.Bool("rebuild", false, "make a new image even when the current one is up to date (component builds stay cached)")
	mirror := fs.String("mirror", kindimage.DefaultMirror, "Debian mirror for debootstrap")
	workDir := fs.String("work-dir", "", "where the builds are kept between runs (default: the user cache dir's gw10/kind-image/<version>)")
	if err := fs.Parse(args); err != nil {
		return exitError{2}
	}
	if *choose {
		image, err := kindimage.NodeImage(ctx, os.Stderr)
		if err != nil {
			return err
		}
		fmt.Println(image)
		return nil
	}
	res, err := kindimage.Build(ctx, kindimage.Options{WorkDir: *workDir, Mirror: *mirror, Progress: os.Stdout, Rebuild: *rebuild})
	if err != nil {
		return err
	}
	if res.Built {
		fmt.Printf("kind node image: %s\n", res.Image)
	}
	return nil
}
