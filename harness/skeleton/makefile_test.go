package skeleton

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestModuleTestTargetWorksFromAnywhere runs `make -C <module> test` from
// another directory, as a CI job or an instructor would. make -C turns on
// the "Entering directory" banner for nested makes, which the test target
// once captured into KUBEBUILDER_ASSETS. A stand-in `go` reports the
// variable instead of running the module's tests, a stand-in workbook
// Makefile answers assets-path, and -o skips the code generation: what is
// tested is the target's own recipe.
func TestModuleTestTargetWorksFromAnywhere(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	realGo, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	fakeGo := fmt.Sprintf("#!/bin/sh\nif [ \"$1\" = test ]; then echo \"KUBEBUILDER_ASSETS=[$KUBEBUILDER_ASSETS]\"; exit 0; fi\nexec %q \"$@\"\n", realGo)
	if err := os.WriteFile(filepath.Join(bin, "go"), []byte(fakeGo), 0o755); err != nil {
		t.Fatal(err)
	}
	workbook := t.TempDir()
	if err := os.WriteFile(filepath.Join(workbook, "Makefile"), []byte("assets-path:\n\t@echo /envtest/assets\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, module := range []string{st.Dir, st.SolutionDir} {
		t.Run(module, func(t *testing.T) {
			cmd := exec.Command("make", "-C", filepath.Join(root, module),
				"-o", "manifests", "-o", "generate", "-o", "fmt", "-o", "vet", "test", "WORKBOOK="+workbook)
			cmd.Dir = t.TempDir()
			cmd.Env = []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("make -C %s test: %v\n%s", module, err, out)
			}
			if !strings.Contains(string(out), "KUBEBUILDER_ASSETS=[/envtest/assets]\n") {
				t.Fatalf("go test did not get KUBEBUILDER_ASSETS=/envtest/assets:\n%s", out)
			}
		})
	}
}
