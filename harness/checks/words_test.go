package checks

import "testing"

func TestCountsReadAsEnglish(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{Times(1), "once"},
		{Times(2), "twice"},
		{Times(7), "7 times"},
		{Count(1, "retry", "retries"), "1 retry"},
		{Count(3, "retry", "retries"), "3 retries"},
		{Count(0, "reconcile", "reconciles"), "0 reconciles"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
