package cluster

import (
	"bytes"
	"context"
	"fmt"
	"github.com/10xdev/gw10/harness/words"
	"os/exec"
	"strings"
	"time"
)

// Engine is a container engine kind can use.
type Engine struct {
	Name string // docker or podman
}

// engineTimeout bounds `docker info`: a daemon that does not answer is as
// good as none.
const engineTimeout = 15 * time.Second

// lookPath and run are replaced in tests.
type engineProbe struct {
	lookPath func(string) (string, error)
	info     func(ctx context.Context, engine string) (string, error)
}

var hostProbe = engineProbe{
	lookPath: exec.LookPath,
	info: func(ctx context.Context, engine string) (string, error) {
		var stderr bytes.Buffer
		cmd := exec.CommandContext(ctx, engine, "info")
		cmd.Stderr = &stderr
		err := cmd.Run()
		return strings.TrimSpace(stderr.String()), err
	},
}

// FindEngine returns a running container engine, or an error that says what
// is missing and what to do instead.
func FindEngine(ctx context.Context) (Engine, error) { return hostProbe.find(ctx) }

func (p engineProbe) find(ctx context.Context) (Engine, error) {
	var installed []string
	var lastErr string
	for _, name := range []string{"docker", "podman"} {
		if _, err := p.lookPath(name); err != nil {
			continue
		}
		installed = append(installed, name)
		ictx, cancel := context.WithTimeout(ctx, engineTimeout)
		stderr, err := p.info(ictx, name)
		cancel()
		if err == nil {
			return Engine{Name: name}, nil
		}
		lastErr = words.FirstLine(stderr)
	}
	const instead = "start one, or use the envtest control plane (the default: make check, make cluster-up)"
	if len(installed) == 0 {
		return Engine{}, fmt.Errorf("kind needs a container engine, and neither Docker nor Podman is installed; %s", instead)
	}
	msg := fmt.Sprintf("kind needs a running container engine: %s is installed but not running", strings.Join(installed, " and "))
	if lastErr != "" {
		msg += fmt.Sprintf(" (%s info: %s)", installed[len(installed)-1], lastErr)
	}
	return Engine{}, fmt.Errorf("%s; %s", msg, instead)
}
