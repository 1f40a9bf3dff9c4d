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

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	netv1 "github.com/10xdev/gw10/step01/api/v1"
)

const (
	// maxReasonBytes bounds how much of a NACK body ends up in a condition message.
	maxReasonBytes = 1024
	// maxTableBytes bounds the route table a listing reads.
	maxTableBytes = 64 << 20
)

// HTTP talks to the proxy admin API:
//
//	PUT    /v1/routes/{namespace}/{name}  JSON Route -> 2xx ACK, else NACK
//	DELETE /v1/routes/{namespace}/{name}             -> 2xx or 404: withdrawn
//	GET    /v1/routes                                -> 200, JSON {"namespace/name": route, ...}
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

// Remove withdraws the route; a 404 means it is already gone.
func (h *HTTP) Remove(ctx context.Context, key types.NamespacedName) (err error) {
	defer func() { logAnswer(ctx, "data plane: withdraw", "withdrawn", key, err) }()
	resp, err := h.do(ctx, http.MethodDelete, key, nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 && resp.StatusCode != http.StatusNotFound {
		return nackFrom(resp)
	}
	return nil
}

// Routes lists the keys of the routes the proxy holds.
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
		return nil, fmt.Errorf("GET %s: %w", u, nackFrom(resp))
	}
	var table map[string]json.RawMessage
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxTableBytes)).Decode(&table); err != nil {
		return nil, fmt.Errorf("decoding the route table from GET %s: %w", u, err)
	}
	keys := make([]types.NamespacedName, 0, len(table))
	for k := range table {
		ns, name, err := cache.SplitMetaNamespaceKey(k)
		if err != nil || ns == "" || name == "" {
			return nil, fmt.Errorf("the route table from GET %s has a key %q that is not namespace/name", u, k)
		}
		keys = append(keys, types.NamespacedName{Namespace: ns, Name: name})
	}
	return keys, nil
}

func (h *HTTP) do(ctx context.Context, method string, key types.NamespacedName, body []byte) (*http.Response, error) {
	u := h.base.JoinPath("v1", "routes", key.Namespace, key.Name)
	req, err := http.NewRequestWithContext(ctx, method, u.String(), bytes.NewReader(body))
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
// EdgeRoute, the reconcileID), so that make run's log shows every request
// the proxy was sent, as the logging data plane's does.
func logAnswer(ctx context.Context, msg, ok string, key types.NamespacedName, err error, keysAndValues ...any) {
	answer := ok
	if err != nil {
		answer = err.Error()
	}
	logr.FromContextOrDiscard(ctx).Info(msg, append([]any{"route", key.String(), "answer", answer}, keysAndValues...)...)
}

func nackFrom(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxReasonBytes))
	reason := strings.TrimSpace(string(b))
	if reason == "" {
		reason = http.StatusText(resp.StatusCode)
	}
	return &NACKError{StatusCode: resp.StatusCode, Reason: reason}
}
