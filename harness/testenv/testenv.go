// Package testenv says what a test of the workbook needs from the machine
// it runs on, and what happens when it is not there. make test's tiers rest
// on it:
//
//   - under go test -short (make test-unit) a test that needs a control
//     plane, a sandbox user or a browser is skipped, with the same words
//     every time (Needs), and so is a test that takes minutes (Long);
//     where GW10_SKIPPED names a file, each such test's package directory
//     and name are appended to it, so that make test runs exactly those
//     after the unit tier, and every test once;
//   - a test whose need is missing on this machine skips loudly
//     (Missing), except where the CI environment variable is set and the
//     need is one CI provides (a sandbox user, Chromium): there it fails,
//     because a security or browser gate that skips passes unseen.
//
// Tests call it; nothing else does.
package testenv

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// A Need is something beyond Go that a test needs.
type Need struct {
	// what names it in a skip: "a control plane (envtest's kube-apiserver and etcd)".
	what string
	// ci: CI provides it (make test-deps installs it, CI runs as root), so
	// its absence under CI is a failure, not a skip.
	ci bool
}

// The needs. Nothing in the suite needs a container engine: kind's tests
// run under make test-kind, outside go test.
var (
	// Cluster is envtest's kube-apiserver and etcd (make assets).
	Cluster = Need{what: "a control plane (envtest's kube-apiserver and etcd)"}
	// Sandbox is the grade's sandbox: root, or passwordless sudo.
	Sandbox = Need{what: "a sandbox user (root or passwordless sudo)", ci: true}
	// Browser is Debian's chromium on PATH (make test-deps installs it).
	Browser = Need{what: "a browser (chromium on PATH; make test-deps installs it)", ci: true}
)

// String names the need as a skip does.
func (n Need) String() string { return n.what }

// Needs skips t under -short: make test-unit runs no test that needs n.
func Needs(t testing.TB, n Need) {
	t.Helper()
	if testing.Short() {
		skipShort(t, "needs "+n.what)
	}
}

// Long skips t under -short: it takes long (why), with nothing beyond Go.
func Long(t testing.TB, why string) {
	t.Helper()
	if testing.Short() {
		skipShort(t, "takes long ("+why+")")
	}
}

// SkippedEnv names the file in which Needs and Long list the tests they
// skip under -short: one line each, the package's directory and the
// top-level test's name, separated by a tab.
const SkippedEnv = "GW10_SKIPPED"

func skipShort(t testing.TB, why string) {
	t.Helper()
	if path := os.Getenv(SkippedEnv); path != "" {
		if err := record(path, t.Name()); err != nil {
			t.Fatalf("recording a skipped test in %s=%s: %v", SkippedEnv, path, err)
		}
	}
	t.Skipf("%s: not run under -short (make test-unit)", why)
}

// record appends the test's package directory (go test runs a test in
// it) and top-level name to path. One short write with O_APPEND: the
// packages' test binaries, running side by side, do not interleave lines.
func record(path, name string) error {
	dir, err := os.Getwd()
	if err != nil {
		return err
	}
	top, _, _ := strings.Cut(name, "/")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(dir + "\t" + top + "\n"); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// Missing says that n is not available on this machine, and why: a loud
// skip, or a failure under CI for a need CI provides.
func Missing(t testing.TB, n Need, why any) {
	t.Helper()
	if n.ci && InCI() {
		t.Fatalf("CI is set, and this test needs %s, which is missing: %v (CI must provide it: make test-deps, run as root)", n.what, why)
	}
	if n.ci {
		t.Skipf("SKIPPED, NOT TESTED HERE: needs %s, which is missing: %v (where CI is set, this fails)", n.what, why)
	}
	t.Skipf("SKIPPED, NOT TESTED HERE: needs %s, which is missing: %v", n.what, why)
}

// Chromium returns the path of chromium on PATH, or is Missing(Browser);
// under -short the test is skipped first (Needs).
func Chromium(t testing.TB) string {
	t.Helper()
	Needs(t, Browser)
	path, err := exec.LookPath("chromium")
	if err != nil {
		Missing(t, Browser, err)
	}
	return path
}

// InCI reports whether the CI environment variable is set (GitHub Actions
// and .ci/run set CI=true); "false" and "0" count as unset.
func InCI() bool {
	switch strings.ToLower(strings.TrimSpace(os.Getenv("CI"))) {
	case "", "0", "false":
		return false
	}
	return true
}

// chromiumFlags run Debian's chromium headless as root, with nothing
// reaching the network.
var chromiumFlags = []string{
	"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
	"--disable-background-networking", "--disable-component-update", "--disable-sync",
	"--hide-scrollbars",
}

// RunChromium runs headless chromium (Chromium's path) with a fresh
// profile under dir and args (a page, --dump-dom, --screenshot=…,
// --window-size=…), and returns what it printed on stdout. A console
// message or an uncaught error of the page fails t.
func RunChromium(t testing.TB, chromium, dir string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	profile, err := os.MkdirTemp(dir, "profile-")
	if err != nil {
		t.Fatal(err)
	}
	all := append(append([]string{"--user-data-dir=" + profile}, chromiumFlags...), args...)
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, chromium, all...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	for _, l := range strings.Split(stderr.String(), "\n") {
		if strings.Contains(l, ":CONSOLE") || strings.Contains(l, "Uncaught") {
			t.Errorf("the page logged: %s", l)
		}
	}
	return stdout.String()
}
