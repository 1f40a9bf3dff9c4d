package runner

import "testing"

// TestHostPortOfAnAPIServer: a rest.Config's Host is a URL or a bare
// host:port; the sandbox relays host:port.
func TestHostPortOfAnAPIServer(t *testing.T) {
	for in, want := range map[string]string{
		"https://127.0.0.1:38113": "127.0.0.1:38113",
		"127.0.0.1:6443":          "127.0.0.1:6443",
		"http://127.0.0.1:8080/":  "127.0.0.1:8080",
		"https://[::1]:6443":      "[::1]:6443",
		"https://127.0.0.1":       "127.0.0.1:443",
		"http://127.0.0.1":        "127.0.0.1:80",
	} {
		got, err := hostPort(in)
		if err != nil || got != want {
			t.Errorf("hostPort(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}
