package controller

import (
	"errors"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	netv1 "github.com/10xdev/gw10/solutions/step01/api/v1"
)

type wantCondition struct {
	typ    string
	status metav1.ConditionStatus
	reason string
	msg    string // substring
}

func TestConditionsFor(t *testing.T) {
	nack := errors.New("proxy NACKed the route (HTTP 422): port taken")
	tests := []struct {
		name string
		obs  observation
		want []wantCondition
	}{
		{
			name: "a missing Service is not accepted and not programmed",
			obs:  observation{serviceMissing: true},
			want: []wantCondition{
				{netv1.ConditionAccepted, metav1.ConditionFalse, netv1.ReasonServiceNotFound, "does not exist"},
				{netv1.ConditionProgrammed, metav1.ConditionFalse, netv1.ReasonNotAccepted, "withdrawn"},
			},
		},
		{
			name: "an ACKed push is accepted and programmed",
			obs:  observation{},
			want: []wantCondition{
				{netv1.ConditionAccepted, metav1.ConditionTrue, netv1.ReasonValid, ""},
				{netv1.ConditionProgrammed, metav1.ConditionTrue, netv1.ReasonSynced, ""},
			},
		},
		{
			name: "a NACKed push is accepted but not programmed, with the NACK as message",
			obs:  observation{pushErr: nack},
			want: []wantCondition{
				{netv1.ConditionAccepted, metav1.ConditionTrue, netv1.ReasonValid, ""},
				{netv1.ConditionProgrammed, metav1.ConditionFalse, netv1.ReasonPushFailed, "port taken"},
			},
		},
		{
			name: "a missing Service wins over a stale push error",
			obs:  observation{serviceMissing: true, pushErr: nack},
			want: []wantCondition{
				{netv1.ConditionAccepted, metav1.ConditionFalse, netv1.ReasonServiceNotFound, ""},
				{netv1.ConditionProgrammed, metav1.ConditionFalse, netv1.ReasonNotAccepted, ""},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := conditionsFor(tt.obs)
			if len(got) != len(tt.want) {
				t.Fatalf("got %d conditions, want %d: %+v", len(got), len(tt.want), got)
			}
			for _, w := range tt.want {
				c := meta.FindStatusCondition(got, w.typ)
				if c == nil {
					t.Fatalf("no %s condition in %+v", w.typ, got)
				}
				if c.Status != w.status || c.Reason != w.reason || !contains(c.Message, w.msg) {
					t.Errorf("%s = %s/%s %q, want %s/%s containing %q", w.typ, c.Status, c.Reason, c.Message, w.status, w.reason, w.msg)
				}
			}
		})
	}
}

func TestSetConditionStampsGenerationAndKeepsTransitionTime(t *testing.T) {
	er := &netv1.EdgeRoute{}
	er.Generation = 4
	setCondition(er, metav1.Condition{Type: netv1.ConditionAccepted, Status: metav1.ConditionTrue, Reason: netv1.ReasonValid, Message: "ok"})
	first := *meta.FindStatusCondition(er.Status.Conditions, netv1.ConditionAccepted)
	if first.ObservedGeneration != 4 || first.LastTransitionTime.IsZero() {
		t.Fatalf("condition not stamped: %+v", first)
	}

	time.Sleep(1100 * time.Millisecond) // metav1.Time has second resolution
	er.Generation = 5
	setCondition(er, metav1.Condition{Type: netv1.ConditionAccepted, Status: metav1.ConditionTrue, Reason: netv1.ReasonValid, Message: "ok"})
	second := *meta.FindStatusCondition(er.Status.Conditions, netv1.ConditionAccepted)
	if second.ObservedGeneration != 5 {
		t.Fatalf("observedGeneration = %d, want 5", second.ObservedGeneration)
	}
	if !second.LastTransitionTime.Equal(&first.LastTransitionTime) {
		t.Fatalf("lastTransitionTime moved from %v to %v without a status change", first.LastTransitionTime, second.LastTransitionTime)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
