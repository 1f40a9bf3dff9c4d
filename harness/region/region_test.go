package region

import (
	"strings"
	"testing"
)

// TestOnlyWellFormedRegionsAreRead: regions are read in order with their
// marker lines; one inside another, an end without a begin, or a begin
// never closed is refused with where it is.
func TestOnlyWellFormedRegionsAreRead(t *testing.T) {
	got, err := Parse("a.go", "package a\n//gw10:begin one\nx\n//gw10:end\n\t//gw10:begin two\n\t//gw10:end\n")
	if err != nil || len(got) != 2 || got[0] != (Region{ID: "one", Begin: 2, End: 4}) || got[1] != (Region{ID: "two", Begin: 5, End: 6}) {
		t.Fatalf("Parse = %+v, %v", got, err)
	}
	for src, want := range map[string]string{
		"//gw10:begin a\n//gw10:begin b\n//gw10:end\n//gw10:end\n": "a.go:2: region begins inside the region of line 1",
		"//gw10:end\n":     "a.go:1: region end without a begin",
		"//gw10:begin a\n": "a.go:1: region is never closed",
	} {
		if _, err := Parse("a.go", src); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", src, err, want)
		}
	}
}
