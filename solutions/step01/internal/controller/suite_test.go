package controller

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	netv1 "github.com/10xdev/gw10/solutions/step01/api/v1"
	"github.com/10xdev/gw10/solutions/step01/internal/dataplane"
)

// kubernetesVersion is the envtest binaries' version; the workbook's
// `make assets` puts them in setup-envtest's store.
const kubernetesVersion = "1.37.2"

// These are set once by TestMain and only read by the tests.
var (
	cfg       *rest.Config
	k8sClient client.WithWatch // direct, uncached: assertions never race a cache
	scheme    = k8sruntime.NewScheme()
)

func TestMain(m *testing.M) {
	os.Exit(runSuite(m))
}

func runSuite(m *testing.M) int {
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := netv1.AddToScheme(scheme); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	assets, err := assetsDir()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	testEnv := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join("..", "..", "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
		BinaryAssetsDirectory: assets,
	}
	cfg, err = testEnv.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting envtest:", err)
		return 1
	}
	defer func() {
		if err := testEnv.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping envtest:", err)
		}
	}()
	k8sClient, err = client.NewWithWatch(cfg, client.Options{Scheme: scheme})
	if err != nil {
		fmt.Fprintln(os.Stderr, "creating client:", err)
		return 1
	}
	return m.Run()
}

// assetsDir finds kube-apiserver and etcd: $KUBEBUILDER_ASSETS, else
// setup-envtest's store, where the workbook's `make assets` puts them.
func assetsDir() (string, error) {
	if dir := os.Getenv("KUBEBUILDER_ASSETS"); dir != "" {
		return dir, nil
	}
	storeDir, err := envtest.SetupEnvtestDefaultBinaryAssetsDirectory()
	if err != nil {
		return "", fmt.Errorf("locating setup-envtest's store: %w", err)
	}
	dir := filepath.Join(storeDir, kubernetesVersion+"-"+runtime.GOOS+"-"+runtime.GOARCH)
	if _, err := os.Stat(filepath.Join(dir, "kube-apiserver")); err != nil {
		return "", fmt.Errorf("envtest binaries %s are not in %s: run `make assets` at the repository root first", kubernetesVersion, dir)
	}
	return dir, nil
}

// newNamespace gives each test its own namespace.
func newNamespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "er-test-"}}
	if err := k8sClient.Create(context.Background(), ns); err != nil {
		t.Fatalf("creating namespace: %v", err)
	}
	t.Cleanup(func() { _ = k8sClient.Delete(context.Background(), ns) })
	return ns.Name
}

// fakeDataPlane is the in-test proxy: it keeps a route table and can be told
// to NACK.
type fakeDataPlane struct {
	mu     sync.Mutex
	routes map[types.NamespacedName]dataplane.Route
	nack   string // non-empty: NACK every push with this reason
	calls  int
}

func newFakeDataPlane() *fakeDataPlane {
	return &fakeDataPlane{routes: map[types.NamespacedName]dataplane.Route{}}
}

func (f *fakeDataPlane) Program(_ context.Context, er *netv1.EdgeRoute) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if f.nack != "" {
		return &dataplane.NACKError{StatusCode: 422, Reason: f.nack}
	}
	f.routes[client.ObjectKeyFromObject(er)] = dataplane.RouteFor(er)
	return nil
}

func (f *fakeDataPlane) Remove(_ context.Context, key types.NamespacedName) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	delete(f.routes, key)
	return nil
}

func (f *fakeDataPlane) Routes(context.Context) ([]types.NamespacedName, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	keys := make([]types.NamespacedName, 0, len(f.routes))
	for k := range f.routes {
		keys = append(keys, k)
	}
	return keys, nil
}

func (f *fakeDataPlane) setNACK(reason string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nack = reason
}

func (f *fakeDataPlane) route(key types.NamespacedName) (dataplane.Route, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r, ok := f.routes[key]
	return r, ok
}

func (f *fakeDataPlane) callCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}
