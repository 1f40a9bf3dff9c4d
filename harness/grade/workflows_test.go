package grade

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// The workflows are part of the grade's trust: a submission is hostile input,
// and the job that runs its code must hold nothing it could use. These tests
// assert that of the YAML itself (actionlint only checks that it is valid).

type workflow struct {
	Permissions any            `json:"permissions"`
	Jobs        map[string]job `json:"jobs"`
}

type job struct {
	Permissions any               `json:"permissions"`
	Needs       any               `json:"needs"`
	Env         map[string]string `json:"env"`
	Steps       []wfStep          `json:"steps"`
}

type wfStep struct {
	Name string            `json:"name"`
	Uses string            `json:"uses"`
	Run  string            `json:"run"`
	With map[string]any    `json:"with"`
	Env  map[string]string `json:"env"`
}

// learnerCode: a step that builds or runs the submission's code.
var learnerCode = regexp.MustCompile(`\bmake\b[^\n]*\b(grade|check|test|run)\b|\bgo (test|run)\b`)

// untrusted: expressions whose value whoever triggers the run chooses.
var untrusted = regexp.MustCompile(`\$\{\{[^}]*(inputs\.|github\.event\.|github\.head_ref)[^}]*\}\}`)

func (s wfStep) label(job string, i int) string {
	name := s.Name
	if name == "" {
		name = s.Uses
	}
	return fmt.Sprintf("job %s, step %d (%s)", job, i+1, name)
}

func (j job) runsLearnerCode() bool {
	for _, s := range j.Steps {
		if learnerCode.MatchString(s.Run) {
			return true
		}
	}
	return false
}

// savesCache: actions/cache (saves after the job), actions/cache/save, or
// setup-go with its own cache on (it saves in its post step).
func (s wfStep) savesCache() bool {
	switch {
	case strings.HasPrefix(s.Uses, "actions/cache/save@"), strings.HasPrefix(s.Uses, "actions/cache@"):
		return true
	case strings.HasPrefix(s.Uses, "actions/setup-go@"):
		return fmt.Sprint(s.With["cache"]) != "false"
	}
	return false
}

func emptyPermissions(p any) bool {
	m, ok := p.(map[string]any)
	return ok && len(m) == 0
}

func needsList(n any) []string {
	switch v := n.(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, x := range v {
			out = append(out, fmt.Sprint(x))
		}
		return out
	}
	return nil
}

// workflowProblems lists what lets a job's learner code reach credentials,
// caches, other steps or the reports. grading says whether this is the
// instructor's grading workflow, which is held to the stricter rules.
func workflowProblems(data []byte, grading bool) ([]string, error) {
	var wf workflow
	if err := yaml.Unmarshal(data, &wf); err != nil {
		return nil, fmt.Errorf("parsing the workflow: %w", err)
	}
	var out []string
	names := make([]string, 0, len(wf.Jobs))
	for n := range wf.Jobs {
		names = append(names, n)
	}
	sort.Strings(names)
	if grading && !emptyPermissions(wf.Permissions) {
		out = append(out, "the workflow's default permissions are not {}")
	}
	graders := 0
	for _, name := range names {
		j := wf.Jobs[name]
		raw, _ := json.Marshal(j)
		learner := j.runsLearnerCode()
		for i, s := range j.Steps {
			if strings.HasPrefix(s.Uses, "actions/checkout@") && fmt.Sprint(s.With["persist-credentials"]) != "false" {
				out = append(out, s.label(name, i)+": checkout leaves the job token in .git/config (persist-credentials: false)")
			}
			if untrusted.MatchString(s.Run) {
				out = append(out, s.label(name, i)+": an input chosen by whoever triggered the run is spliced into the script (pass it through env)")
			}
			if strings.Contains(s.Run, "git config --global") || strings.Contains(s.Run, "insteadOf") {
				out = append(out, s.label(name, i)+": writes git credentials where later processes find them")
			}
			if strings.Contains(s.Run, "extraHeader") {
				out = append(out, tokenScopeProblems(s.Run, s.label(name, i))...)
			}
			if learner && grading && s.savesCache() {
				out = append(out, s.label(name, i)+": saves a cache in a job that runs learner code (a submission could poison later grades)")
			}
		}
		if !grading || !learner {
			continue
		}
		graders++
		if !emptyPermissions(j.Permissions) {
			out = append(out, "job "+name+" runs learner code with a token that has permissions (permissions: {})")
		}
		if strings.Contains(string(raw), "secrets.") {
			out = append(out, "job "+name+" runs learner code in a job that reads secrets")
		}
		for k := range j.Env {
			out = append(out, "job "+name+" runs learner code with job-wide env "+k+" (give each step only what it needs)")
		}
		for i, s := range j.Steps {
			if !learnerCode.MatchString(s.Run) {
				continue
			}
			if !strings.Contains(s.Run, `GRADE_OUT="$RUNNER_TEMP/`) {
				out = append(out, s.label(name, i)+": the reports are not written under $RUNNER_TEMP (GRADE_OUT), outside the checkout learner code is graded in")
			}
			if !strings.Contains(s.Run, "install -d") || strings.Index(s.Run, "install -d") > strings.Index(s.Run, "make grade") {
				out = append(out, s.label(name, i)+": the reports directory is not created before learner code runs")
			}
		}
		uploadsReports := false
		for _, s := range j.Steps {
			if strings.HasPrefix(s.Uses, "actions/upload-artifact@") && strings.HasPrefix(fmt.Sprint(s.With["path"]), "${{ runner.temp }}/reports") {
				uploadsReports = true
			}
		}
		if !uploadsReports {
			out = append(out, "job "+name+" does not upload the reports from ${{ runner.temp }}/reports")
		}
		fetchers := 0
		for _, n := range needsList(j.Needs) {
			dep := wf.Jobs[n]
			depRaw, _ := json.Marshal(dep)
			if strings.Contains(string(depRaw), "secrets.") {
				fetchers++
				if dep.runsLearnerCode() {
					out = append(out, "job "+n+" reads secrets and runs learner code")
				}
			}
		}
		if fetchers == 0 {
			out = append(out, "job "+name+" does not receive the submission from a job of its own (needs: a fetch job holding the token)")
		}
	}
	if grading && graders == 0 {
		out = append(out, "no job runs make grade")
	}
	return out, nil
}

// tokenScopeProblems lists how a step that gives git an Authorization
// header could send it to a host other than the forge's: a header for every
// URL, a submission on any host, a redirect followed. (The header's reach
// is proved by running the step: TestTheSubmissionTokenGoesToTheForgeOnly.)
func tokenScopeProblems(run, label string) []string {
	var out []string
	if strings.Contains(run, "http.extraHeader") {
		out = append(out, label+": the token's header is sent to every host (http.extraHeader): scope it to the forge's URL (http.<url>.extraHeader)")
	}
	if !strings.Contains(run, `case "$SUBMISSION" in`) || !strings.Contains(run, `"$forge"*)`) {
		out = append(out, label+": a submission on any host is fetched with the token: refuse those not on the forge")
	}
	if !strings.Contains(run, "http.followRedirects=false") {
		out = append(out, label+": git follows redirects, which could carry the token to another host (http.followRedirects=false)")
	}
	return out
}

func readWorkflow(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", ".github", "workflows", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestTheWorkflowsHoldNothingASubmissionCanUse(t *testing.T) {
	for _, c := range []struct {
		file    string
		grading bool
	}{{"grade-submission.yml", true}, {"grade.yml", false}} {
		problems, err := workflowProblems(readWorkflow(t, c.file), c.grading)
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		for _, p := range problems {
			t.Errorf("%s: %s", c.file, p)
		}
	}
}

// TestTheWorkflowRulesCanFail breaks grade-submission.yml one way at a time
// and expects the rule that forbids it to speak.
func TestTheWorkflowRulesCanFail(t *testing.T) {
	good := string(readWorkflow(t, "grade-submission.yml"))
	for _, c := range []struct{ name, old, new, want string }{
		{"credentials persisted", "          persist-credentials: false\n      - uses: actions/setup-go@v5\n        with:\n          go-version: \"1.26\"\n          cache: false\n      # Read-only",
			"      - uses: actions/setup-go@v5\n        with:\n          go-version: \"1.26\"\n          cache: false\n      # Read-only", "persist-credentials"},
		{"grading job with a token", "    timeout-minutes: 30\n    permissions: {}\n    steps:", "    timeout-minutes: 30\n    permissions:\n      contents: read\n    steps:", "with a token that has permissions"},
		{"secret in the grading job", "          SUBMISSION_COMMIT: ${{ needs.fetch.outputs.commit }}", "          SUBMISSION_COMMIT: ${{ needs.fetch.outputs.commit }}\n          TOKEN: ${{ secrets.GW10_SUBMISSION_TOKEN }}", "reads secrets"},
		{"setup-go caching in the grading job", "          cache: false\n      # Read-only", "          cache: true\n      # Read-only", "saves a cache"},
		{"reports in the checkout", `GRADE_OUT="$RUNNER_TEMP/reports"`, `GRADE_OUT=reports`, "under $RUNNER_TEMP"},
		{"input spliced into the script", `SUBMISSION_REF="$SUBMISSION_COMMIT"`, `SUBMISSION_REF="${{ inputs.ref }}"`, "spliced into the script"},
		{"default permissions", "permissions: {}\n\n# One grading", "permissions:\n  contents: read\n\n# One grading", "default permissions"},
		{"the token for every host", `-c "http.${forge}.extraHeader=`, `-c "http.extraHeader=`, "sent to every host"},
		{"a submission on any host", `"$forge"*) ;;`, `*) ;;`, "on any host"},
		{"redirects followed", `-c http.followRedirects=false `, ``, "follows redirects"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if strings.Count(good, c.old) != 1 {
				t.Fatalf("the text to replace occurs %d times in grade-submission.yml (update the test)", strings.Count(good, c.old))
			}
			problems, err := workflowProblems([]byte(strings.Replace(good, c.old, c.new, 1)), true)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range problems {
				if strings.Contains(p, c.want) {
					return
				}
			}
			t.Errorf("no problem says %q; got %q", c.want, problems)
		})
	}
}
