package runner

import (
	"fmt"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
)

// capRules is the part of rules that ceiling allows, and what it left out
// in words ("delete on net.10xdev.io/edgeroutes"). A wildcard in rules
// (group, resource or verb "*") stands for what the ceiling allows there;
// in the ceiling it is taken literally, so a ceiling never hands out more
// than it names. Non-resource URLs are never granted. A rule's
// resourceNames carry over to what is kept of it.
func capRules(rules, ceiling []rbacv1.PolicyRule) (kept []rbacv1.PolicyRule, dropped []string) {
	type key struct{ group, resource, names string }
	verbs := map[key][]string{}
	var order []key
	for _, r := range rules {
		if len(r.NonResourceURLs) > 0 {
			dropped = append(dropped, fmt.Sprintf("%s on %s", strings.Join(r.Verbs, ","), strings.Join(r.NonResourceURLs, ",")))
		}
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, v := range r.Verbs {
					allowed := allowedBy(ceiling, g, res, v)
					if len(allowed) == 0 {
						dropped = append(dropped, fmt.Sprintf("%s on %s", v, groupResource(g, res)))
						continue
					}
					for _, a := range allowed {
						k := key{a[0], a[1], strings.Join(r.ResourceNames, ",")}
						if _, ok := verbs[k]; !ok {
							order = append(order, k)
						}
						if !slices.Contains(verbs[k], a[2]) {
							verbs[k] = append(verbs[k], a[2])
						}
					}
					if g == "*" || res == "*" || v == "*" {
						dropped = append(dropped, fmt.Sprintf("%s on %s beyond what this step's controllers need", v, groupResource(g, res)))
					}
				}
			}
		}
	}
	for _, k := range order {
		rule := rbacv1.PolicyRule{APIGroups: []string{k.group}, Resources: []string{k.resource}, Verbs: verbs[k]}
		if k.names != "" {
			rule.ResourceNames = strings.Split(k.names, ",")
		}
		kept = append(kept, rule)
	}
	return kept, dropped
}

// allowedBy are the (group, resource, verb) triples of ceiling that g, res
// and v (each possibly "*") cover.
func allowedBy(ceiling []rbacv1.PolicyRule, g, res, v string) [][3]string {
	match := func(want, have string) bool { return want == "*" || want == have }
	var out [][3]string
	for _, c := range ceiling {
		for _, cg := range c.APIGroups {
			for _, cr := range c.Resources {
				for _, cv := range c.Verbs {
					if match(g, cg) && match(res, cr) && match(v, cv) {
						out = append(out, [3]string{cg, cr, cv})
					}
				}
			}
		}
	}
	return out
}

func groupResource(g, res string) string {
	if g == "" {
		return res
	}
	return g + "/" + res
}
