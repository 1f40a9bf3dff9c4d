package dataplane

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	netv1 "github.com/10xdev/gw10/step01/api/v1"
)

const (
	// maxAnswerBytes bounds how much of a refusal's answer is read.
	maxAnswerBytes = 1024
	// maxReasonBytes bounds the reason a NACKError carries to a condition message.
	maxReasonBytes = 256
	// maxRouteBytes bounds one route a read of it reads.
	maxRouteBytes = 16 << 10
	// maxTableBytes bounds the route table a listing reads.
	maxTableBytes = 64 << 20
)

// HTTP talks to the proxy admin API:
//
//	PUT    /v1/routes/{namespace}/{name}  JSON Route -> 2xx ACK, else NACK
//	GET    /v1/routes/{namespace}/{name}             -> 200 JSON Route, 404 when absent
//	DELETE /v1/routes/{namespace}/{name}?uid=U       -> 2xx or 404: withdrawn; 409: the route held carries
//	                                                    another uid (an EdgeRoute created again): it stays
//	GET    /v1/routes                                -> 200, JSON {"namespace/name": route, ...}
//
// A refusal's answer is JSON {"reason": "...", ...}: the reason is the same
// for the same refusal; the other fields (a request id) are for the log.
type HTTP struct {
	base   *url.URL
	client *http.Client
}

// NewHTTP returns a client for the proxy admin API at baseURL; each request
// is bounded by timeout (and by the caller's context).
func NewHTTP(baseURL string, timeout time.Duration) (*HTTP, error) {
	u, err := url.Parse(baseURL)
	if err != nil {
		return nil, fmt.Errorf("parsing data plane URL %q: %w", baseURL, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("data plane URL %q must be http(s)://host[:port]", baseURL)
	}
	return &HTTP{base: u, client: &http.Client{Timeout: timeout}}, nil
}

// Program pushes the EdgeRoute's route.
func (h *HTTP) Program(ctx context.Context, er *netv1.EdgeRoute) (err error) {
	route, key := RouteFor(er), types.NamespacedName{Namespace: er.Namespace, Name: er.Name}
	defer func() { logAnswer(ctx, "data plane: push", "ACK", key, err, "generation", route.Generation) }()
	body, err := json.Marshal(route)
	if err != nil {
		return fmt.Errorf("encoding route: %w", err)
	}
	resp, err := h.do(ctx, http.MethodPut, key, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return nackFrom(resp)
	}
	return nil
}

// Remove withdraws the route the proxy holds for key: it reads the route's
// uid, then withdraws it on condition that the route still carries that uid.
// A withdraw that outlives its timeout may still land, later than a push of
// an EdgeRoute created again under the same name: the proxy then refuses it
// (409) and the new route stays. A 404 (nothing held) and a 409 (the route
// of another EdgeRoute) both leave nothing of the route read: done.
func (h *HTTP) Remove(ctx context.Context, key types.NamespacedName) (err error) {
	answer := "withdrawn"
	defer func() { logAnswer(ctx, "data plane: withdraw", answer, key, err) }()
	held, ok, err := h.route(ctx, key)
	if err != nil {
		return err
	}
	if !ok {
		answer = "nothing held: no withdraw sent"
		return nil
	}
	var query url.Values
	if held.UID != "" {
		query = url.Values{"uid": {held.UID}}
	}
	resp, err := h.doQuery(ctx, http.MethodDelete, key, query, nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode/100 == 2, resp.StatusCode == http.StatusNotFound:
		return nil
	case resp.StatusCode == http.StatusConflict:
		answer = "left: the proxy holds another EdgeRoute's route under this name (HTTP 409)"
		return nil
	default:
		return nackFrom(resp)
	}
}

// route reads the route the proxy holds for key (false: none).
func (h *HTTP) route(ctx context.Context, key types.NamespacedName) (Route, bool, error) {
	resp, err := h.do(ctx, http.MethodGet, key, nil)
	if err != nil {
		return Route{}, false, err
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return Route{}, false, nil
	case resp.StatusCode != http.StatusOK:
		return Route{}, false, fmt.Errorf("reading the route %s: %w", key, nackFrom(resp))
	}
	var r Route
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxRouteBytes)).Decode(&r); err != nil {
		return Route{}, false, fmt.Errorf("decoding the route %s: %w", key, err)
	}
	return r, true, nil
}

// Routes lists the keys of the routes the proxy holds; a key that is not
// namespace/name is logged and left out.
func (h *HTTP) Routes(ctx context.Context) ([]types.NamespacedName, error) {
	u := h.base.JoinPath("v1", "routes")
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("building GET %s: %w", u, err)
	}
	resp, err := h.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", u, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		refused := nackFrom(resp)
		refused.Of = "the listing of its routes"
		return nil, fmt.Errorf("GET %s: %w", u, refused)
	}
	var table map[string]json.RawMessage
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxTableBytes)).Decode(&table); err != nil {
		return nil, fmt.Errorf("decoding the route table from GET %s: %w", u, err)
	}
	// Read to the end (the decoder stops before the encoder's last newline)
	// so that the connection is reused: the data-plane source lists every
	// drift period, and a new connection a look is work the kernel counts.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
	// A proxy may be shared: a key that is not namespace/name was not put
	// there by an EdgeRoute controller, and is skipped (and logged), never a
	// reason to list nothing.
	keys := make([]types.NamespacedName, 0, len(table))
	for k := range table {
		ns, name, err := cache.SplitMetaNamespaceKey(k)
		if err != nil || ns == "" || name == "" {
			logr.FromContextOrDiscard(ctx).WithName("dataplane").Info("data plane: skipping a key of the route table that is not namespace/name", "key", k)
			continue
		}
		keys = append(keys, types.NamespacedName{Namespace: ns, Name: name})
	}
	return keys, nil
}

func (h *HTTP) do(ctx context.Context, method string, key types.NamespacedName, body []byte) (*http.Response, error) {
	return h.doQuery(ctx, method, key, nil, body)
}

func (h *HTTP) doQuery(ctx context.Context, method string, key types.NamespacedName, query url.Values, body []byte) (*http.Response, error) {
	u := h.base.JoinPath("v1", "routes", key.Namespace, key.Name)
	u.RawQuery = query.Encode()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return nil, fmt.Errorf("building %s %s: %w", method, u, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := h.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, u, err)
	}
	return resp, nil
}

// logAnswer logs a push or a withdraw with the proxy's answer (ok when it
// succeeded, else the error) on the logger
// controller-runtime puts in each reconcile's context (the controller, the
// EdgeRoute, the reconcileID), named "dataplane" as the logging data
// plane's is, so that make run's log shows every request the proxy was sent
// under the same name.
func logAnswer(ctx context.Context, msg, ok string, key types.NamespacedName, err error, keysAndValues ...any) {
	answer := ok
	if err != nil {
		answer = err.Error()
	}
	logr.FromContextOrDiscard(ctx).WithName("dataplane").Info(msg, append([]any{"route", key.String(), "answer", answer}, keysAndValues...)...)
}

// nackFrom reads a refusal: its reason from the answer's "reason" field,
// never the whole answer, which may differ every time for the same refusal.
func nackFrom(resp *http.Response) *NACKError {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes))
	body := strings.TrimSpace(string(b))
	var answer struct {
		Reason string `json:"reason"`
	}
	reason := http.StatusText(resp.StatusCode)
	if json.Unmarshal(b, &answer) == nil && strings.TrimSpace(answer.Reason) != "" {
		reason = truncate(strings.TrimSpace(answer.Reason), maxReasonBytes)
	}
	return &NACKError{StatusCode: resp.StatusCode, Reason: reason, Body: body}
}

// truncate cuts s to at most n bytes, on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
