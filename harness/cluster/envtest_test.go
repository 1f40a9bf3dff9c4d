package cluster

import (
	"context"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/10xdev/gw10/harness/testenv"
)

func TestEnvtestStartsServesAndStopsCleanly(t *testing.T) {
	testenv.Needs(t, testenv.Cluster)
	g := NewWithT(t)
	ctx := context.Background()
	dir := t.TempDir()
	cp, err := StartEnvtest(ctx, dir, testWriter{t})
	g.Expect(err).NotTo(HaveOccurred())
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = cp.Stop()
		}
	})

	scheme := runtime.NewScheme()
	g.Expect(clientgoscheme.AddToScheme(scheme)).To(Succeed())
	g.Expect(apiextensionsv1.AddToScheme(scheme)).To(Succeed())
	c, err := client.New(cp.Config, client.Options{Scheme: scheme})
	g.Expect(err).NotTo(HaveOccurred())

	g.Expect(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "probe"}})).To(Succeed())
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.com",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptrTo(true)}},
			}},
		},
	}
	g.Expect(c.Create(ctx, crd)).To(Succeed())
	g.Eventually(func(g Gomega) {
		var got apiextensionsv1.CustomResourceDefinition
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(crd), &got)).To(Succeed())
		established := false
		for _, cond := range got.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				established = true
			}
		}
		g.Expect(established).To(BeTrue(), "CRD widgets.example.com is not Established: %+v", got.Status.Conditions)
	}, time.Minute, 100*time.Millisecond).Should(Succeed())

	// A user with no groups has no rights: the harness's controller identity
	// starts from this and gets exactly its ClusterRole.
	userCfg, err := cp.AddUser("nobody")
	g.Expect(err).NotTo(HaveOccurred())
	uc, err := client.New(userCfg, client.Options{Scheme: scheme})
	g.Expect(err).NotTo(HaveOccurred())
	var svcs corev1.ServiceList
	err = uc.List(ctx, &svcs)
	g.Expect(err).To(MatchError(ContainSubstring("forbidden")))

	pids, err := ProcessesUnder(dir)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(pids).To(HaveLen(2), "kube-apiserver and etcd should be found by their state dir")

	g.Expect(cp.Stop()).To(Succeed())
	stopped = true
	g.Eventually(func() ([]int, error) { return ProcessesUnder(dir) }, 30*time.Second, 100*time.Millisecond).Should(BeEmpty(), "processes left after Stop")
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(string(b))
	return len(b), nil
}

// TestAControlPlaneThatDidNotStartSaysWhatToDo: the learner's code has no
// part in it; the hint says so, with the load, and how to wait longer.
func TestAControlPlaneThatDidNotStartSaysWhatToDo(t *testing.T) {
	h := busyHint()
	for _, want := range []string{"nothing in your code starts the control plane", "load average", "run make check again", "KUBEBUILDER_CONTROLPLANE_START_TIMEOUT="} {
		if !strings.Contains(h, want) {
			t.Errorf("the hint %q does not say %q", h, want)
		}
	}
}
