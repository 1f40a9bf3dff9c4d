package report

import (
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"
)

// A submission chooses many strings a report shows: file and process names,
// command lines, refs, module and import paths, log lines, compiler and test
// output, the condition messages its controller writes, errors that quote
// any of them. Each is data in every rendering, never markup or a terminal
// command. One function per rendering makes it so, and every such string
// goes through the one of its rendering:
//
//	terminal, one line   Inline      notes, names, reasons: on one line
//	terminal, a block    PlainText   output and logs, line by line
//	Markdown, one line   mdText      escaped text (prose that quotes a name)
//	Markdown, a value    mdCode      a code span (a name on its own)
//	Markdown, a block    codeBlock   a fence longer than its backticks
//
// JSON and JUnit are escaped by their encoders. What all of them show as an
// escape (\xNN, \uNNNN): a byte that is not UTF-8, a C0 or C1 control
// character (ESC and CSI start a terminal's escape sequences; a carriage
// return rewrites the line), DEL, and the format characters that reorder or
// hide text (bidirectional overrides, zero-width characters, the line and
// paragraph separators). Inline also shows newline and tab, and cuts a value
// longer than InlineMax bytes.

// InlineMax is the most bytes of a value Inline shows; the JSON report keeps
// every value whole.
const InlineMax = 1024

// Inline renders a value a submission chose as one line of plain text:
// newline, tab and every character escapeRune names shown as \x.. or
// \u...., and a value longer than InlineMax cut, saying how much was left
// out. A file name holding a newline and "## ✅ 11/11" must not become a
// heading of the report, nor an ESC rewrite the terminal.
func Inline(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		if b.Len() >= InlineMax {
			fmt.Fprintf(&b, "… (%d more bytes)", len(s)-i)
			break
		}
		i += writeRune(&b, s[i:], false)
	}
	return b.String()
}

// PlainText is w with what escapeRune names shown as \x.. or \u....,
// newline and tab kept: learner output and logs reach the terminal as
// text, line by line (an escape sequence from a controller's log or a unit
// test could clear the instructor's screen, or rewrite what it shows; make
// diff prints a submission's code through it). Each Write is escaped on its
// own: a character split across two writes shows as its bytes.
func PlainText(w io.Writer) io.Writer { return plainText{w} }

type plainText struct{ w io.Writer }

func (p plainText) Write(b []byte) (int, error) {
	if !needsEscape(b) {
		return p.w.Write(b)
	}
	if _, err := io.WriteString(p.w, plainBlock(string(b))); err != nil {
		return 0, err
	}
	return len(b), nil
}

// plainBlock is text with newlines and tabs kept and everything else
// escapeRune names escaped.
func plainBlock(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		i += writeRune(&b, s[i:], true)
	}
	return b.String()
}

// needsEscape says whether plainBlock would change b (the common case, plain
// text, is written as it is).
func needsEscape(b []byte) bool {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size <= 1 || r != '\n' && r != '\t' && escapeRune(r) {
			return true
		}
		i += size
	}
	return false
}

// writeRune writes the first character of s to b, escaped when it must be
// (block: newline and tab kept), and returns how many bytes it read.
func writeRune(b *strings.Builder, s string, block bool) int {
	r, size := utf8.DecodeRuneInString(s)
	switch {
	case r == utf8.RuneError && size <= 1:
		fmt.Fprintf(b, `\x%02x`, s[0])
	case block && (r == '\n' || r == '\t'):
		b.WriteRune(r)
	case escapeRune(r) && r < 0x100:
		fmt.Fprintf(b, `\x%02x`, r)
	case escapeRune(r):
		fmt.Fprintf(b, `\u%04x`, r)
	default:
		b.WriteString(s[:size])
	}
	return size
}

// escapeRune says whether r is shown escaped: a C0 or C1 control, DEL, or a
// format character (bidirectional controls, zero-width characters, the soft
// hyphen), or a line or paragraph separator.
func escapeRune(r rune) bool {
	return r < 0x20 || r >= 0x7f && r < 0xa0 || r == '\u2028' || r == '\u2029' || unicode.Is(unicode.Cf, r)
}

// mdText renders a line of text that quotes what a submission chose (a
// verdict naming a file, what the sandbox killed) as Markdown text: one
// line (Inline), and every character that could start Markdown or HTML
// backslash-escaped — emphasis, code, links and images, raw HTML and
// comments, entities, table cells — and GitHub's autolinks broken ("://",
// "www.", "@"). It reads as the text it is once rendered.
func mdText(s string) string {
	s = Inline(s)
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case strings.IndexByte("\\`*_[]<>|#!~&@$", c) >= 0,
			c == ':' && strings.HasPrefix(s[i+1:], "//"),
			c == '.' && i >= 3 && strings.EqualFold(s[i-3:i], "www"):
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
	return b.String()
}

// mdCode renders a value a submission chose as a Markdown code span: on one
// line (Inline), between more backticks than it holds in a row, so nothing
// in it (a backtick, "<!--", a heading) is read as Markdown.
func mdCode(s string) string {
	s = Inline(s)
	longest := backticks(s)
	fence := strings.Repeat("`", longest+1)
	if longest > 0 || strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
}

// codeBlock fences text (learner output: compiler errors, test logs) so that
// nothing in it can end the block: the fence is longer than any run of
// backticks in the text (CommonMark closes a fence only with one at least as
// long), so a printed fence, heading or "<!--" stays text. What a terminal
// would act on is escaped (plainBlock): summary.md is read with cat too.
func codeBlock(text string) string {
	text = plainBlock(text)
	fence := strings.Repeat("`", max(3, backticks(text)+1))
	return fence + "\n" + text + "\n" + fence
}

// backticks is the longest run of backticks in s.
func backticks(s string) int {
	longest, run := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return longest
}
