package step01

import (
	_ "embed"
	"fmt"
	"strings"

	"sigs.k8s.io/yaml"
)

// invalidSpecsYAML is the table of invalid specs, shared with the solution's
// schema test, which reads the same file.
//
//go:embed invalid-specs.yaml
var invalidSpecsYAML []byte

// invalidSpec is one row: how to spoil the valid spec, and the field the
// API server's message must name.
type invalidSpec struct {
	Name, Field string
	Set         map[string]any // fields to set; nil removes one
	ReplaceSpec bool           // replace the whole spec with Spec
	Spec        any            // nil removes the spec
}

// invalidSpecs parses the table.
func invalidSpecs() ([]invalidSpec, error) {
	var raw []map[string]any
	if err := yaml.Unmarshal(invalidSpecsYAML, &raw); err != nil {
		return nil, fmt.Errorf("parsing invalid-specs.yaml: %w", err)
	}
	rows := make([]invalidSpec, 0, len(raw))
	for i, m := range raw {
		row := invalidSpec{}
		row.Name, _ = m["name"].(string)
		row.Field, _ = m["field"].(string)
		row.Set, _ = m["set"].(map[string]any)
		row.Spec, row.ReplaceSpec = m["spec"]
		if row.Name == "" || row.Field == "" || (row.Set == nil) == !row.ReplaceSpec {
			return nil, fmt.Errorf("invalid-specs.yaml, case %d: want a name, a field and either set or spec", i+1)
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// apply spoils obj's spec as the row says; the object is an EdgeRoute as a map.
func (row invalidSpec) apply(obj map[string]any) {
	if row.ReplaceSpec {
		if row.Spec == nil {
			delete(obj, "spec")
		} else {
			obj["spec"] = row.Spec
		}
		return
	}
	spec, _ := obj["spec"].(map[string]any)
	if spec == nil {
		spec = map[string]any{}
		obj["spec"] = spec
	}
	for k, v := range row.Set {
		if v == nil {
			delete(spec, k)
		} else {
			spec[k] = v
		}
	}
}

// validEdgeSpecs are specs at the edges of the card's rules, each made from
// the valid spec as an invalid row is: the schema must accept every one. A
// rule tighter than the card's (a name's length taken for a label's) rejects
// EdgeRoutes a user may write.
func validEdgeSpecs() []invalidSpec {
	label := func(c string, n int) string { return strings.Repeat(c, n) }
	return []invalidSpec{
		{Name: "hostname of 253 characters, in labels of 63", Set: map[string]any{"hostname": label("a", 63) + "." + label("b", 63) + "." + label("c", 63) + "." + label("d", 61)}},
		{Name: "hostname of one label", Set: map[string]any{"hostname": "localhost"}},
		{Name: "hostname labels starting with a digit, with hyphens inside", Set: map[string]any{"hostname": "1shop-a.ex-ample.com"}},
		{Name: "prefix of one slash", Set: map[string]any{"prefix": "/"}},
		{Name: "prefix of 1024 characters", Set: map[string]any{"prefix": "/" + label("a", 1023)}},
		{Name: "service of 63 characters", Set: map[string]any{"service": "w" + label("a", 61) + "b"}},
		{Name: "service with hyphens and digits inside", Set: map[string]any{"service": "web-api-2"}},
		{Name: "port 1", Set: map[string]any{"port": int64(1)}},
		{Name: "port 65535", Set: map[string]any{"port": int64(65535)}},
	}
}
