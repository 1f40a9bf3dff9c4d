package gradebook

import (
	"bytes"
	"fmt"
	"github.com/10xdev/gw10/harness/testenv"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/10xdev/gw10/harness/report"
)

// Hostile strings a learner chooses: markup in a name, a path and a ref,
// a check message that closes its <pre>, a right-to-left override.
const (
	hostileName = `<img src=x onerror="document.title='pwned'">Mallory`
	hostileRepo = `/cohort/"><svg onload="document.title='pwned'">`
	hostileRef  = `x<img_src=x_onerror=alert(1)>`
	hostileMsg  = "expected a reconcile</pre><script>document.title='pwned'</script>\u202eobserved"
)

// hostileBook is a gradebook of four learners, one of them hostile, one
// not gradable, one without a grade.
func hostileBook() *Book {
	P, F := report.Pass, report.Fail
	rows := []Row{
		{Learner: "Ada", Repository: "/cohort/ada", Ref: "main", Report: fixtureReport("/cohort/ada", "main", strings.Repeat("a", 40), graderCommit, "", P, P, P)},
		{Learner: "Bob", Repository: "/cohort/bob", Report: fixtureReport("/cohort/bob", "HEAD", strings.Repeat("b", 40), graderCommit, "expected a reconcile", P, F, F)},
		{Learner: hostileName, Repository: hostileRepo, Ref: hostileRef, Report: fixtureReport(hostileRepo, hostileRef, strings.Repeat("c", 40), graderCommit, hostileMsg, P, F, P)},
		{Learner: "Ivan", Repository: "/cohort/ivan", Report: fixtureReport("/cohort/ivan", "HEAD", strings.Repeat("d", 40), graderCommit, "")},
		{Learner: "Gone", Repository: "/cohort/gone", NoGrade: "cloning the submission: " + hostileRepo + " does not exist"},
	}
	for i := range rows {
		if rows[i].Report != nil {
			rows[i].Commit, rows[i].GraderCommit = rows[i].Report.Grading.Submission.Commit, graderCommit
		}
	}
	return NewBook(rows)
}

// TestTheGradebookHTMLEscapesWhatLearnersChose: no learner string reaches
// the page as markup, and the page loads nothing.
func TestTheGradebookHTMLEscapesWhatLearnersChose(t *testing.T) {
	var buf bytes.Buffer
	if err := hostileBook().WriteHTML(&buf, t.TempDir()); err != nil {
		t.Fatal(err)
	}
	html := buf.String()
	for _, bad := range []string{"<img", "<svg", "<script>document", "</pre><script>", `"><svg`} {
		if strings.Contains(html, bad) {
			t.Errorf("the page holds %q as markup", bad)
		}
	}
	if strings.ContainsRune(html, '\u202e') {
		t.Error("a right-to-left override reached the page")
	}
	for _, want := range []string{"&lt;img src=x onerror=", "&lt;svg onload=", "&lt;/pre&gt;&lt;script&gt;", `\u202eobserved`} {
		if !strings.Contains(html, want) {
			t.Errorf("the page does not show %q as text", want)
		}
	}
	assertOffline(t, html)
}

// assertOffline: the page asks for nothing (no src, no stylesheet link)
// and forbids every request in its Content-Security-Policy.
func assertOffline(t *testing.T, html string) {
	t.Helper()
	if !strings.Contains(html, `content="default-src 'none';`) {
		t.Error("the page has no Content-Security-Policy forbidding requests")
	}
	if m := regexp.MustCompile(`(?i)<(img|script|link|iframe)[^>]*\s(src|href)=`).FindString(html); m != "" {
		t.Errorf("the page loads a resource: %s", m)
	}
}

// TestTheGradebookInChromium opens the gradebook of a hostile cohort in
// chromium, sorted by points from its address: the script ran, the rows
// are in that order, both heat maps are drawn with each check's count, and
// no learner string became an element.
func TestTheGradebookInChromium(t *testing.T) {
	chromium := testenv.Chromium(t)
	dir := t.TempDir()
	b := hostileBook()
	_, page, err := b.Write(dir)
	if err != nil {
		t.Fatal(err)
	}
	dom := testenv.RunChromium(t, chromium, dir, "--window-size=1400,1400", "--dump-dom", "file://"+page+"#sort=-points")
	for _, want := range []string{
		`data-gradebook="ready"`, `data-sorted="-points"`, `aria-sort="descending"`,
		`data-heatmap="checks"`, `data-heatmap="clauses"`,
		// self-heal: Bob and Mallory failed it, Ivan's was not run: 3 of 4 graded.
		`data-col="self-heal" data-failing="3"`, `data-col="crd-schema" data-failing="1"`,
		`data-col="Q-NO-POLL" data-failing="3"`,
		`href="#learner-`, "&lt;img src=x onerror=",
	} {
		if !strings.Contains(dom, want) {
			t.Errorf("the rendered page lacks %s", want)
		}
	}
	if strings.Contains(dom, "<title>pwned") || strings.Contains(dom, "<img") || strings.Contains(dom, "<svg") {
		t.Error("a learner's string became an element of the page, or ran")
	}
	// The table's rows, top to bottom, by points: Ada 40, Mallory 20, Bob 10, Ivan 0, Gone none.
	table := dom[strings.Index(dom, `id="book"`):strings.Index(dom, `data-heatmap="checks"`)]
	var order []string
	for _, m := range regexp.MustCompile(`data-row="(learner-\d+)"`).FindAllStringSubmatch(table, -1) {
		order = append(order, m[1])
	}
	anchor := func(learner string) string {
		for i, r := range b.Rows {
			if r.Learner == learner {
				return fmt.Sprintf("learner-%d", i+1)
			}
		}
		return "?"
	}
	want := []string{anchor("Ada"), anchor(hostileName), anchor("Bob"), anchor("Ivan"), anchor("Gone")}
	if strings.Join(order, " ") != strings.Join(want, " ") {
		t.Errorf("sorted by points the rows are %v, want %v", order, want)
	}
	shot := filepath.Join(dir, "gradebook.png")
	testenv.RunChromium(t, chromium, dir, "--window-size=1400,1400", "--screenshot="+shot, "file://"+page)
	if st, err := os.Stat(shot); err != nil || st.Size() < 10_000 {
		t.Errorf("no screenshot of the page, or an empty one: %v", err)
	}
	if out := os.Getenv("GW10_GRADEBOOK_SCREENSHOT"); out != "" {
		data, _ := os.ReadFile(shot)
		_ = os.WriteFile(out, data, 0o644)
	}
}
