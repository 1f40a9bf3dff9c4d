package grade

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/semver"

	"github.com/10xdev/gw10/harness/report"
)

// The submission's go.mod is data, not instructions: a replace could build
// another module's code in place of the learner's (the reference solution,
// a stand-in for a tool), a toolchain or godebug line could change what
// builds it, a new requirement could bring code nobody reviewed. The grade
// allows what the upstream's go.mod allows, and names every line it refuses.

// moduleProblems compares the submission's go.mod of step with the
// upstream's and lists, with line numbers, what the grade refuses.
func moduleProblems(upstream, submission []byte, step string) ([]string, error) {
	up, err := modfile.Parse(step+"/go.mod (upstream)", upstream, nil)
	if err != nil {
		return nil, fmt.Errorf("parsing the upstream's %s/go.mod: %w", step, err)
	}
	name := step + "/go.mod"
	sub, err := modfile.Parse(name, submission, nil)
	if err != nil {
		return []string{fmt.Sprintf("%s does not parse: %v", name, err)}, nil
	}
	var out []string
	// Each problem on one line: a quoted path in go.mod may hold a newline.
	at := func(line int, format string, args ...any) {
		out = append(out, report.Inline(fmt.Sprintf("%s:%d: %s", name, line, fmt.Sprintf(format, args...))))
	}
	if sub.Module == nil || up.Module == nil || sub.Module.Mod.Path != up.Module.Mod.Path {
		line, path := 1, "(none)"
		if sub.Module != nil {
			line, path = sub.Module.Syntax.Start.Line, sub.Module.Mod.Path
		}
		want := ""
		if up.Module != nil {
			want = up.Module.Mod.Path
		}
		at(line, "module %s: the step's module is %s", path, want)
	}
	if sub.Go != nil && up.Go != nil && semver.Compare("v"+sub.Go.Version, "v"+up.Go.Version) > 0 {
		at(sub.Go.Syntax.Start.Line, "go %s: newer than the workbook's go %s (it would select another toolchain)", sub.Go.Version, up.Go.Version)
	}
	if sub.Toolchain != nil && (up.Toolchain == nil || sub.Toolchain.Name != up.Toolchain.Name) {
		at(sub.Toolchain.Syntax.Start.Line, "toolchain %s: the workbook's toolchain builds the grade", sub.Toolchain.Name)
	}
	upDebug := map[string]string{}
	for _, g := range up.Godebug {
		upDebug[g.Key] = g.Value
	}
	for _, g := range sub.Godebug {
		if v, ok := upDebug[g.Key]; !ok || v != g.Value {
			at(g.Syntax.Start.Line, "godebug %s=%s: the workbook's settings build the grade", g.Key, g.Value)
		}
	}
	for _, r := range sub.Replace {
		at(r.Syntax.Start.Line, "replace %s => %s: a replace builds other code in place of a module", r.Old.Path, r.New.Path)
	}
	for _, e := range sub.Exclude {
		at(e.Syntax.Start.Line, "exclude %s %s: the workbook's go.mod has no exclude", e.Mod.Path, e.Mod.Version)
	}
	for _, t := range sub.Tool {
		at(t.Syntax.Start.Line, "tool %s: tools come from the workbook, not the submission", t.Path)
	}
	for _, i := range sub.Ignore {
		at(i.Syntax.Start.Line, "ignore %s: the workbook's go.mod has no ignore", i.Path)
	}
	allowed := map[string]string{}
	for _, r := range up.Require {
		allowed[r.Mod.Path] = r.Mod.Version
	}
	for _, r := range sub.Require {
		v, ok := allowed[r.Mod.Path]
		switch {
		case !ok:
			at(r.Syntax.Start.Line, "require %s %s: not a module the workbook uses (allowed: the requirements of the workbook's %s)", r.Mod.Path, r.Mod.Version, name)
		case semver.Major(r.Mod.Version) != semver.Major(v):
			at(r.Syntax.Start.Line, "require %s %s: another major version than the workbook's %s", r.Mod.Path, r.Mod.Version, v)
		}
	}
	return out, nil
}

// AllowedModules are the module paths a step's code may import from: its
// own module and the requirements of the upstream's go.mod.
func AllowedModules(upstreamGoMod []byte) ([]string, error) {
	f, err := modfile.Parse("go.mod", upstreamGoMod, nil)
	if err != nil {
		return nil, fmt.Errorf("parsing the upstream's go.mod: %w", err)
	}
	var out []string
	if f.Module != nil {
		out = append(out, f.Module.Mod.Path)
	}
	for _, r := range f.Require {
		out = append(out, r.Mod.Path)
	}
	return out, nil
}

// ForeignImports lists the packages the step's code (tests included)
// imports from modules outside allowed: another module of the workspace
// (the harness), or anything a go.mod edit tried to bring in. It runs
// `go list`, which reads the code and runs none of it (cgo off).
func ForeignImports(ctx context.Context, stepDir string, env []string, allowed []string) ([]string, error) {
	cmd := exec.CommandContext(ctx, "go", "list", "-e", "-deps", "-test",
		"-f", "{{if not .Standard}}{{.ImportPath}}\t{{with .Module}}{{.Path}}{{end}}\t{{range .DepsErrors}}{{.Err}} {{end}}{{with .Error}}{{.Err}}{{end}}{{end}}", "./...")
	cmd.Dir = stepDir
	cmd.Env = append(append(os.Environ(), env...), "CGO_ENABLED=0", "GOFLAGS=-mod=readonly")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("listing the imports of %s: %w\n%s", filepath.Base(stepDir), err, strings.TrimSpace(stderr.String()))
	}
	ok := map[string]bool{}
	for _, m := range allowed {
		ok[m] = true
	}
	seen := map[string]bool{}
	var out []string
	sc := bufio.NewScanner(&stdout)
	for sc.Scan() {
		fields := strings.SplitN(sc.Text(), "\t", 3)
		if len(fields) < 2 || fields[0] == "" {
			continue
		}
		pkg, mod := fields[0], fields[1]
		// A test variant ("p [p.test]") and the test main are the step's own.
		if i := strings.Index(pkg, " ["); i >= 0 {
			pkg = pkg[:i]
		}
		if strings.HasSuffix(pkg, ".test") && mod == "" {
			continue
		}
		if ok[mod] || seen[pkg] {
			continue
		}
		seen[pkg] = true
		from := "no module"
		if mod != "" {
			from = "module " + mod
		}
		out = append(out, fmt.Sprintf("%s (%s)", pkg, from))
	}
	sort.Strings(out)
	return out, nil
}
