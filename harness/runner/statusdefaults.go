package runner

import (
	"sort"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// stripStatusDefaults removes every default in the schema under .status of
// each version of crd and returns where they were (v1: .status.conditions).
// A status is the controller's to write: a default there is filled in by
// the API server on every read, so an EdgeRoute no controller ever touched
// reads as reported (a +kubebuilder:default on Status earned missing-service
// with no controller code).
func stripStatusDefaults(crd *apiextensionsv1.CustomResourceDefinition) []string {
	var found []string
	var walk func(s *apiextensionsv1.JSONSchemaProps, path string)
	walk = func(s *apiextensionsv1.JSONSchemaProps, path string) {
		if s == nil {
			return
		}
		if s.Default != nil {
			found = append(found, path)
			s.Default = nil
		}
		names := make([]string, 0, len(s.Properties))
		for n := range s.Properties {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			p := s.Properties[n]
			walk(&p, path+"."+n)
			s.Properties[n] = p
		}
		if s.Items != nil {
			walk(s.Items.Schema, path+"[]")
			for i := range s.Items.JSONSchemas {
				walk(&s.Items.JSONSchemas[i], path+"[]")
			}
		}
		if s.AdditionalProperties != nil {
			walk(s.AdditionalProperties.Schema, path+".*")
		}
		for _, group := range [][]apiextensionsv1.JSONSchemaProps{s.AllOf, s.AnyOf, s.OneOf} {
			for i := range group {
				walk(&group[i], path)
			}
		}
		walk(s.Not, path)
	}
	for i := range crd.Spec.Versions {
		v := &crd.Spec.Versions[i]
		if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			continue
		}
		st, ok := v.Schema.OpenAPIV3Schema.Properties["status"]
		if !ok {
			continue
		}
		walk(&st, v.Name+": .status")
		v.Schema.OpenAPIV3Schema.Properties["status"] = st
	}
	return found
}
