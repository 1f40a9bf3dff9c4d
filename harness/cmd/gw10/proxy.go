package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/10xdev/gw10/harness/proxy"
)

// runProxy serves the stand-in proxy on a fixed address until Ctrl-C, so that
// a controller run by hand (make run ARGS=--dataplane-url=...) has a data
// plane that keeps a table across its restarts: GET /v1/routes shows it.
func runProxy(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("proxy", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:9901", "the address to serve the proxy admin API on")
	if err := fs.Parse(args); err != nil {
		return exitError{2}
	}
	p, err := proxy.StartOn(*listen)
	if err != nil {
		return err
	}
	fmt.Printf("stand-in proxy at %s: run the controller with ARGS=\"--dataplane-url=%s\"; "+
		"curl %s/v1/routes shows its table. Each push, withdraw and listing it answers is logged below. Ctrl-C stops it.\n", p.URL(), p.URL(), p.URL())
	p.SetLog(os.Stdout)
	<-ctx.Done()
	return p.Close()
}
