// Package skeleton generates a learner's step module from its reference
// solution, so the two never drift. In the solution's Go files, an exercise
// region reads
//
//	//gw10:begin <id>
//	//gw10:todo what to do, and which check proves it   (one or more lines)
//	//gw10:stub code that keeps the skeleton compiling  (zero or more lines)
//	... the solution's code ...
//	//gw10:end
//
// and becomes, in the skeleton, a "// TODO(step01): ..." comment followed by
// the stub. The module path is rewritten, imports the stubs no longer use are
// dropped, solution-only files (the envtest tests, but not the unit tests in
// LearnerTests) are left out, and the generated files (CRD, ClusterRole,
// deepcopy) are regenerated from the skeleton's own markers.
package skeleton

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/10xdev/gw10/harness/gotool"
	"github.com/10xdev/gw10/harness/region"
)

// Options say what to generate.
type Options struct {
	Src, Dst             string // solution module, skeleton module
	FromModule, ToModule string // module paths
	Step                 string // names the TODOs: TODO(<step>)
	// ControllerGen regenerates the generated files; empty copies them as they are.
	ControllerGen string
}

// SolutionOnly are files of the solution that the skeleton does not get: the
// controller's envtest tests assert the solved behaviour (learners run make
// check, not these).
var SolutionOnly = []string{"internal/controller/*_test.go"}

// LearnerTests are the exceptions to SolutionOnly that the skeleton keeps as
// they are: unit tests of the exercise's pure functions. They need no
// cluster, fail on the stubs and pass once the exercise is solved; make check
// runs them before it starts a cluster.
var LearnerTests = []string{"internal/controller/conditions_test.go"}

// Skipped reports whether a solution path is not part of the skeleton.
func Skipped(rel string) bool {
	if rel == "bin" || strings.HasPrefix(rel, "bin/") {
		return true
	}
	if matchesAny(LearnerTests, rel) {
		return false
	}
	return matchesAny(SolutionOnly, rel)
}

func matchesAny(patterns []string, rel string) bool {
	for _, pat := range patterns {
		if ok, _ := filepath.Match(pat, rel); ok {
			return true
		}
	}
	return false
}

// Generate writes the skeleton of opts.Src into opts.Dst, which must not exist.
func Generate(ctx context.Context, opts Options) error {
	if _, err := os.Stat(opts.Dst); err == nil {
		return fmt.Errorf("%s already exists", opts.Dst)
	}
	err := filepath.WalkDir(opts.Src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(opts.Src, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if Skipped(rel) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		target := filepath.Join(opts.Dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		out, err := transform(rel, data, opts)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		return os.WriteFile(target, out, info.Mode().Perm())
	})
	if err != nil {
		return fmt.Errorf("generating the skeleton of %s: %w", opts.Src, err)
	}
	if opts.ControllerGen != "" {
		// Offline and read-only: the skeleton's packages load from the
		// module cache its solution was built with; nothing is fetched and
		// neither go.mod nor the cache is written.
		if err := gotool.Generate(ctx, opts.ControllerGen, opts.Dst, []string{"GOWORK=off", "GOFLAGS=-mod=readonly", "GOPROXY=off"}); err != nil {
			return fmt.Errorf("regenerating the skeleton's manifests: %w", err)
		}
	}
	return nil
}

func transform(rel string, data []byte, opts Options) ([]byte, error) {
	text := string(data)
	if opts.FromModule != "" {
		text = strings.ReplaceAll(text, opts.FromModule, opts.ToModule)
	}
	if !strings.HasSuffix(rel, ".go") {
		return []byte(text), nil
	}
	stubbed, err := Stub(rel, text, opts.Step)
	if err != nil {
		return nil, err
	}
	// Drop the imports only the solution's code used.
	return dropUnusedImports(rel, []byte(text), []byte(stubbed))
}

// Stub replaces every exercise region of a Go file with its TODO and stub.
func Stub(name, src, step string) (string, error) {
	regions, err := region.Parse(name, src)
	if err != nil {
		return "", err
	}
	var out strings.Builder
	var todo, stub []string
	indent, next := "", 0 // next: the index of the region not yet ended
	lines := strings.Split(strings.TrimSuffix(src, "\n"), "\n")
	for i, line := range lines {
		n := i + 1
		trimmed := strings.TrimSpace(line)
		inRegion := next < len(regions) && n >= regions[next].Begin
		switch {
		case inRegion && n == regions[next].Begin:
			indent = line[:len(line)-len(strings.TrimLeft(line, " \t"))]
			todo, stub = nil, nil
		case inRegion && n == regions[next].End:
			for i, t := range todo {
				if i == 0 {
					fmt.Fprintf(&out, "%s// TODO(%s): %s\n", indent, step, t)
				} else {
					fmt.Fprintf(&out, "%s// %s\n", indent, t)
				}
			}
			for _, s := range stub {
				if s == "" {
					out.WriteString("\n")
				} else {
					out.WriteString(indent + s + "\n")
				}
			}
			next++
		case inRegion && strings.HasPrefix(trimmed, "//gw10:todo"):
			todo = append(todo, directiveText(trimmed, "//gw10:todo"))
		case inRegion && strings.HasPrefix(trimmed, "//gw10:stub"):
			stub = append(stub, directiveText(trimmed, "//gw10:stub"))
		case inRegion:
			// the solution's code: left out
		default:
			out.WriteString(line + "\n")
		}
	}
	return out.String(), nil
}

// directiveText is what follows the directive and one separating space.
func directiveText(trimmed, directive string) string {
	rest := strings.TrimPrefix(trimmed, directive)
	return strings.TrimPrefix(rest, " ")
}
