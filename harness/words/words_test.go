package words

import "testing"

func TestWords(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{Count(0, "push", "pushes"), "0 pushes"},
		{Count(1, "push", "pushes"), "1 push"},
		{Count(2, "retry", "retries"), "2 retries"},
		{FirstLine("a\nb"), "a"},
		{FirstLine("a"), "a"},
		{FirstLine(""), ""},
		{ShortCommit("0123456789abcdef0123"), "0123456789ab"},
		{ShortCommit("abc"), "abc"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
