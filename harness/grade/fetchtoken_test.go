package grade

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"sigs.k8s.io/yaml"
)

// fetchScript is the run script of grade-submission.yml's step that
// fetches the submission with the token.
func fetchScript(t *testing.T) string {
	t.Helper()
	var wf workflow
	if err := yaml.Unmarshal(readWorkflow(t, "grade-submission.yml"), &wf); err != nil {
		t.Fatal(err)
	}
	for _, s := range wf.Jobs["fetch"].Steps {
		if strings.HasPrefix(s.Name, "Fetch the submission") {
			return s.Run
		}
	}
	t.Fatal("grade-submission.yml's fetch job has no step 'Fetch the submission …'")
	return ""
}

// gitServer serves the repositories under root over HTTPS (git's smart HTTP
// protocol, through git http-backend) and records the Authorization header
// of every request by the host it was sent to. A path under /moved/ is
// redirected to the same path on the host redirect names.
type gitServer struct {
	*httptest.Server
	redirect string
	mu       sync.Mutex
	auth     map[string][]string // host -> the Authorization headers it received ("" when none)
}

func newGitServer(t *testing.T, root string) *gitServer {
	t.Helper()
	execPath, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Fatal(err)
	}
	backend := &cgi.Handler{
		Path: filepath.Join(strings.TrimSpace(string(execPath)), "git-http-backend"),
		Env:  []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"},
	}
	g := &gitServer{auth: map[string][]string{}}
	g.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.mu.Lock()
		g.auth[r.Host] = append(g.auth[r.Host], r.Header.Get("Authorization"))
		g.mu.Unlock()
		if rest, ok := strings.CutPrefix(r.URL.Path, "/moved/"); ok {
			http.Redirect(w, r, "https://"+g.redirect+"/"+rest+"?"+r.URL.RawQuery, http.StatusFound)
			return
		}
		backend.ServeHTTP(w, r)
	}))
	t.Cleanup(g.Close)
	return g
}

// sent is what host received: whether it was asked anything, and whether
// any request carried want.
func (g *gitServer) sent(host, want string) (asked, carried bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, a := range g.auth[host] {
		if a == want {
			carried = true
		}
	}
	return len(g.auth[host]) > 0, carried
}

func (g *gitServer) reset() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.auth = map[string][]string{}
}

// TestTheSubmissionTokenGoesToTheForgeOnly runs the fetch step's own script
// against a git server on two hosts, 127.0.0.1 (the forge) and localhost
// (anyone else): the token reaches the forge when the submission is there,
// and never the other host — named directly, or through a redirect from
// the forge. The step as it was (the header for every URL) is run too, to
// show the test sees the leak.
func TestTheSubmissionTokenGoesToTheForgeOnly(t *testing.T) {
	if testing.Short() {
		t.Skip("runs git against a local HTTPS server")
	}
	root := t.TempDir()
	work := filepath.Join(t.TempDir(), "learner")
	for _, args := range [][]string{
		{"init", "--quiet", "-b", "main", work},
		{"-C", work, "-c", "user.name=l", "-c", "user.email=l@example.com", "commit", "--quiet", "--allow-empty", "-m", "work"},
		{"clone", "--quiet", "--bare", work, filepath.Join(root, "learner.git")},
	} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	srv := newGitServer(t, root)
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	forge, other := u.Host, "localhost:"+u.Port() // 127.0.0.1:port, and the same server by another name
	srv.redirect = other
	const token = "ghs_FETCHtokenUNDERtest"
	header := "Basic " + base64.StdEncoding.EncodeToString([]byte("x-access-token:"+token))
	script := fetchScript(t)

	run := func(t *testing.T, script, submission, token string) (string, error) {
		t.Helper()
		dir := t.TempDir()
		cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script)
		cmd.Dir = dir
		cmd.Env = []string{
			"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0",
			"GIT_SSL_NO_VERIFY=1", // the test server's certificate
			"SUBMISSION=" + submission, "SUBMISSION_REF=main", "TOKEN=" + token, "FORGE=https://" + forge,
			"RUNNER_TEMP=" + dir, "GITHUB_OUTPUT=" + filepath.Join(dir, "output"),
		}
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	for _, c := range []struct {
		name, submission, token string
		fetched                 bool
	}{
		{"a private submission on the forge", "https://" + forge + "/learner.git", token, true},
		{"a submission on another host", "https://" + other + "/learner.git", token, false},
		{"a submission the forge redirects to another host", "https://" + forge + "/moved/learner.git", token, false},
		{"a public submission anywhere, without a token", "https://" + other + "/learner.git", "", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv.reset()
			out, err := run(t, script, c.submission, c.token)
			if (err == nil) != c.fetched {
				t.Fatalf("fetched: %v, want %v\n%s", err == nil, c.fetched, out)
			}
			if _, carried := srv.sent(other, header); carried {
				t.Errorf("%s received the token\n%s", other, out)
			}
			if asked, _ := srv.sent(other, header); asked && c.token != "" {
				t.Errorf("%s was asked anything with a token set\n%s", other, out)
			}
			if _, carried := srv.sent(forge, header); c.fetched && c.token != "" && !carried {
				t.Errorf("the forge did not receive the token\n%s", out)
			}
			if !c.fetched && !strings.Contains(out, "::error::") && !strings.Contains(out, "error: 302") {
				t.Errorf("the refusal does not say why:\n%s", out)
			}
		})
	}
	t.Run("the step as it was leaks the token", func(t *testing.T) {
		srv.reset()
		old := fmt.Sprintf("%s\nauth=(-c \"http.extraHeader=Authorization: %s\")\ngit init --quiet --bare submission.git\ngit -C submission.git \"${auth[@]}\" fetch --quiet --no-tags -- \"$SUBMISSION\" \"$SUBMISSION_REF\"\n", "set -e", header)
		out, err := run(t, old, "https://"+forge+"/moved/learner.git", token)
		if _, carried := srv.sent(other, header); !carried {
			t.Errorf("the unscoped header did not reach %s through the redirect (err %v): the test cannot see a leak\n%s", other, err, out)
		}
	})
}
