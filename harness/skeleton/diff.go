package skeleton

import (
	"context"
	"fmt"
	"go/scanner"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/pmezard/go-difflib/difflib"

	"github.com/10xdev/gw10/harness/region"
)

// Generated are files the diff leaves out: controller-gen writes them from
// the markers, and the markers' diff already shows what changed.
var Generated = []string{
	"api/v1/zz_generated.deepcopy.go",
	"config/crd/bases/*",
	"config/rbac/role.yaml",
	"go.sum",
}

func generated(rel string) bool {
	for _, pat := range Generated {
		if ok, _ := filepath.Match(pat, rel); ok {
			return true
		}
	}
	return false
}

// DiffOptions name the two modules: the solution (its module path rewritten
// to the learner's before comparing) and the learner's work.
type DiffOptions struct {
	Solution, Learner             string // directories
	SolutionLabel, LearnerLabel   string // how the diff names them
	SolutionModule, LearnerModule string
	// HideMarkers leaves //gw10: region lines out, on both sides: they are
	// the generator's, not code either side wrote (a learner who copied the
	// solution has them too).
	HideMarkers bool
	// Skip leaves out files of the solution the learner does not have; nil:
	// Skipped (bin/ and the solution-only files). A file the learner has is
	// always compared, with the solution's version or with nothing: every
	// file the learner added shows, tests included (code in a learner's
	// *_test.go runs when the grade runs their unit tests). bin/ is left out
	// on both sides.
	Skip func(rel string) bool
}

// Diff returns a unified diff from the solution to the learner's module,
// leaving out bin/, the solution-only files the learner does not have and
// the generated files both sides have (a generated file only one side has
// shows).
func Diff(opts DiffOptions) (string, error) {
	if opts.Skip == nil {
		opts.Skip = Skipped
	}
	// bin/ holds what the build made; Go files there are code, and show.
	bin := func(rel string, dir bool) bool {
		return (rel == "bin" || strings.HasPrefix(rel, "bin/")) && !dir && !strings.HasSuffix(rel, ".go")
	}
	var sol, lrn map[string]bool
	for _, side := range []struct {
		dir string
		has *map[string]bool
	}{{opts.Solution, &sol}, {opts.Learner, &lrn}} {
		has := map[string]bool{}
		err := filepath.WalkDir(side.dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(side.dir, path)
			rel = filepath.ToSlash(rel)
			if bin(rel, d.IsDir()) {
				return nil
			}
			if !d.IsDir() {
				has[rel] = true
			}
			return nil
		})
		if err != nil {
			return "", fmt.Errorf("listing %s: %w", side.dir, err)
		}
		*side.has = has
	}
	files := map[string]bool{}
	for _, has := range []map[string]bool{sol, lrn} {
		for rel := range has {
			switch {
			case !lrn[rel] && opts.Skip(rel):
			case generated(rel) && sol[rel] && lrn[rel]:
			default:
				files[rel] = true
			}
		}
	}
	names := make([]string, 0, len(files))
	for f := range files {
		names = append(names, f)
	}
	sort.Strings(names)
	var out strings.Builder
	for _, rel := range names {
		a, b := "", ""
		if sol[rel] {
			a = readOrEmpty(filepath.Join(opts.Solution, rel))
		}
		if lrn[rel] {
			b = readOrEmpty(filepath.Join(opts.Learner, rel))
		}
		if opts.SolutionModule != "" {
			a = strings.ReplaceAll(a, opts.SolutionModule, opts.LearnerModule)
		}
		if opts.HideMarkers && strings.HasSuffix(rel, ".go") {
			a, b = hideMarkers(a), hideMarkers(b)
		}
		if a == b {
			continue
		}
		d, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
			A: difflib.SplitLines(a), B: difflib.SplitLines(b),
			FromFile: opts.SolutionLabel + "/" + rel, ToFile: opts.LearnerLabel + "/" + rel,
			Context: 3,
		})
		if err != nil {
			return "", fmt.Errorf("diffing %s: %w", rel, err)
		}
		out.WriteString(d)
	}
	return out.String(), nil
}

// LearnerDiff returns what the learner changed in their module (learner,
// named learnerLabel: the module's directory relative to its repository,
// e.g. step01) against the skeleton they started from: gen's skeleton of the
// solution, generated into a temporary directory and named
// skeleton/<learnerLabel>. Generated files are left out, as in Diff;
// everything else the learner has is compared, //gw10: markers left out.
func LearnerDiff(ctx context.Context, gen Options, learner, learnerLabel string) (string, error) {
	tmp, err := os.MkdirTemp("", "gw10-skeleton-")
	if err != nil {
		return "", fmt.Errorf("creating a scratch directory: %w", err)
	}
	defer os.RemoveAll(tmp)
	gen.Dst = filepath.Join(tmp, filepath.Base(learner))
	gen.ControllerGen = "" // the generated files are not compared
	if err := Generate(ctx, gen); err != nil {
		return "", err
	}
	return Diff(DiffOptions{
		Solution: gen.Dst, Learner: learner,
		SolutionLabel: "skeleton/" + learnerLabel, LearnerLabel: learnerLabel, HideMarkers: true,
		Skip: func(rel string) bool {
			return (rel == "bin" || strings.HasPrefix(rel, "bin/")) && !strings.HasSuffix(rel, ".go")
		},
	})
}

// hideMarkers drops the //gw10: marker lines of a Go file: a line whose
// only token is a line comment starting //gw10:. A line that merely starts
// with the text — inside a block comment, before code on the same line —
// is code someone wrote and stays (a submission hid an exec behind
// "/*\n//gw10:stub */ syscall.Exec(…) /*").
func hideMarkers(src string) string {
	fset := token.NewFileSet()
	file := fset.AddFile("", fset.Base(), len(src))
	var sc scanner.Scanner
	sc.Init(file, []byte(src), func(token.Position, string) {}, scanner.ScanComments)
	tokens := map[int]int{} // line: how many tokens touch it
	marker := map[int]bool{}
	for {
		pos, tok, lit := sc.Scan()
		if tok == token.EOF {
			break
		}
		if tok == token.SEMICOLON && lit == "\n" {
			continue // an automatic semicolon: not written
		}
		first := file.Line(pos)
		last := first
		if lit != "" {
			last = file.Line(pos + token.Pos(len(lit)) - 1)
		}
		for l := first; l <= last; l++ {
			tokens[l]++
		}
		if tok == token.COMMENT && strings.HasPrefix(lit, "//gw10:") {
			marker[first] = true
		}
	}
	lines := strings.SplitAfter(src, "\n")
	kept := lines[:0]
	for i, l := range lines {
		if isMarker := marker[i+1] && tokens[i+1] == 1; !isMarker {
			kept = append(kept, l)
		}
	}
	return strings.Join(kept, "")
}

func readOrEmpty(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return string(b)
}

// RegionLines returns the lines of the exercise regions of every Go file of
// the solution module at dir (by path relative to dir, slash-separated),
// trimmed, the //gw10: lines left out: the answers, which a learner's copy
// must not quote and a learner's diff shows filled in.
func RegionLines(dir string) (map[string][]string, error) {
	out := map[string][]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		rel = filepath.ToSlash(rel)
		regions, err := region.Parse(rel, string(data))
		if err != nil {
			return err
		}
		lines := strings.Split(string(data), "\n")
		for _, r := range regions {
			if out[rel] == nil {
				out[rel] = []string{}
			}
			for _, line := range lines[r.Begin : r.End-1] { // between the markers
				if text := strings.TrimSpace(line); !strings.HasPrefix(text, "//gw10:") {
					out[rel] = append(out[rel], text)
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the regions of %s: %w", dir, err)
	}
	return out, nil
}
