package grade

import (
	"fmt"
	"sort"
	"strings"

	"github.com/10xdev/gw10/harness/report"
)

// The most a submission's step may hold, checked on the tree's sizes before
// anything of it is extracted or read (a committed 1 GiB file compresses to
// a repository of a few MB, and was read whole), and again while extracting.
// A step is tens of small files: the workbook's own is about 20 files and
// 100 KiB. Files under the step's bin/, which a grade never takes, do not
// count. docs/instructors.md states these.
const (
	// MaxFileBytes is the most one file of the step may hold.
	MaxFileBytes = 1 << 20
	// MaxStepBytes is the most all the step's files may hold together.
	MaxStepBytes = 8 << 20
	// MaxStepFiles is the most files the step may hold.
	MaxStepFiles = 1000
)

// fileSize is one file of a step and its size in bytes.
type fileSize struct {
	name string
	size int64
}

// sizeProblems says what of files breaks the limits, naming the files and
// the limits; "" when nothing does.
func sizeProblems(step string, files []fileSize) string {
	sort.Slice(files, func(i, j int) bool { return files[i].name < files[j].name })
	var problems, big []string
	var total int64
	for _, f := range files {
		total += f.size
		if f.size > MaxFileBytes {
			big = append(big, fmt.Sprintf("%s (%s)", f.name, sizeText(f.size)))
		}
	}
	if len(big) > 0 {
		problems = append(problems, fmt.Sprintf("files larger than a file of the step may be (%s, grade.MaxFileBytes): %s",
			sizeText(MaxFileBytes), report.InlineList(big, 5)))
	}
	if total > MaxStepBytes {
		problems = append(problems, fmt.Sprintf("its files hold %s, more than a step may (%s, grade.MaxStepBytes)", sizeText(total), sizeText(MaxStepBytes)))
	}
	if len(files) > MaxStepFiles {
		problems = append(problems, fmt.Sprintf("it holds %d files, more than a step may (%d, grade.MaxStepFiles)", len(files), MaxStepFiles))
	}
	if len(problems) == 0 {
		return ""
	}
	return fmt.Sprintf("%s/ is too large to grade (nothing of it was extracted or read):\n  - %s", step, strings.Join(problems, "\n  - "))
}

// treeSizes are the files of a git tree under step, but those under skip.
func treeSizes(files map[string]entry, step, skip string) []fileSize {
	var out []fileSize
	for name, e := range files {
		if under(name, step) && !under(name, skip) {
			out = append(out, fileSize{name: name, size: max(e.size, 0)})
		}
	}
	return out
}

// extractLimits bound what extract writes of a submission, whatever the
// tree said (the check before extracting is the one that names files).
type extractLimits struct {
	files int
	bytes int64
}

// take counts a file of size bytes against the limits, or says which it breaks.
func (l *extractLimits) take(name string, size int64) error {
	if l == nil {
		return nil
	}
	l.files++
	l.bytes += size
	switch {
	case size > MaxFileBytes:
		return fmt.Errorf("%s holds %s, more than a file of the step may (%s)", report.Inline(name), sizeText(size), sizeText(MaxFileBytes))
	case l.bytes > MaxStepBytes:
		return fmt.Errorf("the step's files hold more than %s", sizeText(MaxStepBytes))
	case l.files > MaxStepFiles:
		return fmt.Errorf("the step holds more than %d files", MaxStepFiles)
	}
	return nil
}

// sizeText is n in the largest unit it is a whole number of, else in MiB
// or KiB with its exact bytes.
func sizeText(n int64) string {
	for _, u := range []struct {
		size int64
		name string
	}{{1 << 30, "GiB"}, {1 << 20, "MiB"}, {1 << 10, "KiB"}} {
		switch {
		case n >= u.size && n%u.size == 0:
			return fmt.Sprintf("%d %s", n/u.size, u.name)
		case n >= u.size:
			return fmt.Sprintf("%.1f %s (%d bytes)", float64(n)/float64(u.size), u.name, n)
		}
	}
	return fmt.Sprintf("%d bytes", n)
}
