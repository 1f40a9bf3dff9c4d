package devcluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/10xdev/gw10/harness/cluster"
)

// Serve runs the control plane in the foreground until ctx is cancelled
// (SIGTERM from Down), writing the admin kubeconfig once it is ready.
func Serve(ctx context.Context, dir string) error {
	cp, err := cluster.StartEnvtest(ctx, dir, os.Stdout)
	if err != nil {
		return err
	}
	defer func() {
		if err := cp.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}()
	admin, err := cp.AddUser("gw10-admin", "system:masters")
	if err != nil {
		return err
	}
	kc, err := cluster.Kubeconfig(admin, ContextName)
	if err != nil {
		return err
	}
	// Write then rename: Up treats the kubeconfig's presence as readiness.
	tmp := filepath.Join(dir, kubeconfigFile+".tmp")
	if err := os.WriteFile(tmp, kc, 0o600); err != nil {
		return fmt.Errorf("writing kubeconfig: %w", err)
	}
	if err := os.Rename(tmp, KubeconfigPath(dir)); err != nil {
		return fmt.Errorf("writing kubeconfig: %w", err)
	}
	fmt.Printf("dev cluster ready at %s\n", admin.Host)
	<-ctx.Done()
	fmt.Println("stopping dev cluster")
	return nil
}
