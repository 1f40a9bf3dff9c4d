// Package words holds the few ways the harness puts figures and names into
// the sentences learners and instructors read, so that every package says
// them alike.
package words

import (
	"fmt"
	"strings"
)

// Count reads "1 retry", "2 retries".
func Count(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

// FirstLine is s up to its first newline.
func FirstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// ShortCommit is a commit's name cut to the 12 hex digits git shows.
func ShortCommit(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
