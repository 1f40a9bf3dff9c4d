package grade

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// The cohort workflow (grade-cohort.yml) grades a roster as grade-submission
// .yml grades one submission, once per matrix entry: the rules of
// workflowProblems hold for it, and the rules below for what a roster adds
// (its strings are the learners', its size a cost).

type cohortWorkflow struct {
	Jobs map[string]cohortJob `json:"jobs"`
}

type cohortJob struct {
	If          string            `json:"if"`
	Needs       any               `json:"needs"`
	Permissions any               `json:"permissions"`
	Env         map[string]string `json:"env"`
	Strategy    *struct {
		FailFast    *bool `json:"fail-fast"`
		MaxParallel any   `json:"max-parallel"`
		Matrix      any   `json:"matrix"`
	} `json:"strategy"`
	Steps []wfStep `json:"steps"`
}

// rosterValue: an expression whose value a roster line chose.
var rosterValue = regexp.MustCompile(`\$\{\{[^}]*matrix\.[^}]*\}\}`)

// fetchStepScript is the script of the step that fetches the submission.
func fetchStepScript(steps []wfStep) string {
	for _, s := range steps {
		if strings.Contains(s.Run, "git init --quiet --bare submission.git") {
			return s.Run
		}
	}
	return ""
}

// cohortProblems lists what breaks the cohort workflow's rules, beside
// workflowProblems'. single is grade-submission.yml, whose fetch script the
// cohort's must be.
func cohortProblems(data, single []byte) ([]string, error) {
	out, err := workflowProblems(data, true)
	if err != nil {
		return nil, err
	}
	var wf cohortWorkflow
	if err := yaml.Unmarshal(data, &wf); err != nil {
		return nil, err
	}
	var one workflow
	if err := yaml.Unmarshal(single, &one); err != nil {
		return nil, err
	}
	names := make([]string, 0, len(wf.Jobs))
	for n := range wf.Jobs {
		names = append(names, n)
	}
	sort.Strings(names)
	var fetchers, graders, mergers int
	for _, name := range names {
		j := wf.Jobs[name]
		var plain job
		raw, _ := yaml.Marshal(j)
		_ = yaml.Unmarshal(raw, &plain)
		learner := plain.runsLearnerCode()
		secrets := strings.Contains(string(raw), "secrets.")
		for i, s := range j.Steps {
			if rosterValue.MatchString(s.Run) {
				out = append(out, s.label(name, i)+": a roster's value (a learner's string) is spliced into the script (pass it through env)")
			}
		}
		if j.Strategy != nil {
			if j.Strategy.FailFast == nil || *j.Strategy.FailFast {
				out = append(out, "job "+name+": one submission's failure cancels the others (fail-fast: false)")
			}
			if j.Strategy.MaxParallel == nil {
				out = append(out, "job "+name+": the matrix has no max-parallel (a roster of 200 would take every runner)")
			}
		}
		switch {
		case fetchStepScript(j.Steps) != "":
			fetchers++
			if learner {
				out = append(out, "job "+name+" fetches with the token and runs learner code")
			}
			if fetchStepScript(j.Steps) != fetchStepScript(one.Jobs["fetch"].Steps) {
				out = append(out, "job "+name+": its fetch script is not grade-submission.yml's (one fetch, reviewed once)")
			}
		case learner:
			graders++
			if j.Strategy == nil {
				out = append(out, "job "+name+" grades without a matrix: one runner for the whole roster")
			}
			if !strings.Contains(j.If, "!cancelled()") {
				out = append(out, "job "+name+": a submission that could not be fetched skips every grade (if: !cancelled() && …)")
			}
			for i, s := range j.Steps {
				if !learnerCode.MatchString(s.Run) {
					continue
				}
				sidecar := strings.Index(s.Run, "/reports/submission.json")
				if sidecar < 0 || sidecar < strings.Index(s.Run, "install -d") || sidecar > strings.Index(s.Run, "make grade") {
					out = append(out, s.label(name, i)+": submission.json (the roster's line) is not written beside the reports before learner code runs")
				}
			}
		case strings.Contains(string(raw), "gradebook merge"):
			mergers++
			if secrets {
				out = append(out, "job "+name+" merges the grades with a secret in reach")
			}
		}
	}
	if fetchers == 0 || graders == 0 || mergers == 0 {
		out = append(out, fmt.Sprintf("the workflow needs a fetch job, a grade job and a merge job: it has %d, %d and %d", fetchers, graders, mergers))
	}
	return out, nil
}

func TestTheCohortWorkflowKeepsTheGradesIsolation(t *testing.T) {
	problems, err := cohortProblems(readWorkflow(t, "grade-cohort.yml"), readWorkflow(t, "grade-submission.yml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("grade-cohort.yml: %s", p)
	}
}

// TestTheCohortWorkflowRulesCanFail breaks grade-cohort.yml one way at a
// time and expects the rule that forbids it to speak.
func TestTheCohortWorkflowRulesCanFail(t *testing.T) {
	good := string(readWorkflow(t, "grade-cohort.yml"))
	single := readWorkflow(t, "grade-submission.yml")
	for _, c := range []struct{ name, old, new, want string }{
		{"learner spliced", `--arg learner "$ROSTER_LEARNER"`, `--arg learner "${{ matrix.learner }}"`, "spliced into the script"},
		{"no max-parallel", "      max-parallel: ${{ fromJSON(inputs.parallel) }}\n      matrix:\n        include: ${{ fromJSON(needs.tools.outputs.matrix) }}\n    steps:\n      - name: Check out the instructor's workbook (the harness",
			"      matrix:\n        include: ${{ fromJSON(needs.tools.outputs.matrix) }}\n    steps:\n      - name: Check out the instructor's workbook (the harness", "no max-parallel"},
		{"fail fast", "    permissions: {}\n    strategy:\n      fail-fast: false\n      max-parallel: ${{ fromJSON(inputs.parallel) }}\n      matrix:\n        include: ${{ fromJSON(needs.tools.outputs.matrix) }}\n    steps:",
			"    permissions: {}\n    strategy:\n      max-parallel: ${{ fromJSON(inputs.parallel) }}\n      matrix:\n        include: ${{ fromJSON(needs.tools.outputs.matrix) }}\n    steps:", "fail-fast"},
		{"a fetch of its own", `fetch --quiet --no-tags -- "$SUBMISSION" "$SUBMISSION_REF"`, `fetch --quiet -- "$SUBMISSION" "$SUBMISSION_REF"`, "not grade-submission.yml's"},
		{"a token in the grading job", "          ROSTER_REF: ${{ matrix.ref }}", "          ROSTER_REF: ${{ matrix.ref }}\n          TOKEN: ${{ secrets.GW10_SUBMISSION_TOKEN }}", "reads secrets"},
		{"every grade waits for every fetch", "    if: ${{ !cancelled() && needs.tools.result == 'success' }}\n    runs-on: ubuntu-latest\n    timeout-minutes: 30",
			"    runs-on: ubuntu-latest\n    timeout-minutes: 30", "skips every grade"},
		{"no roster line beside the reports", `> "$RUNNER_TEMP/reports/submission.json"`, `> "$RUNNER_TEMP/submission.json"`, "submission.json (the roster's line) is not written"},
		{"a secret in the merge", "          bin/gw10 gradebook merge", "          echo ${{ secrets.GW10_SUBMISSION_TOKEN }}\n          bin/gw10 gradebook merge", "merges the grades with a secret"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if strings.Count(good, c.old) != 1 {
				t.Fatalf("the text to replace occurs %d times in grade-cohort.yml (update the test)", strings.Count(good, c.old))
			}
			problems, err := cohortProblems([]byte(strings.Replace(good, c.old, c.new, 1)), single)
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
