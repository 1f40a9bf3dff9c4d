package runner

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/10xdev/gw10/harness/steps"
)

// TestTheRoleIsCappedAtTheStepsCeiling: markers that ask for the cluster
// get what the step's controllers need and no more, and the rest is named.
func TestTheRoleIsCappedAtTheStepsCeiling(t *testing.T) {
	ceiling := steps.Default().RBACCeiling
	if len(ceiling) == 0 {
		t.Fatal("the default step has no RBAC ceiling")
	}
	granted := func(rules []rbacv1.PolicyRule, g, res, v string) bool {
		for _, r := range rules {
			if len(allowedBy([]rbacv1.PolicyRule{r}, g, res, v)) > 0 {
				return true
			}
		}
		return false
	}

	// The solution's role is granted as it is.
	solution, err := RoleOf(filepath.Join(root, steps.Default().SolutionDir))
	if err != nil {
		t.Fatal(err)
	}
	kept, dropped := capRules(solution.Rules, ceiling)
	if len(dropped) > 0 {
		t.Errorf("the solution's role loses %v", dropped)
	}
	for _, r := range solution.Rules {
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, v := range r.Verbs {
					if !granted(kept, g, res, v) {
						t.Errorf("the solution's %s on %s/%s is not granted", v, g, res)
					}
				}
			}
		}
	}

	// Everything on everything: only the ceiling, and the rest named.
	all := []rbacv1.PolicyRule{
		{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}},
		{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}},
		{APIGroups: []string{"apiextensions.k8s.io"}, Resources: []string{"customresourcedefinitions"}, Verbs: []string{"update"}},
		{APIGroups: []string{""}, Resources: []string{"secrets", "services"}, Verbs: []string{"get"}, ResourceNames: []string{"x"}},
	}
	kept, dropped = capRules(all, ceiling)
	for _, want := range [][3]string{{"net.10xdev.io", "edgeroutes/status", "update"}, {"", "services", "watch"}} {
		if !granted(kept, want[0], want[1], want[2]) {
			t.Errorf("%v not granted from */*/*: %v", want, kept)
		}
	}
	for _, not := range [][3]string{
		{"apiextensions.k8s.io", "customresourcedefinitions", "update"}, {"", "secrets", "get"},
		{"net.10xdev.io", "edgeroutes", "delete"}, {"rbac.authorization.k8s.io", "clusterroles", "escalate"},
	} {
		if granted(kept, not[0], not[1], not[2]) {
			t.Errorf("%v granted: %v", not, kept)
		}
	}
	if !slices.ContainsFunc(kept, func(r rbacv1.PolicyRule) bool {
		return slices.Equal(r.Resources, []string{"services"}) && slices.Equal(r.ResourceNames, []string{"x"})
	}) {
		t.Errorf("resourceNames lost: %v", kept)
	}
	said := strings.Join(dropped, "; ")
	for _, want := range []string{"* on */* beyond", "get on /metrics", "update on apiextensions.k8s.io/customresourcedefinitions", "get on secrets"} {
		if !strings.Contains(said, want) {
			t.Errorf("the note does not say %q: %s", want, said)
		}
	}
}
