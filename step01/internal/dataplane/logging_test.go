package dataplane

import (
	"context"
	"slices"
	"testing"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	netv1 "github.com/10xdev/gw10/step01/api/v1"
)

// TestTheLoggingDataPlaneHoldsWhatItWasPushed: a look at its table (a drift
// source's) finds the routes pushed and not withdrawn, so a correct
// controller run against it does not push them again every drift period.
func TestTheLoggingDataPlaneHoldsWhatItWasPushed(t *testing.T) {
	ctx := context.Background()
	l := &Logging{Log: logr.Discard()}
	for _, key := range []types.NamespacedName{{Namespace: "shop", Name: "web"}, {Namespace: "a", Name: "api"}, {Namespace: "shop", Name: "old"}} {
		if err := l.Program(ctx, &netv1.EdgeRoute{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}); err != nil {
			t.Fatalf("Program(%s): %v", key, err)
		}
	}
	for _, key := range []types.NamespacedName{{Namespace: "shop", Name: "old"}, {Namespace: "shop", Name: "never"}} {
		if err := l.Remove(ctx, key); err != nil {
			t.Fatalf("Remove(%s): %v", key, err)
		}
	}
	got, err := l.Routes(ctx)
	want := []types.NamespacedName{{Namespace: "a", Name: "api"}, {Namespace: "shop", Name: "web"}}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("Routes = %v, %v; want %v", got, err, want)
	}
}
