package ctrlproc

import (
	"fmt"
	"regexp"
	"strings"
)

// logStartRE matches the first line of a log record: zap's ISO time, klog's
// "E1202 ", the harness's "--- controller" marks, and a Go panic's header.
var logStartRE = regexp.MustCompile(`^(\d{4}-\d{2}-\d{2}T|[IWEF]\d{4} |--- |panic: |fatal error: |goroutine \d+ \[)`)

// Excerpt makes log lines readable in a failure report: every record's line
// is kept whole, and the stack frames that zap and panics print after it are
// folded, except frames in the workbook's own code (the learner's file and
// line), which are what a reader needs. Only what looks like a frame is
// folded: any other line (main's own error before it exits, say) is kept.
func Excerpt(lines []string) []string {
	var out []string
	folded := 0
	flush := func() {
		if folded > 0 {
			out = append(out, fmt.Sprintf("    … %d stack frame lines folded", folded))
			folded = 0
		}
	}
	keepNext := false // the file:line under a kept function frame
	for _, l := range lines {
		switch {
		case logStartRE.MatchString(l):
			flush()
			out = append(out, l)
			keepNext = false
		case ownFrame(l) || (keepNext && strings.HasPrefix(l, "\t")):
			flush()
			out = append(out, l)
			keepNext = ownFrame(l)
		case strings.TrimSpace(l) == "":
		case stackFrame(l):
			folded++
			keepNext = false
		default:
			flush()
			out = append(out, l)
			keepNext = false
		}
	}
	flush()
	return out
}

// stackFrame is a line of a Go stack trace: a frame's file and line (after
// a tab), "created by …", or a frame's function, a package path and name
// with no space before its arguments
// ("sigs.k8s.io/controller-runtime/pkg/internal/controller.(*Controller[...]).Start",
// "main.main()", "github.com/x/y.(*R).Reconcile({0x1a2b, 0xc0004}, …)").
func stackFrame(l string) bool {
	if strings.HasPrefix(l, "\t") || strings.HasPrefix(l, "created by ") || strings.HasPrefix(l, "...additional frames elided...") {
		return true
	}
	fn := l // up to the arguments: the first "(" not a receiver's "pkg.(*T)"
	for i := 1; i < len(l); i++ {
		if l[i] == '(' && l[i-1] != '.' {
			fn = l[:i]
			break
		}
	}
	return !strings.ContainsAny(fn, " \t") && strings.Contains(fn, ".")
}

// ownFrame is a stack frame line in the workbook's code (the learner's step).
func ownFrame(l string) bool {
	return strings.Contains(l, "github.com/10xdev/gw10/") && !strings.Contains(l, "/pkg/mod/")
}

// IsErrorLine reports a log record at error level or a panic.
func IsErrorLine(l string) bool {
	return strings.Contains(l, "\tERROR\t") || strings.HasPrefix(l, "E1") || strings.HasPrefix(l, "panic: ") ||
		strings.Contains(l, "Observed a panic")
}

// Shorten puts a log line on one screen line: tabs become spaces and the
// text is cut at n characters.
func Shorten(l string, n int) string {
	l = strings.ReplaceAll(l, "\t", " ")
	r := []rune(l)
	if len(r) <= n {
		return l
	}
	return string(r[:n-1]) + "…"
}
