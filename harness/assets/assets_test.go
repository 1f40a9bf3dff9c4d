package assets

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/tools/setup-envtest/store"

	"github.com/10xdev/gw10/harness/testenv"
)

// fakeBinaries writes executable stand-ins for kube-apiserver and etcd.
func fakeBinaries(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range Binaries {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\necho "+name+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

func itemDir(storeDir string) string {
	return filepath.Join(storeDir, "k8s", KubernetesVersion+"-"+runtime.GOOS+"-"+runtime.GOARCH)
}

func noEnv(string) string { return "" }

func TestEnsureUsesKubebuilderAssetsWhenComplete(t *testing.T) {
	assetsDir := t.TempDir()
	fakeBinaries(t, assetsDir)
	res, err := Ensure(context.Background(), Options{
		StoreDir: t.TempDir(), NoDownload: true, NoBuild: true,
		Env: func(k string) string {
			if k == "KUBEBUILDER_ASSETS" {
				return assetsDir
			}
			return ""
		},
	})
	if err != nil {
		t.Fatalf("Ensure: %v", err)
	}
	if res.Dir != assetsDir || res.Source != FromEnv {
		t.Fatalf("got %+v, want %s from %s", res, assetsDir, FromEnv)
	}
}

func TestEnsureIgnoresIncompleteKubebuilderAssetsAndUsesStore(t *testing.T) {
	incomplete := t.TempDir() // no binaries at all
	storeDir := t.TempDir()
	fakeBinaries(t, itemDir(storeDir))
	var progress bytes.Buffer
	res, err := Ensure(context.Background(), Options{
		StoreDir: storeDir, NoDownload: true, NoBuild: true, Progress: &progress,
		Env: func(k string) string {
			if k == "KUBEBUILDER_ASSETS" {
				return incomplete
			}
			return ""
		},
	})
	if err != nil {
		t.Fatalf("Ensure: %v", err)
	}
	if res.Source != FromStore || res.Dir != itemDir(storeDir) {
		t.Fatalf("got %+v, want the store entry", res)
	}
	if !strings.Contains(progress.String(), "ignoring KUBEBUILDER_ASSETS") {
		t.Fatalf("progress does not say why KUBEBUILDER_ASSETS was ignored:\n%s", progress.String())
	}
}

func TestEnsureFailsClearlyWhenNothingIsAvailable(t *testing.T) {
	storeDir := t.TempDir()
	var progress bytes.Buffer
	_, err := Ensure(context.Background(), Options{
		StoreDir: storeDir, NoBuild: true, Env: noEnv, Progress: &progress,
		IndexURL: "http://127.0.0.1:1/index.yaml", // nothing listens on port 1
	})
	if err == nil || !strings.Contains(err.Error(), "building is disabled") {
		t.Fatalf("want an error saying the binaries are missing, got %v", err)
	}
	if !strings.Contains(progress.String(), "download unavailable") {
		t.Fatalf("progress does not report the failed download:\n%s", progress.String())
	}
	if _, err := os.Stat(itemDir(storeDir)); !os.IsNotExist(err) {
		t.Fatalf("a failed attempt left %s behind", itemDir(storeDir))
	}
}

func TestEnsureRejectsNonConcreteVersion(t *testing.T) {
	_, err := Ensure(context.Background(), Options{Version: "1.37", StoreDir: t.TempDir(), Env: noEnv, NoDownload: true, NoBuild: true})
	if err == nil || !strings.Contains(err.Error(), "not a concrete") {
		t.Fatalf("want a version error, got %v", err)
	}
}

func TestEnsureWaitsForTheStoreLock(t *testing.T) {
	storeDir := t.TempDir()
	fakeBinaries(t, itemDir(storeDir))
	held, err := acquireLock(context.Background(), filepath.Join(storeDir, ".gw10.lock"), &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	var progress bytes.Buffer
	_, err = Ensure(ctx, Options{StoreDir: storeDir, Env: noEnv, NoDownload: true, NoBuild: true, Progress: &progress})
	if err == nil || !strings.Contains(err.Error(), "waiting for lock") {
		t.Fatalf("want a lock wait error while another holder has the lock, got %v", err)
	}
	if !strings.Contains(progress.String(), "waiting for another process") {
		t.Fatalf("progress does not say it is waiting:\n%s", progress.String())
	}
	held.release()
	if _, err := Ensure(context.Background(), Options{StoreDir: storeDir, Env: noEnv, NoDownload: true, NoBuild: true}); err != nil {
		t.Fatalf("Ensure after the lock was released: %v", err)
	}
}

func TestConcurrentEnsureCallsAgree(t *testing.T) {
	storeDir := t.TempDir()
	fakeBinaries(t, itemDir(storeDir))
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := Ensure(context.Background(), Options{StoreDir: storeDir, Env: noEnv, NoDownload: true, NoBuild: true})
			if err == nil && res.Dir != itemDir(storeDir) {
				err = os.ErrInvalid
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("concurrent Ensure: %v", err)
		}
	}
}

func TestSideloadIsAtomic(t *testing.T) {
	storeDir := t.TempDir()
	item, err := storeItem(KubernetesVersion)
	if err != nil {
		t.Fatal(err)
	}
	ctx := logr.NewContext(context.Background(), logr.Discard())
	st := store.NewAt(storeDir)
	if err := st.Initialize(ctx); err != nil {
		t.Fatal(err)
	}

	// A corrupt archive fails and leaves no store entry.
	bad := filepath.Join(t.TempDir(), "bad.tar.gz")
	if err := os.WriteFile(bad, []byte("not a gzip stream"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := sideload(ctx, st, item, bad); err == nil {
		t.Fatal("sideloading a corrupt archive succeeded")
	}
	if has, _ := st.Has(item); has {
		t.Fatal("a failed sideload left a store entry behind")
	}

	// A good archive installs both binaries where setup-envtest looks.
	bins := t.TempDir()
	fakeBinaries(t, bins)
	var buf bytes.Buffer
	if err := writeTarGz(&buf, bins, Binaries); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(t.TempDir(), "good.tar.gz")
	if err := os.WriteFile(good, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := sideload(ctx, st, item, good); err != nil {
		t.Fatalf("sideload: %v", err)
	}
	if err := hasBinaries(itemDir(storeDir)); err != nil {
		t.Fatalf("after sideload: %v", err)
	}
	leftovers, _ := filepath.Glob(filepath.Join(storeDir, ".gw10-sideload-*"))
	if len(leftovers) > 0 {
		t.Fatalf("scratch stores left behind: %v", leftovers)
	}
}

func TestGoModPinsEveryStagingModule(t *testing.T) {
	c := component{name: "kube-apiserver", module: "k8s.io/kubernetes", version: "v1.37.2",
		replaces: map[string]string{"k8s.io/api": "v0.37.2", "k8s.io/apimachinery": "v0.37.2"}}
	got := c.goMod()
	for _, want := range []string{
		"require k8s.io/kubernetes v1.37.2",
		"\tk8s.io/api => k8s.io/api v0.37.2\n",
		"\tk8s.io/apimachinery => k8s.io/apimachinery v0.37.2\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("go.mod lacks %q:\n%s", want, got)
		}
	}
}

// TestEnsureRealBinaries obtains the real binaries into setup-envtest's
// default store (building them from source on a fresh machine: minutes, with
// progress on the test log) and checks they are the pinned version.
func TestEnsureRealBinaries(t *testing.T) {
	testenv.Needs(t, testenv.Cluster) // obtains the real binaries
	res, err := Ensure(context.Background(), Options{Progress: testWriter{t}})
	if err != nil {
		t.Fatalf("Ensure: %v", err)
	}
	out, err := exec.Command(filepath.Join(res.Dir, "kube-apiserver"), "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("kube-apiserver --version: %v: %s", err, out)
	}
	if got := strings.TrimSpace(string(out)); got != "Kubernetes v"+KubernetesVersion {
		t.Fatalf("kube-apiserver --version = %q, want Kubernetes v%s", got, KubernetesVersion)
	}
	out, err = exec.Command(filepath.Join(res.Dir, "etcd"), "--version").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "etcd Version: "+strings.TrimPrefix(EtcdVersion, "v")) {
		t.Fatalf("etcd --version: %v: %s", err, out)
	}

	// The second call is answered from the store.
	res2, err := Ensure(context.Background(), Options{})
	if err != nil || res2.Dir != res.Dir {
		t.Fatalf("second Ensure = %+v, %v; want %s", res2, err, res.Dir)
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(b), "\n"))
	return len(b), nil
}

// TestFailedBuildSaysWhyAndInstallsNothing asks for a Kubernetes version the
// module proxy does not serve: the build fails at once, the error says why,
// and the store gets no entry.
func TestFailedBuildSaysWhyAndInstallsNothing(t *testing.T) {
	testenv.Long(t, "asks the Go module proxy")
	storeDir := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // the throwaway modules go there
	_, err := Ensure(context.Background(), Options{
		Version: "1.0.99", StoreDir: storeDir, NoDownload: true, Env: noEnv,
	})
	if err == nil || !strings.Contains(err.Error(), "k8s.io/kubernetes@v1.0.99") {
		t.Fatalf("want an error naming the module that could not be had, got %v", err)
	}
	entries, _ := filepath.Glob(filepath.Join(storeDir, "k8s", "*"))
	if len(entries) > 0 {
		t.Fatalf("a failed build left %v in the store", entries)
	}
}
