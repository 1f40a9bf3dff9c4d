package runner

import (
	"path/filepath"
	"slices"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/10xdev/gw10/harness/steps"
)

// TestStatusDefaultsAreNotInstalled: a default anywhere under .status is
// removed (and said where), the spec's defaults stay, and the solution's
// CRD has none to remove.
func TestStatusDefaultsAreNotInstalled(t *testing.T) {
	crds, err := CRDsOf(filepath.Join(root, steps.Default().SolutionDir))
	if err != nil {
		t.Fatal(err)
	}
	for _, crd := range crds {
		if where := stripStatusDefaults(crd); len(where) > 0 {
			t.Errorf("the solution's CRD %s has status defaults %v", crd.Name, where)
		}
	}
	def := &apiextensionsv1.JSON{Raw: []byte(`{"conditions":[{"type":"Accepted","status":"False","reason":"ServiceNotFound"}]}`)}
	crd := &apiextensionsv1.CustomResourceDefinition{Spec: apiextensionsv1.CustomResourceDefinitionSpec{Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
		Name: "v1",
		Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"spec": {Properties: map[string]apiextensionsv1.JSONSchemaProps{"port": {Default: &apiextensionsv1.JSON{Raw: []byte("80")}}}},
			"status": {Default: def, Properties: map[string]apiextensionsv1.JSONSchemaProps{
				"conditions": {Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{
					Properties: map[string]apiextensionsv1.JSONSchemaProps{"reason": {Default: &apiextensionsv1.JSON{Raw: []byte(`"ServiceNotFound"`)}}}}}},
			}},
		}}},
	}}}}
	where := stripStatusDefaults(crd)
	if !slices.Equal(where, []string{"v1: .status", "v1: .status.conditions[].reason"}) {
		t.Errorf("removed %v", where)
	}
	if again := stripStatusDefaults(crd); len(again) > 0 {
		t.Errorf("defaults left under .status: %v", again)
	}
	if crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["port"].Default == nil {
		t.Error("the spec's default was removed too")
	}
}
