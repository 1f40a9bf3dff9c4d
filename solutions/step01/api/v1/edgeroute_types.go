package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// EdgeRouteSpec is the DESIRED state (what the user writes).
type EdgeRouteSpec struct {
	//gw10:begin validation
	//gw10:todo Validate the spec with +kubebuilder:validation markers on each field, so
	//gw10:todo that the API server rejects bad EdgeRoutes with a message naming the field:
	//gw10:todo hostname an RFC 1123 DNS subdomain (lowercase labels of at most 63
	//gw10:todo characters, 253 in all), prefix starting with "/" (at most 1024
	//gw10:todo characters), service a DNS-1035 label (at most 63), port 1-65535
	//gw10:todo (check: crd-schema). make hint ID=crd-schema MORE=1 says where the API
	//gw10:todo server's own patterns for such names are.
	//gw10:stub
	//gw10:end

	// Hostname is the host the edge proxy matches, an RFC 1123 DNS subdomain:
	// lowercase labels of at most 63 characters, no trailing dot, 253 in all.
	// +required
	//gw10:begin validation-hostname
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*$`
	//gw10:end
	Hostname string `json:"hostname"`

	// Prefix is the path prefix the route matches; it starts with "/".
	// +required
	//gw10:begin validation-prefix
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:Pattern=`^/`
	//gw10:end
	Prefix string `json:"prefix"`

	// Service is the name of the target Service in the EdgeRoute's namespace,
	// a DNS-1035 label.
	// +required
	//gw10:begin validation-service
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z]([-a-z0-9]*[a-z0-9])?$`
	//gw10:end
	Service string `json:"service"`

	// Port is the target port on the Service.
	// +required
	//gw10:begin validation-port
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	//gw10:end
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
