package controller

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/10xdev/gw10/solutions/step01/internal/dataplane"
)

// lateProxy is an in-test proxy admin API that can apply a withdraw late:
// once armed, it keeps the next DELETE unapplied, whatever its client does
// meanwhile, until released, as a real proxy may still apply a withdraw
// whose client timed out.
type lateProxy struct {
	mu      sync.Mutex
	routes  map[string]dataplane.Route
	hold    chan struct{} // armed: closed to release the held DELETE
	arrived chan struct{} // closed when the held DELETE arrives
	landed  chan int      // the held DELETE's answer, once applied
}

func newLateProxy(t *testing.T) (*lateProxy, *httptest.Server) {
	p := &lateProxy{routes: map[string]dataplane.Route{}}
	mux := http.NewServeMux()
	mux.HandleFunc("PUT /v1/routes/{ns}/{name}", func(w http.ResponseWriter, r *http.Request) {
		var route dataplane.Route
		if err := json.NewDecoder(r.Body).Decode(&route); err != nil {
			http.Error(w, `{"reason":"malformed route"}`, http.StatusBadRequest)
			return
		}
		p.mu.Lock()
		p.routes[r.PathValue("ns")+"/"+r.PathValue("name")] = route
		p.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /v1/routes/{ns}/{name}", func(w http.ResponseWriter, r *http.Request) {
		route, ok := p.route(r.PathValue("ns") + "/" + r.PathValue("name"))
		if !ok {
			http.Error(w, `{"reason":"no such route"}`, http.StatusNotFound)
			return
		}
		_ = json.NewEncoder(w).Encode(route)
	})
	mux.HandleFunc("DELETE /v1/routes/{ns}/{name}", func(w http.ResponseWriter, r *http.Request) {
		key := r.PathValue("ns") + "/" + r.PathValue("name")
		p.mu.Lock()
		hold, arrived, landed := p.hold, p.arrived, p.landed
		p.hold = nil
		p.mu.Unlock()
		if hold != nil {
			close(arrived)
			<-hold
		}
		code := p.withdraw(key, r.URL.Query().Get("uid"))
		if landed != nil {
			landed <- code
		}
		w.WriteHeader(code)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return p, srv
}

// armHold keeps the next withdraw unapplied until the returned release.
func (p *lateProxy) armHold() (arrived <-chan struct{}, release func(), landed <-chan int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	hold := make(chan struct{})
	p.hold, p.arrived, p.landed = hold, make(chan struct{}), make(chan int, 1)
	return p.arrived, func() { close(hold) }, p.landed
}

func (p *lateProxy) route(key string) (dataplane.Route, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	r, ok := p.routes[key]
	return r, ok
}

// withdraw applies a DELETE: conditional on uid when one is named.
func (p *lateProxy) withdraw(key, uid string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	held, ok := p.routes[key]
	switch {
	case !ok:
		return http.StatusNotFound
	case uid != "" && held.UID != uid:
		return http.StatusConflict
	}
	delete(p.routes, key)
	return http.StatusNoContent
}

// A withdraw that outlives its timeout and lands after the push of an
// EdgeRoute created again under the same name must not remove the new
// route: the withdraw names the uid of the route it meant, and the proxy
// refuses it for the route of another uid.
func TestALateWithdrawDoesNotRemoveTheRouteOfAnEdgeRouteCreatedAgain(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	p, srv := newLateProxy(t)
	dp, err := dataplane.NewHTTP(srv.URL, 300*time.Millisecond)
	g.Expect(err).NotTo(HaveOccurred())
	r := &EdgeRouteReconciler{Client: k8sClient, Programmer: dp}
	key := ns + "/web"

	old := newRoute(ns, "web", "web")
	create(t, old, newService(ns, "web"))
	_, err = reconcileOnce(t, r, old)
	g.Expect(err).NotTo(HaveOccurred())
	pushed, ok := p.route(key)
	g.Expect(ok).To(BeTrue(), "the route was not pushed")
	g.Expect(pushed.UID).To(Equal(string(get(t, old).UID)), "the pushed route must carry the EdgeRoute's uid")

	// The EdgeRoute is deleted; its withdraw reaches the proxy and times out there.
	arrived, release, landed := p.armHold()
	g.Expect(k8sClient.Delete(context.Background(), old)).To(Succeed())
	_, err = reconcileOnce(t, r, old)
	g.Expect(err).To(HaveOccurred(), "the withdraw timed out: the queue must retry it")
	g.Expect(arrived).To(BeClosed(), "the withdraw never reached the proxy")

	// An EdgeRoute of the same name is created and pushed; then the old
	// withdraw lands.
	again := newRoute(ns, "web", "web")
	create(t, again)
	_, err = reconcileOnce(t, r, again)
	g.Expect(err).NotTo(HaveOccurred())
	release()
	g.Eventually(landed, eventually, poll).Should(Receive(Equal(http.StatusConflict)),
		"the late withdraw named another uid than the route held: the proxy must refuse it")
	held, ok := p.route(key)
	g.Expect(ok).To(BeTrue(), "the late withdraw removed the route of the EdgeRoute created again")
	g.Expect(held.UID).To(Equal(string(get(t, again).UID)))
	g.Expect(client.ObjectKeyFromObject(again)).To(Equal(client.ObjectKeyFromObject(old)))
}
