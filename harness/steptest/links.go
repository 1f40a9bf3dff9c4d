package steptest

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// linkRE is a Markdown link to a relative target: the path (empty for the
// same file) and the anchor (empty for none). Links with a scheme (https:,
// mailto:) are not relative and are left out.
var linkRE = regexp.MustCompile(`\]\(([^)\s#:]*)(?:#([^)\s]+))?\)`)

// BrokenLinks checks every relative link of the Markdown files (paths
// under root) and returns one line for each whose file does not exist or
// has no such anchor, and the number of links it checked.
func BrokenLinks(root string, files []string) (broken []string, checked int, err error) {
	for _, name := range files {
		text, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			return nil, 0, err
		}
		for _, m := range linkRE.FindAllStringSubmatch(string(text), -1) {
			path, anchor := m[1], m[2]
			if path == "" && anchor == "" {
				continue
			}
			checked++
			target := filepath.Join(root, filepath.Dir(name), path)
			if path == "" {
				target = filepath.Join(root, name)
			}
			info, err := os.Stat(target)
			if err != nil {
				broken = append(broken, fmt.Sprintf("%s links to %s, which does not exist", name, m[1]))
				continue
			}
			if anchor == "" || info.IsDir() {
				continue
			}
			doc, err := os.ReadFile(target)
			if err != nil {
				return nil, 0, err
			}
			if !HasAnchor(string(doc), anchor) {
				broken = append(broken, fmt.Sprintf("%s links to %s#%s, which has no such anchor", name, path, anchor))
			}
		}
	}
	return broken, checked, nil
}

var slugPunct = regexp.MustCompile(`[^\p{L}\p{N}\- ]`)

// HasAnchor reports whether a Markdown text has an explicit anchor id or a
// heading whose GitHub slug is id.
func HasAnchor(doc, id string) bool {
	if strings.Contains(doc, `<a id="`+id+`"></a>`) {
		return true
	}
	fence := false
	for _, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fence = !fence
		}
		if h, ok := strings.CutPrefix(line, "#"); ok && !fence {
			slug := strings.ReplaceAll(slugPunct.ReplaceAllString(strings.ToLower(strings.TrimSpace(strings.TrimLeft(h, "#"))), ""), " ", "-")
			if slug == id {
				return true
			}
		}
	}
	return false
}
