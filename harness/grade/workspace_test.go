package grade

import (
	"testing"
)

func TestWorkspaceWithoutDropsOnlyTheModulesLeftOut(t *testing.T) {
	gone := underAny([]string{"solutions/step07"})
	for _, tc := range []struct {
		name, work, want string
	}{{
		name: "the solution's use line goes, the comment stays",
		work: "// The workspace.\ngo 1.26.0\n\nuse (\n\t./harness\n\t./solutions/step07\n\t./step07\n)\n",
		want: "// The workspace.\ngo 1.26.0\n\nuse (\n\t./harness\n\t./step07\n)\n",
	}, {
		name: "a single use line",
		work: "go 1.26.0\n\nuse ./step07\n\nuse solutions/step07\n",
		want: "go 1.26.0\n\nuse ./step07\n",
	}, {
		name: "a go.work naming no solution is kept byte for byte",
		work: "go 1.26.0\nuse (\n    ./harness // tools\n./step07\n)\n",
		want: "go 1.26.0\nuse (\n    ./harness // tools\n./step07\n)\n",
	}, {
		name: "a module whose name only starts like the solution's stays",
		work: "go 1.26.0\n\nuse ./solutions/step070\n",
		want: "go 1.26.0\n\nuse ./solutions/step070\n",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := workspaceWithout("go.work", []byte(tc.work), gone)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("workspaceWithout(%q) =\n%s\nwant\n%s", tc.work, got, tc.want)
			}
		})
	}
}
