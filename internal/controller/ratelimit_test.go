package controller

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// SP-42 — seed: without retryBackoff.initial the work queue's default rate limiter
// retries; design: "A success or a hold resets the count (and the work queue's); a
// non-transient failure leaves it." Issue 13 case 10: a reconcile that ends in a
// non-transient failure returns no error, and controller-runtime then forgets the
// Release; the limiter keeps its count.
func TestSP42_NonTransientFailureKeepsTheWorkQueueCount(t *testing.T) {
	req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "team-a", Name: "podinfo"}}
	other := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "team-a", Name: "other"}}
	l := newRetryLimiter()
	var got []time.Duration
	when := func() { got = append(got, l.When(req)) }

	when() // transient failure 1
	when() // transient failure 2
	l.keep(req)
	l.Forget(req) // a non-transient failure: the count stays
	when()        // transient failure 3
	l.keep(other) // another Release's mark does not keep this one's count
	l.Forget(req) // a success: the count resets
	when()
	l.Forget(other)

	want := []time.Duration{5 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond, 5 * time.Millisecond}
	if len(got) != len(want) {
		t.Fatalf("delays %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("delay %d = %v, want %v (all: %v)", i+1, got[i], want[i], got)
		}
	}
	if n := l.NumRequeues(req); n != 1 {
		t.Errorf("NumRequeues = %d after a reset and one failure, want 1", n)
	}
}
