package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// EdgeRouteSpec is the DESIRED state (what the user writes).
type EdgeRouteSpec struct {
	// TODO(step01): Validate the spec with +kubebuilder:validation markers on each field, so
	// that the API server rejects bad EdgeRoutes with a message naming the field:
	// hostname an RFC 1123 DNS subdomain (lowercase labels of at most 63
	// characters, 253 in all), prefix starting with "/" (at most 1024
	// characters), service a DNS-1035 label (at most 63), port 1-65535
	// (check: crd-schema). make hint ID=crd-schema MORE=1 says where the API
	// server's own patterns for such names are.

	// Hostname is the host the edge proxy matches, an RFC 1123 DNS subdomain:
	// lowercase labels of at most 63 characters, no trailing dot, 253 in all.
	// +required
	Hostname string `json:"hostname"`

	// Prefix is the path prefix the route matches; it starts with "/".
	// +required
	Prefix string `json:"prefix"`

	// Service is the name of the target Service in the EdgeRoute's namespace,
	// a DNS-1035 label.
	// +required
	Service string `json:"service"`

	// Port is the target port on the Service.
	// +required
	Port int32 `json:"port"`
}

// EdgeRouteStatus is the CONTROLLER-written outcome (the receipt).
type EdgeRouteStatus struct {
	// Conditions say whether the route is accepted and programmed into the
	// data plane, each for the generation in its observedGeneration.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Condition types of an EdgeRoute.
const (
	// ConditionAccepted says whether the route is valid and its Service exists.
	ConditionAccepted = "Accepted"
	// ConditionProgrammed says whether the data plane ACKed the route.
	ConditionProgrammed = "Programmed"
)

// Condition reasons of an EdgeRoute.
const (
	// ReasonValid: the route is accepted.
	ReasonValid = "Valid"
	// ReasonServiceNotFound: the target Service does not exist.
	ReasonServiceNotFound = "ServiceNotFound"
	// ReasonSynced: the data plane ACKed the route.
	ReasonSynced = "Synced"
	// ReasonPushFailed: the data plane NACKed the route (the message says why).
	ReasonPushFailed = "PushFailed"
	// ReasonNotAccepted: the route is not programmed because it is not accepted.
	ReasonNotAccepted = "NotAccepted"
	// ReasonDeleting: the EdgeRoute is being deleted, so its route is
	// withdrawn (the message says whether the withdraw succeeded).
	ReasonDeleting = "Deleting"
)

// EdgeRoute routes traffic for a hostname and path prefix to a Service.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=er
// +kubebuilder:printcolumn:name="Hostname",type=string,JSONPath=`.spec.hostname`
// +kubebuilder:printcolumn:name="Service",type=string,JSONPath=`.spec.service`
// +kubebuilder:printcolumn:name="Port",type=integer,JSONPath=`.spec.port`
// +kubebuilder:printcolumn:name="Accepted",type=string,JSONPath=`.status.conditions[?(@.type=="Accepted")].status`
// +kubebuilder:printcolumn:name="Programmed",type=string,JSONPath=`.status.conditions[?(@.type=="Programmed")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type EdgeRoute struct {
	metav1.TypeMeta `json:",inline"`

	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec EdgeRouteSpec `json:"spec"`

	// +optional
	Status EdgeRouteStatus `json:"status,omitempty"`
}

// EdgeRouteList contains a list of EdgeRoute.
// +kubebuilder:object:root=true
type EdgeRouteList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []EdgeRoute `json:"items"`
}

func init() {
	SchemeBuilder.Register(&EdgeRoute{}, &EdgeRouteList{})
}
