package kindimage

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"

	"sigs.k8s.io/kind/pkg/apis/config/defaults"
)

// pullTimeout bounds the one docker pull that tells whether a registry
// serves kind's own node image.
const pullTimeout = 3 * time.Minute

// NodeImage returns the node image kind should use here: the locally built
// Image when the engine has it; kind's default image when the engine has it
// or can pull it; otherwise Image, built now (once; it says so).
func NodeImage(ctx context.Context, progress io.Writer) (string, error) {
	return chooser{have: haveImage, pull: pullImage, build: func(ctx context.Context) error {
		_, err := Build(ctx, Options{Progress: progress})
		return err
	}}.choose(ctx, progress)
}

// chooser holds the engine operations NodeImage needs, so that tests can
// stand in for them.
type chooser struct {
	have  func(ctx context.Context, image string) bool
	pull  func(ctx context.Context, image string) error
	build func(ctx context.Context) error
}

func (c chooser) choose(ctx context.Context, progress io.Writer) (string, error) {
	if c.have(ctx, Image) {
		fmt.Fprintf(progress, "using the locally built kind node image %s\n", Image)
		return Image, nil
	}
	if c.have(ctx, defaults.Image) {
		return defaults.Image, nil
	}
	err := c.pull(ctx, defaults.Image)
	if err == nil {
		return defaults.Image, nil
	}
	if ctx.Err() != nil {
		return "", ctx.Err()
	}
	fmt.Fprintf(progress, "no container registry serves kind's node image (%v); building %s locally from the Go module proxy and Debian packages (make kind-image: once, about an hour on 2 cores)\n", err, Image)
	if err := c.build(ctx); err != nil {
		return "", fmt.Errorf("building the kind node image: %w", err)
	}
	return Image, nil
}

func haveImage(ctx context.Context, image string) bool {
	return exec.CommandContext(ctx, "docker", "image", "inspect", image).Run() == nil
}

func pullImage(ctx context.Context, image string) error {
	ctx, cancel := context.WithTimeout(ctx, pullTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, "docker", "pull", image).CombinedOutput()
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("docker pull %s: no answer in %s", image, pullTimeout)
		}
		return fmt.Errorf("docker pull: %s", lastLines(strings.TrimSpace(string(out)), 1))
	}
	return nil
}
