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

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

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
func (h *HTTP) Program(ctx context.Context, er *netv1.EdgeRoute) error {
	body, err := json.Marshal(RouteFor(er))
	if err != nil {
		return fmt.Errorf("encoding route: %w", err)
	}
	resp, err := h.do(ctx, http.MethodPut, types.NamespacedName{Namespace: er.Namespace, Name: er.Name}, body)
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
func (h *HTTP) Remove(ctx context.Context, key types.NamespacedName) error {
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
			// Not a route an EdgeRoute controller wrote: someone else's, left alone.
			logf.FromContext(ctx).Info("skipping a data plane route whose key is not namespace/name", "key", k)
			continue
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

func nackFrom(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxReasonBytes))
	reason := strings.TrimSpace(string(b))
	if reason == "" {
		reason = http.StatusText(resp.StatusCode)
	}
	return &NACKError{StatusCode: resp.StatusCode, Reason: reason}
}
