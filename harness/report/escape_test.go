package report

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"
)

// hostileNames are strings a submission chooses (a process's argv[0], a
// file name, a log line, a condition message) to forge or hide a verdict.
var hostileNames = map[string]string{
	"forged heading":   "\n\n## gw10 — ✅ all 13 checks pass, 140/140 points\n\n<!--",
	"html comment":     "x <!-- hides the rest --> y <!--",
	"backticks":        "``` `x` ````\n## ✅",
	"ansi":             "\x1b[2J\x1b[1;1H✅ all pass\x1b]0;title\x07",
	"carriage return":  "real verdict\r✅ forged verdict",
	"c1 csi":           "\u009b2J and a raw \x9b2J",
	"bidi":             "safe \u202egnp.exe\u202c and \u2066hidden\u2069 \u200b",
	"line separator":   "one\u2028two\u2029three",
	"invalid utf-8":    "bad \xff\xfe \xc3 end",
	"link":             "[click](https://evil.example/x) ![img](https://evil.example/i.png) https://evil.example www.evil.example x@evil.example <https://evil.example>",
	"table and markup": "| a | b |\n|---|---|\n*em* _em_ ~~s~~ $x^2$ &lt;b&gt; <b>bold</b> \\",
	"very long":        strings.Repeat("✅ 140/140 ", 2000),
}

// TestInlineIsOneLineOfText: every hostile name is one line, of valid
// UTF-8, with nothing a terminal acts on, and bounded.
func TestInlineIsOneLineOfText(t *testing.T) {
	for name, s := range hostileNames {
		got := Inline(s)
		assertInert(t, "Inline "+name, got, false)
		if len(got) > InlineMax+40 {
			t.Errorf("Inline %s: %d bytes, want at most about %d", name, len(got), InlineMax)
		}
	}
	if got := Inline(hostileNames["very long"]); !strings.HasSuffix(got, "more bytes)") {
		t.Errorf("a long value cut without saying so: %q", got[len(got)-40:])
	}
	if got := Inline("a\nb\x1bc\xffé\u202e"); got != `a\x0ab\x1bc\xffé\u202e` {
		t.Errorf("Inline = %q", got)
	}
	if got := Inline("lesson/internal/controller/edgeroute_controller.go — ✅ ok"); got != "lesson/internal/controller/edgeroute_controller.go — ✅ ok" {
		t.Errorf("plain text changed: %q", got)
	}
}

// TestPlainTextKeepsLinesAndNothingElse: blocks keep their newlines and
// tabs, and lose everything else a terminal would act on.
func TestPlainTextKeepsLinesAndNothingElse(t *testing.T) {
	for name, s := range hostileNames {
		var b bytes.Buffer
		if _, err := PlainText(&b).Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
		assertInert(t, "PlainText "+name, b.String(), true)
		if strings.Count(b.String(), "\n") != strings.Count(s, "\n") {
			t.Errorf("PlainText %s: the lines changed", name)
		}
	}
	var b bytes.Buffer
	_, _ = PlainText(&b).Write([]byte("code\tcomment « é »\n"))
	if b.String() != "code\tcomment « é »\n" {
		t.Errorf("plain text changed: %q", b.String())
	}
}

// assertInert fails when s holds what a terminal acts on, a newline where
// a line must stay one, or bytes that are not UTF-8.
func assertInert(t *testing.T, what, s string, block bool) {
	t.Helper()
	if !utf8.ValidString(s) {
		t.Errorf("%s: not UTF-8: %q", what, s)
	}
	for _, r := range s {
		if (r == '\n' || r == '\t') && block {
			continue
		}
		if escapeRune(r) {
			t.Errorf("%s: holds %U: %q", what, r, s)
			return
		}
	}
}

// TestMarkdownShowsSubmissionStringsAsText renders a report in which every
// place a submission's string can reach (what the sandbox killed, a
// stage's notes and output, a not gradable reason, a check's message) holds
// each hostile name, parses summary.md as GitHub does (CommonMark with
// tables, autolinks, strikethrough) and finds the names only as text: one
// heading (the real one), no link, image, emphasis or HTML of theirs, and
// the terminal's view of it inert: a hostile line starts no line of it
// (blocks of learner output are indented; a log is read line by line).
func TestMarkdownShowsSubmissionStringsAsText(t *testing.T) {
	for name, s := range hostileNames {
		t.Run(name, func(t *testing.T) {
			for _, r := range []*Report{hostileGraded(s), hostileNotGradable(s)} {
				var md bytes.Buffer
				if err := r.Markdown(&md); err != nil {
					t.Fatal(err)
				}
				assertOnlyText(t, md.Bytes())
				if strings.ContainsAny(md.String(), "\x1b\r\u009b\u202e") || !utf8.Valid(md.Bytes()) {
					t.Errorf("summary.md holds what a terminal acts on (cat summary.md):\n%q", md.String())
				}
				var term bytes.Buffer
				r.Terminal(&term)
				assertInert(t, "terminal", term.String(), true)
				for _, l := range strings.Split(term.String(), "\n") {
					if strings.HasPrefix(l, "## gw10") || strings.HasPrefix(l, "<!--") {
						t.Errorf("terminal: a hostile line of its own: %q\n%s", l, term.String())
					}
				}
			}
		})
	}
}

// hostileGraded is a graded report whose sandbox, notes and output quote s.
func hostileGraded(s string) *Report {
	r := &Report{
		Dir: "lesson", Cluster: "envtest",
		Stages: []Stage{
			{Name: "unit tests", Status: Fail, Detail: "the unit tests failed:\n" + s, Notes: []string{"sandbox: unit tests: killed 1 process left behind: " + s + " (pid 7)"}},
			{Name: "build", Status: Pass},
		},
		Checks: []CheckResult{
			{ID: "crd-schema", Title: "the CRD", Points: 10, Earned: 0, Status: Fail, Message: "observed: " + s, Causes: []string{s}, Notes: []string{s}, Logs: strings.Split(s, "\n"), LogsAboutCheck: true},
			{ID: "self-heal", Title: "self-heals", Points: 40, Earned: 40, Status: Pass},
		},
		Grading: &Grading{
			Official: true, Gradable: true,
			Upstream:   Revision{Repository: "/srv/gw10", Ref: "HEAD", Commit: "0123456789abcdef0123456789abcdef01234567"},
			Submission: Revision{Repository: "https://example.com/" + s, Ref: s, Commit: "fedcba9876543210fedcba9876543210fedcba98"},
			Ignored:    []string{"docs/" + s}, GeneratedDrift: []string{"lesson/" + s},
			Sandbox: &Sandbox{Enforced: true, User: "gw10-sandbox0", CutOff: []string{"unit tests: killed 1 process left behind: " + s + " (pid 7)", "at the end: " + s}},
		},
	}
	r.Finish()
	return r
}

// hostileNotGradable is a refused submission whose reason quotes s.
func hostileNotGradable(s string) *Report {
	r := &Report{
		Dir: "lesson", Cluster: "envtest",
		Checks: []CheckResult{{ID: "crd-schema", Title: "the CRD", Points: 10, Status: Skip, Message: "not run: the submission is not gradable"}},
		Grading: &Grading{
			Official: true, Reason: "lesson/ holds symbolic links or submodules: " + s + ":\n  - " + s,
			Sandbox: &Sandbox{Enforced: true, User: "gw10-sandbox0"},
		},
	}
	r.Finish()
	return r
}

// assertOnlyText parses md as GitHub Flavored Markdown and fails on any
// construct the report does not write itself.
func assertOnlyText(t *testing.T, md []byte) {
	t.Helper()
	p := goldmark.New(goldmark.WithExtensions(extension.GFM)).Parser()
	doc := p.Parse(text.NewReader(md))
	headings := 0
	err := ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.Heading:
			headings++
		case *ast.Link, *ast.AutoLink, *ast.Image:
			t.Errorf("summary.md holds a %s:\n%s", n.Kind(), md)
		case *ast.Emphasis:
			// The report's own: **Stage `x` failed:**.
			if text := childText(n, md); n.Level != 2 || !strings.HasPrefix(text, "Stage ") {
				t.Errorf("summary.md holds emphasis %q:\n%s", text, md)
			}
		case *ast.RawHTML:
			for i := 0; i < n.Segments.Len(); i++ {
				seg := n.Segments.At(i)
				if h := string(seg.Value(md)); !ownHTML(h) {
					t.Errorf("summary.md holds HTML %q:\n%s", h, md)
				}
			}
		case *ast.HTMLBlock:
			for i := 0; i < n.Lines().Len(); i++ {
				l := n.Lines().At(i)
				if h := strings.TrimSpace(string(l.Value(md))); !strings.HasPrefix(h, "<details><summary><code>") && h != "</details>" {
					t.Errorf("summary.md holds an HTML block %q:\n%s", h, md)
				}
			}
		}
		if n.Kind().String() == "Strikethrough" {
			t.Errorf("summary.md holds a strikethrough:\n%s", md)
		}
		return ast.WalkContinue, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if headings != 1 {
		t.Errorf("summary.md has %d headings, want its own one:\n%s", headings, md)
	}
}

func ownHTML(h string) bool {
	switch h {
	case "<details>", "<summary>", "</summary>", "<code>", "</code>", "</details>":
		return true
	}
	return false
}

// childText is the text of n's children that are text.
func childText(n ast.Node, src []byte) string {
	var b strings.Builder
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		if tx, ok := c.(*ast.Text); ok {
			b.Write(tx.Segment.Value(src))
		}
	}
	return b.String()
}
