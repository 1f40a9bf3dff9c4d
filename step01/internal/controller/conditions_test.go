package controller

// The status contract of docs/step01.md as a table. These tests need no
// cluster: make check runs TestConditionsFor before it starts one, and the
// skeleton keeps this file, so it fails there until conditionsFor is written.

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	netv1 "github.com/10xdev/gw10/step01/api/v1"
	"github.com/10xdev/gw10/step01/internal/dataplane"
)

// wantCondition is one condition of the contract. An empty reason or message
// means the contract leaves it open.
type wantCondition struct {
	typ    string
	status metav1.ConditionStatus
	reason string
	msg    string // a substring of the message
	notMsg string // what the message must not contain
}

func (w wantCondition) String() string {
	s := fmt.Sprintf("%s=%s", w.typ, w.status)
	if w.reason != "" {
		s += " reason " + w.reason
	}
	if w.msg != "" {
		s += fmt.Sprintf(" message containing %q", w.msg)
	}
	if w.notMsg != "" {
		s += fmt.Sprintf(" message without %q", w.notMsg)
	}
	return s
}

func (w wantCondition) matches(c metav1.Condition) bool {
	return c.Status == w.status &&
		(w.reason == "" || c.Reason == w.reason) &&
		strings.Contains(c.Message, w.msg) &&
		(w.notMsg == "" || !strings.Contains(c.Message, w.notMsg))
}

func TestConditionsFor(t *testing.T) {
	nack := &dataplane.NACKError{StatusCode: 422, Reason: "port taken", Body: `{"reason":"port taken","requestId":"r-7"}`}
	reset := fmt.Errorf("PUT http://127.0.0.1:9901/v1/routes/shop/web: %w",
		errors.New("read tcp 127.0.0.1:55414->127.0.0.1:9901: read: connection reset by peer"))
	busy := &dataplane.NACKError{StatusCode: 503, Reason: "busy"}
	tests := []struct {
		name string
		obs  observation
		want []wantCondition
	}{
		{
			name: "a missing Service is not accepted and not programmed",
			obs:  observation{serviceMissing: true},
			want: []wantCondition{
				{typ: netv1.ConditionAccepted, status: metav1.ConditionFalse, reason: netv1.ReasonServiceNotFound},
				// Any reason: what matters is that Programmed is not left True.
				{typ: netv1.ConditionProgrammed, status: metav1.ConditionFalse},
			},
		},
		{
			name: "an ACKed push is accepted and programmed",
			obs:  observation{},
			want: []wantCondition{
				{typ: netv1.ConditionAccepted, status: metav1.ConditionTrue, reason: netv1.ReasonValid},
				{typ: netv1.ConditionProgrammed, status: metav1.ConditionTrue, reason: netv1.ReasonSynced},
			},
		},
		{
			name: "a NACKed push is accepted but not programmed, with the NACK as message",
			obs:  observation{pushErr: nack},
			want: []wantCondition{
				{typ: netv1.ConditionAccepted, status: metav1.ConditionTrue, reason: netv1.ReasonValid},
				{typ: netv1.ConditionProgrammed, status: metav1.ConditionFalse, reason: netv1.ReasonPushFailed, msg: "port taken"},
			},
		},
		{
			name: "a NACK's message is its reason, never the rest of its answer",
			obs:  observation{pushErr: nack},
			want: []wantCondition{
				{typ: netv1.ConditionAccepted, status: metav1.ConditionTrue, reason: netv1.ReasonValid},
				{typ: netv1.ConditionProgrammed, status: metav1.ConditionFalse, reason: netv1.ReasonPushFailed, msg: "port taken", notMsg: "r-7"},
			},
		},
		{
			name: "an unreachable data plane's message does not carry the error's ports",
			obs:  observation{pushErr: reset},
			want: []wantCondition{
				{typ: netv1.ConditionAccepted, status: metav1.ConditionTrue, reason: netv1.ReasonValid},
				{typ: netv1.ConditionProgrammed, status: metav1.ConditionFalse, reason: netv1.ReasonPushFailed, notMsg: "55414"},
			},
		},
		{
			name: "a push the proxy was too busy to take is refused like any NACK",
			obs:  observation{pushErr: busy},
			want: []wantCondition{
				{typ: netv1.ConditionAccepted, status: metav1.ConditionTrue, reason: netv1.ReasonValid},
				{typ: netv1.ConditionProgrammed, status: metav1.ConditionFalse, reason: netv1.ReasonPushFailed, msg: "busy"},
			},
		},
		// TODO(step01): Rows of your own for the rows of the contract these leave out: a
		// withdraw that failed, and an EdgeRoute being deleted, with and
		// without its withdraw answered (docs/step01.md#the-status-contract).
		{
			name: "a missing Service wins over a stale push error",
			obs:  observation{serviceMissing: true, pushErr: nack},
			want: []wantCondition{
				{typ: netv1.ConditionAccepted, status: metav1.ConditionFalse, reason: netv1.ReasonServiceNotFound},
				{typ: netv1.ConditionProgrammed, status: metav1.ConditionFalse},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := conditionsFor(tt.obs)
			if len(got) == 0 {
				t.Fatalf("conditionsFor returned no conditions; want %s", describeWant(tt.want))
			}
			for _, w := range tt.want {
				c := meta.FindStatusCondition(got, w.typ)
				switch {
				case c == nil:
					t.Errorf("no %s condition: want %s; conditionsFor returned %s", w.typ, w, describe(got))
				case !w.matches(*c):
					t.Errorf("want %s; got %s=%s reason %s message %q", w, c.Type, c.Status, c.Reason, c.Message)
				}
			}
			if len(got) != len(tt.want) {
				t.Errorf("conditionsFor returned %d conditions, want exactly %d (Accepted and Programmed): %s", len(got), len(tt.want), describe(got))
			}
		})
	}
	if t.Failed() {
		t.Log("conditionsFor is in internal/controller/conditions.go; the contract is in docs/step01.md#the-status-contract")
	}
}

func describeWant(want []wantCondition) string {
	parts := make([]string, len(want))
	for i, w := range want {
		parts[i] = w.String()
	}
	return strings.Join(parts, " and ")
}

func describe(conds []metav1.Condition) string {
	if len(conds) == 0 {
		return "no conditions"
	}
	parts := make([]string, len(conds))
	for i, c := range conds {
		parts[i] = fmt.Sprintf("%s=%s/%s", c.Type, c.Status, c.Reason)
	}
	return strings.Join(parts, ", ")
}

func TestSetCondition(t *testing.T) {
	er := &netv1.EdgeRoute{}
	er.Generation = 4
	setCondition(er, metav1.Condition{Type: netv1.ConditionAccepted, Status: metav1.ConditionTrue, Reason: netv1.ReasonValid, Message: "ok"})
	first := meta.FindStatusCondition(er.Status.Conditions, netv1.ConditionAccepted)
	if first == nil || first.ObservedGeneration != 4 || first.LastTransitionTime.IsZero() {
		t.Fatalf("setCondition (internal/controller/conditions.go) did not set the condition stamped with generation 4 and a transition time: %+v", er.Status.Conditions)
	}
	// Pretend the condition was set long ago: an unchanged status must keep that time.
	earlier := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	first.LastTransitionTime = earlier

	er.Generation = 5
	setCondition(er, metav1.Condition{Type: netv1.ConditionAccepted, Status: metav1.ConditionTrue, Reason: netv1.ReasonValid, Message: "ok"})
	second := meta.FindStatusCondition(er.Status.Conditions, netv1.ConditionAccepted)
	if second.ObservedGeneration != 5 {
		t.Fatalf("observedGeneration = %d, want 5", second.ObservedGeneration)
	}
	if !second.LastTransitionTime.Equal(&earlier) {
		t.Fatalf("lastTransitionTime moved from %v to %v without a status change", earlier, second.LastTransitionTime)
	}
}
