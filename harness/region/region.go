// Package region reads the exercise regions of a solution's Go files: the
// code between //gw10:begin <id> and //gw10:end that the skeleton replaces
// with its TODO and stub.
package region

import (
	"fmt"
	"strings"
)

// Region is one exercise region of a Go file: its ID and the lines of its
// //gw10:begin and //gw10:end markers (1-based).
type Region struct {
	ID         string
	Begin, End int
}

// Parse finds the exercise regions of a Go file, and refuses a region
// that begins inside another, ends without a begin, or is never closed.
// It is the one parser of the markers: the skeleton (Stub, RegionLines),
// the generated mutants and the steps' Lint all read regions through it.
func Parse(name, src string) ([]Region, error) {
	var out []Region
	var cur *Region
	for n, line := range strings.Split(src, "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(trimmed, "//gw10:begin"):
			if cur != nil {
				return nil, fmt.Errorf("%s:%d: region begins inside the region of line %d", name, n+1, cur.Begin)
			}
			cur = &Region{ID: strings.TrimPrefix(strings.TrimPrefix(trimmed, "//gw10:begin"), " "), Begin: n + 1}
		case strings.HasPrefix(trimmed, "//gw10:end"):
			if cur == nil {
				return nil, fmt.Errorf("%s:%d: region end without a begin", name, n+1)
			}
			cur.End = n + 1
			out = append(out, *cur)
			cur = nil
		}
	}
	if cur != nil {
		return nil, fmt.Errorf("%s:%d: region is never closed with //gw10:end", name, cur.Begin)
	}
	return out, nil
}
