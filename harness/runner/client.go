package runner

import (
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// scheme holds the types the harness reads and writes as typed objects.
func scheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return nil, err
	}
	if err := apiextensionsv1.AddToScheme(s); err != nil {
		return nil, err
	}
	return s, nil
}

// adminClient is the harness's client of the cluster, made once the cluster is up.
func (r *run) adminClient() (client.WithWatch, error) {
	if r.admin != nil {
		return r.admin, nil
	}
	s, err := scheme()
	if err != nil {
		return nil, err
	}
	c, err := client.NewWithWatch(r.backend.Admin(), client.Options{Scheme: s})
	if err != nil {
		return nil, fmt.Errorf("creating a client of the cluster: %w", err)
	}
	r.admin = c
	return c, nil
}
