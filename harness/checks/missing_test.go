package checks

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/10xdev/gw10/harness/evidence"
	"github.com/10xdev/gw10/harness/proxy"
)

// TestAMissingRouteSaysWhatThePushesWere: the cause of a route the proxy
// lacks reads the proxy's own record. "nothing pushed it" only when nothing
// did; a route pushed and withdrawn says so (it read the check's record
// alone once, and always said "nothing pushed it").
func TestAMissingRouteSaysWhatThePushesWere(t *testing.T) {
	srv, err := proxy.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ct := NewT("x", Env{Client: fake.NewClientBuilder().Build(), Proxy: srv, Namespace: "ns"})
	ct.Record.Add(evidence.Event{Source: evidence.Harness, Kind: evidence.Action, Text: "creating EdgeRoute a"})
	ctx := context.Background()
	if got := ct.missingRoutes(ctx, []string{"a"}, nil); !strings.Contains(got, "nothing pushed it") {
		t.Errorf("before any push: %q", got)
	}
	do := func(method, body string) {
		req, err := http.NewRequest(method, srv.URL()+"/v1/routes/ns/a", bytes.NewBufferString(body))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	do(http.MethodPut, `{"hostname":"a.example.com","prefix":"/","service":"s","port":80,"generation":1}`)
	do(http.MethodDelete, "")
	got := ct.missingRoutes(ctx, []string{"a"}, nil)
	if !strings.Contains(got, "it was pushed once") || !strings.Contains(got, "withdrawn once") {
		t.Errorf("after a push and a withdraw: %q", got)
	}
}
