package checks

import "testing"

func TestCountsReadAsEnglish(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{Times(1), "once"},
		{Times(2), "twice"},
		{Times(7), "7 times"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
