// Package apifront is the API server as the learner's controller sees it:
// an HTTPS reverse proxy between the controller and the kube-apiserver that
// records every request the controller makes and can answer some of them
// itself, with a fault. The verdicts that rest on what the controller asked
// of the API server (how many status writes answered an action, whether a
// failed read was tried again) are read here, outside the controller's
// process, as the proxy stand-in's are read from the data plane's side.
//
//	controller --HTTPS, no credentials--> front --the controller's identity--> kube-apiserver
//
// The front serves with a certificate of a CA it makes when it starts; the
// controller's kubeconfig names the front and that CA, and holds no
// credentials: the front forwards each request with the identity it was
// given (the controller's own: its role decides, as before), so nothing
// the controller sends reaches the API server another way. Watches stream
// through (every write of the answer is flushed at once).
//
// Every request is kept as data (Request): when, verb, resource,
// subresource, namespace, name, the answer's status code, the user agent,
// and for a status write of the step's primary kind the conditions and
// resourceVersion it came back with. A Fault makes the front answer
// matching requests itself: an API server's error (409, 500, 504, as a
// metav1.Status) or a connection dropped without an answer; those requests
// never reach the API server.
package apifront

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
)

// Request is one request the front answered, or passed on and saw answered.
type Request struct {
	At       time.Time // when it arrived
	Answered time.Time // when its answer's headers went back (a watch's: when it began)
	Verb     string    // get, list, watch, create, update, patch, delete, deletecollection; for other paths the method, lower case
	Path     string    // the URL's path, for a request that names no resource
	schema.GroupVersionResource
	Subresource     string
	Namespace, Name string
	// Code is the answer's HTTP status; 0 when the connection was dropped
	// without one.
	Code int
	// Injected: the front answered it with a Fault; the API server never
	// saw it.
	Injected  bool
	UserAgent string
	// ResourceVersion and Conditions are those of the object a successful
	// status write of the primary kind came back with (its status as the
	// API server stored it); for a refused one, Conditions are those the
	// request carried, when its body says.
	ResourceVersion string
	Conditions      []metav1.Condition
}

// Succeeded reports a 2xx answer.
func (r Request) Succeeded() bool { return r.Code/100 == 2 }

// Write reports a request that changes something.
func (r Request) Write() bool {
	switch r.Verb {
	case "create", "update", "patch", "delete", "deletecollection":
		return true
	}
	return false
}

// Answer says in a few words how the request was answered.
func (r Request) Answer() string {
	switch {
	case r.Code == 0 && r.Injected:
		return "connection dropped by the front"
	case r.Code == 0:
		return "no answer"
	case r.Injected:
		return fmt.Sprintf("%d %s (a fault the front injected)", r.Code, http.StatusText(r.Code))
	default:
		return fmt.Sprintf("%d %s", r.Code, http.StatusText(r.Code))
	}
}

// String is the request in one line: "update edgeroutes/web/status in shop: 409 Conflict".
func (r Request) String() string {
	what := r.Resource
	if what == "" {
		what = r.Path
	}
	if r.Name != "" {
		what += "/" + r.Name
	}
	if r.Subresource != "" {
		what += "/" + r.Subresource
	}
	if r.Namespace != "" {
		what += " in " + r.Namespace
	}
	return fmt.Sprintf("%s %s: %s", r.Verb, what, r.Answer())
}

// Fault makes the front answer the requests it matches itself. Empty
// fields match anything, but Subresource, which must equal the request's
// ("" matches only requests of the object itself).
type Fault struct {
	Verbs                     []string
	Resource, Namespace, Name string
	Subresource               string
	// Code is the HTTP status of the answer: 409, 429, 500, 504 and the
	// like, with the metav1.Status body the API server would send; 0 drops
	// the connection without an answer.
	Code int
	// Times is how many requests it answers, then it is gone; 0: every one
	// until removed.
	Times int
}

func (f *Fault) matches(r *Request) bool {
	if len(f.Verbs) > 0 && !contains(f.Verbs, r.Verb) {
		return false
	}
	return (f.Resource == "" || f.Resource == r.Resource) &&
		(f.Namespace == "" || f.Namespace == r.Namespace) &&
		(f.Name == "" || f.Name == r.Name) &&
		f.Subresource == r.Subresource
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Options configure a front.
type Options struct {
	// Upstream is the API server and the identity every request is
	// forwarded with (the controller's).
	Upstream *rest.Config
	// Primary is the resource whose status writes the front reads the
	// conditions of (step 01: net.10xdev.io/edgeroutes).
	Primary schema.GroupResource
}

// Front is the recording, fault-injecting front. Its zero value is not
// usable: call Start.
type Front struct {
	srv     *http.Server
	url     string
	caPEM   []byte
	primary schema.GroupResource
	proxy   *httputil.ReverseProxy

	mu       sync.Mutex
	requests []Request
	faults   []*Fault
}

// maxBody bounds the bodies the front reads: every request's, and the
// answers to status writes (the API server takes at most 3 MiB).
const maxBody = 4 << 20

// Start listens on a loopback port and serves until Close.
func Start(opts Options) (*Front, error) {
	if opts.Upstream == nil {
		return nil, errors.New("API front: no upstream API server")
	}
	upstream, err := url.Parse(opts.Upstream.Host)
	if err != nil || upstream.Host == "" {
		upstream, err = url.Parse("https://" + opts.Upstream.Host)
	}
	if err != nil {
		return nil, fmt.Errorf("API front: the API server's address %q: %w", opts.Upstream.Host, err)
	}
	transport, err := rest.TransportFor(opts.Upstream)
	if err != nil {
		return nil, fmt.Errorf("API front: a transport with the controller's identity: %w", err)
	}
	ca, err := newCA()
	if err != nil {
		return nil, err
	}
	tlsCfg, err := ca.serverTLS()
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("API front: listening: %w", err)
	}
	f := &Front{url: "https://" + ln.Addr().String(), caPEM: ca.certPEM, primary: opts.Primary}
	f.proxy = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(upstream)
			pr.Out.URL.Path, pr.Out.URL.RawPath = pr.In.URL.Path, pr.In.URL.RawPath
			// The front decides who the controller is.
			pr.Out.Header.Del("Authorization")
			for k := range pr.Out.Header {
				if strings.HasPrefix(strings.ToLower(k), "impersonate-") {
					pr.Out.Header.Del(k)
				}
			}
		},
		Transport:      transport,
		FlushInterval:  -1, // a watch's events as they come
		ModifyResponse: f.answered,
		ErrorHandler:   f.upstreamFailed,
	}
	f.srv = &http.Server{Handler: http.HandlerFunc(f.serve), TLSConfig: tlsCfg, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = f.srv.ServeTLS(ln, "", "") }()
	return f, nil
}

// URL is the front's base URL, for the controller's kubeconfig.
func (f *Front) URL() string { return f.url }

// CAData is the PEM of the CA that signed the front's certificate.
func (f *Front) CAData() []byte { return bytes.Clone(f.caPEM) }

// Config is a rest.Config of the front: no credentials of its own (the
// front adds the controller's).
func (f *Front) Config() *rest.Config {
	return &rest.Config{Host: f.url, TLSClientConfig: rest.TLSClientConfig{CAData: f.CAData()}}
}

// Close stops serving at once: open watches end, and a request in flight
// is cut (the run that started the front is over).
func (f *Front) Close() error {
	if err := f.srv.Close(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("API front: closing: %w", err)
	}
	return nil
}

// Inject adds a fault; remove takes it away (a fault with Times goes by
// itself once used up).
func (f *Front) Inject(fault Fault) (remove func()) {
	p := &fault
	f.mu.Lock()
	f.faults = append(f.faults, p)
	f.mu.Unlock()
	return func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		for i, q := range f.faults {
			if q == p {
				f.faults = append(f.faults[:i], f.faults[i+1:]...)
				return
			}
		}
	}
}

// Requests returns every request the front answered, oldest answer first.
func (f *Front) Requests() []Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Request(nil), f.requests...)
}

// RequestsIn returns the requests about namespace ns, oldest answer first.
func (f *Front) RequestsIn(ns string) []Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Request
	for _, r := range f.requests {
		if r.Namespace == ns {
			out = append(out, r)
		}
	}
	return out
}

// StatusWrites returns the writes (update, patch) of the status of the
// primary kind's object ns/name, oldest answer first.
func (f *Front) StatusWrites(ns, name string) []Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Request
	for _, r := range f.requests {
		if f.primaryStatusWrite(&r) && r.Namespace == ns && r.Name == name {
			out = append(out, r)
		}
	}
	return out
}

// primaryStatusWrite reports a write of the primary kind's status.
func (f *Front) primaryStatusWrite(r *Request) bool {
	return r.Group == f.primary.Group && r.Resource == f.primary.Resource && r.Subresource == "status" &&
		(r.Verb == "update" || r.Verb == "patch")
}

func (f *Front) record(r Request) {
	r.Answered = time.Now()
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests = append(f.requests, r)
}

// requestKey carries a request's record from serve to answered.
type requestKey struct{}

func (f *Front) serve(w http.ResponseWriter, hr *http.Request) {
	rec := parse(hr)
	rec.At, rec.UserAgent = time.Now(), hr.UserAgent()
	statusWrite := f.primaryStatusWrite(&rec)
	// Every request's body is read whole before it is forwarded. Streamed,
	// a write the API server refuses before reading its body (a 403) hangs:
	// the answer's stream ends only when the body is sent, and an HTTP/2
	// client that has its answer stops sending (the reverse proxy cannot
	// cut a body it wraps), so the front waits for the controller and the
	// controller for the front.
	var body []byte
	if hr.Body != nil && hr.Body != http.NoBody {
		b, err := io.ReadAll(io.LimitReader(hr.Body, maxBody+1))
		_ = hr.Body.Close()
		if err != nil || len(b) > maxBody {
			http.Error(w, "API front: the request's body could not be read whole", http.StatusRequestEntityTooLarge)
			rec.Code = http.StatusRequestEntityTooLarge
			f.record(rec)
			return
		}
		body = b
		hr.Body = io.NopCloser(bytes.NewReader(b))
		hr.ContentLength = int64(len(b))
	}
	if fault, ok := f.fault(&rec); ok {
		rec.Injected = true
		if statusWrite {
			rec.Conditions = conditionsIn(body)
		}
		rec.Code = fault.Code
		f.record(rec)
		if fault.Code == 0 {
			panic(http.ErrAbortHandler) // net/http drops the connection (HTTP/2: resets the stream)
		}
		writeStatus(w, fault.Code, &rec)
		return
	}
	if statusWrite {
		rec.Conditions = conditionsIn(body) // until the answer says what was stored
	}
	f.proxy.ServeHTTP(w, hr.WithContext(context.WithValue(hr.Context(), requestKey{}, &rec)))
}

// fault takes the first fault matching the request, using one of its times.
func (f *Front) fault(r *Request) (Fault, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, p := range f.faults {
		if !p.matches(r) {
			continue
		}
		got := *p
		if p.Times > 0 {
			if p.Times--; p.Times == 0 {
				f.faults = append(f.faults[:i], f.faults[i+1:]...)
			}
		}
		return got, true
	}
	return Fault{}, false
}

// answered records a request once the API server's answer comes back; a
// status write's answer is read whole (it is small) for the conditions it
// stored, then passed on.
func (f *Front) answered(resp *http.Response) error {
	rec, ok := resp.Request.Context().Value(requestKey{}).(*Request)
	if !ok {
		return nil
	}
	rec.Code = resp.StatusCode
	if f.primaryStatusWrite(rec) && resp.StatusCode/100 == 2 {
		b, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
		_ = resp.Body.Close()
		if err != nil {
			return fmt.Errorf("API front: reading the answer to %s: %w", rec, err)
		}
		resp.Body = io.NopCloser(bytes.NewReader(b))
		var obj struct {
			Metadata struct {
				ResourceVersion string `json:"resourceVersion"`
			} `json:"metadata"`
		}
		if json.Unmarshal(b, &obj) == nil {
			rec.ResourceVersion = obj.Metadata.ResourceVersion
		}
		rec.Conditions = conditionsIn(b)
	}
	f.record(*rec)
	return nil
}

// upstreamFailed answers 502 when the API server could not be reached, and
// records it.
func (f *Front) upstreamFailed(w http.ResponseWriter, hr *http.Request, err error) {
	if rec, ok := hr.Context().Value(requestKey{}).(*Request); ok {
		rec.Code = http.StatusBadGateway
		if hr.Context().Err() != nil {
			rec.Code = 0 // the controller went away first
		}
		f.record(*rec)
	}
	w.WriteHeader(http.StatusBadGateway)
	_, _ = fmt.Fprintf(w, "API front: the API server did not answer: %v", err)
}

// conditionsIn reads status.conditions from an object's JSON (a status
// update's body, a merge patch's, an answer); nil when it has none.
func conditionsIn(b []byte) []metav1.Condition {
	var obj struct {
		Status struct {
			Conditions []metav1.Condition `json:"conditions"`
		} `json:"status"`
	}
	if json.Unmarshal(b, &obj) != nil {
		return nil
	}
	return obj.Status.Conditions
}

// writeStatus answers with the metav1.Status the API server sends for code.
func writeStatus(w http.ResponseWriter, code int, r *Request) {
	gr := schema.GroupResource{Group: r.Group, Resource: r.Resource}
	var err *apierrors.StatusError
	switch code {
	case http.StatusConflict:
		err = apierrors.NewConflict(gr, r.Name, errors.New("the object has been modified; please apply your changes to the latest version and try again"))
	case http.StatusInternalServerError:
		err = apierrors.NewInternalError(errors.New("etcdserver: request timed out"))
	case http.StatusGatewayTimeout:
		err = apierrors.NewTimeoutError("the server was unable to return a response in the time allotted", 1)
	case http.StatusTooManyRequests:
		err = apierrors.NewTooManyRequests("the server has received too many requests and has asked us to try again later", 1)
	default:
		err = apierrors.NewGenericServerResponse(code, r.Verb, gr, r.Name, "an error the test front injected", 0, false)
	}
	st := err.Status()
	st.Kind, st.APIVersion = "Status", "v1"
	b, _ := json.Marshal(st)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(b)
}

// parse reads what a request asks of the API: the verb and the resource
// path, as the API server's own request info does (/api/v1/..., /apis/group/version/...).
func parse(hr *http.Request) Request {
	r := Request{Verb: strings.ToLower(hr.Method), Path: hr.URL.Path}
	parts := strings.Split(strings.Trim(hr.URL.Path, "/"), "/")
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		r.Version, parts = parts[1], parts[2:]
	case len(parts) >= 4 && parts[0] == "apis":
		r.Group, r.Version, parts = parts[1], parts[2], parts[3:]
	default:
		return r // discovery, /version, /openapi, /healthz: no resource
	}
	// /api/v1/namespaces/{ns}/{resource}/...; but /api/v1/namespaces/{name}
	// and its status and finalize are the namespace itself.
	if parts[0] == "namespaces" && len(parts) > 2 && parts[2] != "status" && parts[2] != "finalize" {
		r.Namespace, parts = parts[1], parts[2:]
	}
	r.Resource = parts[0]
	if len(parts) > 1 {
		r.Name = parts[1]
	}
	if len(parts) > 2 {
		r.Subresource = strings.Join(parts[2:], "/")
	}
	r.Path = ""
	q := hr.URL.Query()
	switch hr.Method {
	case http.MethodGet, http.MethodHead:
		switch {
		case q.Get("watch") == "true" || q.Get("watch") == "1":
			r.Verb = "watch"
		case r.Name == "":
			r.Verb = "list"
		default:
			r.Verb = "get"
		}
	case http.MethodPost:
		r.Verb = "create"
	case http.MethodPut:
		r.Verb = "update"
	case http.MethodPatch:
		r.Verb = "patch"
	case http.MethodDelete:
		r.Verb = "delete"
		if r.Name == "" {
			r.Verb = "deletecollection"
		}
	}
	return r
}
