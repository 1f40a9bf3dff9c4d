package step01

import "testing"

func TestCountsReadAsEnglish(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{times(1), "once"},
		{times(2), "twice"},
		{times(7), "7 times"},
		{count(1, "retry", "retries"), "1 retry"},
		{count(3, "retry", "retries"), "3 retries"},
		{count(0, "reconcile", "reconciles"), "0 reconciles"},
		{count(4, "", ""), "4"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
