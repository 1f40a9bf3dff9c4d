package apifront

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/10xdev/gw10/harness/cluster"
)

func TestParseReadsTheVerbAndTheResource(t *testing.T) {
	for _, tc := range []struct {
		method, url string
		want        Request
	}{
		{"GET", "/api/v1/namespaces/shop/services/web", Request{Verb: "get", GroupVersionResource: schema.GroupVersionResource{Version: "v1", Resource: "services"}, Namespace: "shop", Name: "web"}},
		{"GET", "/api/v1/namespaces/shop/services", Request{Verb: "list", GroupVersionResource: schema.GroupVersionResource{Version: "v1", Resource: "services"}, Namespace: "shop"}},
		{"GET", "/api/v1/services?watch=true&resourceVersion=5", Request{Verb: "watch", GroupVersionResource: schema.GroupVersionResource{Version: "v1", Resource: "services"}}},
		{"PUT", "/apis/net.10xdev.io/v1/namespaces/shop/edgeroutes/web/status", Request{Verb: "update", GroupVersionResource: schema.GroupVersionResource{Group: "net.10xdev.io", Version: "v1", Resource: "edgeroutes"}, Namespace: "shop", Name: "web", Subresource: "status"}},
		{"PATCH", "/apis/net.10xdev.io/v1/namespaces/shop/edgeroutes/web", Request{Verb: "patch", GroupVersionResource: schema.GroupVersionResource{Group: "net.10xdev.io", Version: "v1", Resource: "edgeroutes"}, Namespace: "shop", Name: "web"}},
		{"POST", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases", Request{Verb: "create", GroupVersionResource: schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}, Namespace: "kube-system"}},
		{"DELETE", "/api/v1/namespaces/shop/configmaps", Request{Verb: "deletecollection", GroupVersionResource: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Namespace: "shop"}},
		{"GET", "/api/v1/namespaces/shop", Request{Verb: "get", GroupVersionResource: schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, Name: "shop"}},
		{"PUT", "/api/v1/namespaces/shop/status", Request{Verb: "update", GroupVersionResource: schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, Name: "shop", Subresource: "status"}},
		{"GET", "/apis/net.10xdev.io/v1", Request{Verb: "get", Path: "/apis/net.10xdev.io/v1"}},
		{"GET", "/version", Request{Verb: "get", Path: "/version"}},
	} {
		got := parse(httptest.NewRequest(tc.method, tc.url, nil))
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s %s:\n  got  %+v\n  want %+v", tc.method, tc.url, got, tc.want)
		}
	}
}

// world is a control plane with a kind whose status is a subresource, and
// a front before it with an identity of its own.
type world struct {
	front *Front
	admin client.Client // straight to the API server
	via   client.WithWatch
	ns    string
}

var widgets = schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}

func startWorld(t *testing.T) *world {
	t.Helper()
	ctx := context.Background()
	cp, err := cluster.StartEnvtest(ctx, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cp.Stop() })
	user, err := cp.AddUser("front-test-user", "system:masters")
	if err != nil {
		t.Fatal(err)
	}
	f, err := Start(Options{Upstream: user, Primary: schema.GroupResource{Group: widgets.Group, Resource: "widgets"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })

	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := apiextensionsv1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	admin, err := client.New(cp.Config, client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	cfg := f.Config()
	cfg.UserAgent = "front-test"
	via, err := client.NewWithWatch(cfg, client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: widgets.Group,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptrTo(true)}},
			}},
		},
	}
	if err := admin.Create(ctx, crd); err != nil {
		t.Fatal(err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "front-"}}
	if err := admin.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	w := &world{front: f, admin: admin, via: via, ns: ns.Name}
	// The CRD is served once established: create a widget until it is.
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := admin.Create(ctx, w.widget("probe"), client.DryRunAll)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the Widget CRD is not served: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return w
}

func ptrTo[T any](v T) *T { return &v }

func (w *world) widget(name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(widgets)
	u.SetNamespace(w.ns)
	u.SetName(name)
	return u
}

// TestTheFrontForwardsRecordsStreamsAndInjects: a client with no
// credentials of its own reaches the API server through the front as the
// front's identity; every request is recorded with its verb, resource and
// answer, a status write with the conditions it stored; a watch streams
// events as they happen; faults answer in the API server's place, then go.
func TestTheFrontForwardsRecordsStreamsAndInjects(t *testing.T) {
	w := startWorld(t)
	ctx := context.Background()

	t.Run("it forwards as its identity", func(t *testing.T) {
		review := &authenticationv1.SelfSubjectReview{}
		if err := w.via.Create(ctx, review); err != nil {
			t.Fatal(err)
		}
		if got := review.Status.UserInfo.Username; got != "front-test-user" {
			t.Fatalf("the API server saw the client as %q, want the front's identity front-test-user", got)
		}
	})

	t.Run("a watch streams through it", func(t *testing.T) {
		wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		watcher, err := w.via.Watch(wctx, &corev1.ConfigMapList{}, client.InNamespace(w.ns))
		if err != nil {
			t.Fatal(err)
		}
		defer watcher.Stop()
		time.Sleep(200 * time.Millisecond) // the watch open before the change
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: "streamed"}}
		sent := time.Now()
		if err := w.admin.Create(ctx, cm); err != nil {
			t.Fatal(err)
		}
		select {
		case ev := <-watcher.ResultChan():
			if ev.Type != watch.Added {
				t.Fatalf("the watch delivered %s %+v, want ADDED", ev.Type, ev.Object)
			}
			if d := time.Since(sent); d > 5*time.Second {
				t.Errorf("the event took %s through the front: it must stream, not wait for the answer's end", d)
			}
		case <-wctx.Done():
			t.Fatal("the watch delivered nothing within 20s: the front holds a watch's events back")
		}
	})

	t.Run("a status write is recorded with what it stored", func(t *testing.T) {
		u := w.widget("rec")
		if err := w.via.Create(ctx, u); err != nil {
			t.Fatal(err)
		}
		_ = unstructured.SetNestedSlice(u.Object, []any{map[string]any{
			"type": "Ready", "status": "True", "reason": "Fine", "message": "all good",
			"observedGeneration": int64(1), "lastTransitionTime": "2026-01-01T00:00:00Z"}}, "status", "conditions")
		if err := w.via.Status().Update(ctx, u); err != nil {
			t.Fatal(err)
		}
		writes := w.front.StatusWrites(w.ns, "rec")
		if len(writes) != 1 {
			t.Fatalf("status writes of widget rec: %+v, want one", writes)
		}
		got := writes[0]
		if got.Verb != "update" || got.Code != 200 || got.Injected || got.ResourceVersion != u.GetResourceVersion() ||
			len(got.Conditions) != 1 || got.Conditions[0].Type != "Ready" || got.Conditions[0].ObservedGeneration != 1 ||
			got.UserAgent != "front-test" {
			t.Fatalf("the status write was recorded as %+v (resourceVersion now %s)", got, u.GetResourceVersion())
		}
		var verbs []string
		for _, r := range w.front.RequestsIn(w.ns) {
			if r.Resource == "widgets" {
				verbs = append(verbs, r.Verb+"/"+r.Subresource)
			}
		}
		if len(verbs) != 2 || verbs[0] != "create/" || verbs[1] != "update/status" {
			t.Fatalf("the widget's requests were recorded as %v, want [create/ update/status]", verbs)
		}
	})

	t.Run("faults answer in the API server's place, then go", func(t *testing.T) {
		u := w.widget("faulty")
		if err := w.via.Create(ctx, u); err != nil {
			t.Fatal(err)
		}
		w.front.Inject(Fault{Verbs: []string{"update", "patch"}, Resource: "widgets", Subresource: "status", Namespace: w.ns, Name: "faulty", Code: 409, Times: 1})
		_ = unstructured.SetNestedField(u.Object, "x", "status", "note")
		if err := w.via.Status().Update(ctx, u); !apierrors.IsConflict(err) {
			t.Fatalf("the first status write: %v, want a conflict", err)
		}
		if err := w.via.Status().Update(ctx, u); err != nil {
			t.Fatalf("the second status write, the fault used up: %v", err)
		}
		writes := w.front.StatusWrites(w.ns, "faulty")
		if len(writes) != 2 || !writes[0].Injected || writes[0].Code != 409 || writes[1].Injected || writes[1].Code != 200 {
			t.Fatalf("the writes were recorded as %+v", writes)
		}

		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: "web"},
			Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
		if err := w.admin.Create(ctx, svc); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			code int
			is   func(error) bool
		}{
			{500, apierrors.IsInternalError},
			{504, apierrors.IsTimeout},
			{0, func(err error) bool { _, isStatus := err.(apierrors.APIStatus); return err != nil && !isStatus }},
		} {
			remove := w.front.Inject(Fault{Verbs: []string{"get", "list"}, Resource: "services", Namespace: w.ns, Code: tc.code})
			for range 2 {
				err := w.via.Get(ctx, client.ObjectKeyFromObject(svc), &corev1.Service{})
				if !tc.is(err) {
					t.Fatalf("a Service read with fault %d: %v (%T)", tc.code, err, err)
				}
			}
			remove()
			if err := w.via.Get(ctx, client.ObjectKeyFromObject(svc), &corev1.Service{}); err != nil {
				t.Fatalf("a Service read with fault %d removed: %v", tc.code, err)
			}
		}
		var reads []string
		for _, r := range w.front.RequestsIn(w.ns) {
			if r.Resource == "services" && r.Verb == "get" {
				reads = append(reads, r.Answer())
			}
		}
		// A client may retry a dropped read: each fault shows at least twice.
		count := map[string]int{}
		for _, a := range reads {
			count[a]++
		}
		for _, a := range []string{"500 Internal Server Error (a fault the front injected)", "504 Gateway Timeout (a fault the front injected)",
			"connection dropped by the front"} {
			if count[a] < 2 {
				t.Errorf("the Service reads were recorded as %q: want %q at least twice", reads, a)
			}
		}
		if count["200 OK"] != 3 {
			t.Errorf("the Service reads were recorded as %q: want three answered by the API server", reads)
		}
	})
}

// TestAFrontWithoutAnUpstreamSaysSo: the caller's mistake, named.
func TestAFrontWithoutAnUpstreamSaysSo(t *testing.T) {
	if _, err := Start(Options{}); err == nil {
		t.Fatal("a front with no upstream started")
	}
	if _, err := Start(Options{Upstream: &rest.Config{Host: "https://127.0.0.1:1"}}); err != nil {
		t.Fatalf("a front whose API server is not up yet must still start (it answers 502): %v", err)
	}
}

// TestAWriteRefusedBeforeItsBodyIsReadIsAnswered: an API server that
// answers 403 before reading a write's body (as it does for a forbidden
// write) makes an HTTP/2 client stop sending the body once it has the
// answer. The front must still end the answer: it reads a body whole
// before forwarding it, so it never waits for the rest of a body the
// client no longer sends.
func TestAWriteRefusedBeforeItsBodyIsReadIsAnswered(t *testing.T) {
	upstream := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		_, _ = io.WriteString(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403}`)
	}))
	upstream.EnableHTTP2 = true
	upstream.StartTLS()
	t.Cleanup(upstream.Close)
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: upstream.Certificate().Raw})
	f, err := Start(Options{Upstream: &rest.Config{Host: upstream.URL, TLSClientConfig: rest.TLSClientConfig{CAData: caPEM}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(f.CAData())
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}}

	// The body comes after the headers, as a client's body writer sends it
	// on a busy machine: late enough for an answer streamed back at once
	// to arrive first.
	pr, pw := io.Pipe()
	go func() {
		time.Sleep(300 * time.Millisecond)
		_, _ = io.WriteString(pw, `{"metadata":{"name":"web"},"spec":{}}`)
		_ = pw.Close()
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, f.URL()+"/apis/example.com/v1/namespaces/shop/widgets/web", pr)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("the write got no answer: %v", err)
	}
	defer resp.Body.Close()
	if resp.ProtoMajor != 2 {
		t.Fatalf("the client spoke %s, not HTTP/2", resp.Proto)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("the answer to a refused write never ended (the front waits for a body the client stopped sending): %v", err)
	}
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(b), "Forbidden") {
		t.Fatalf("answer %d %s, want the API server's 403", resp.StatusCode, b)
	}
	if got := f.Requests(); len(got) != 1 || got[0].Code != http.StatusForbidden || got[0].Verb != "update" {
		t.Fatalf("recorded %v, want the one refused update", got)
	}
}
