package controller

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// SP-42 — seed: without retryBackoff.initial the work queue's default rate limiter
// retries; design: "A success or a hold resets the count (and the work queue's); a
// non-transient failure leaves it." Decision 0092: a reconcile that ends in a
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

// SP-42 — seed: "Without retryBackoff.initial, the work queue retries with its default
// rate limiter. That limiter starts at 5 milliseconds and doubles the delay up to 1000
// seconds." The limiter is convoy's own (newRetryLimiter, which Setup gives the
// controller's work queue: TestSP42_TransientFailureWithoutInitialGoesToTheWorkQueue
// sees its count grow); this pins its delays, the 1000 s cap included, for as many
// failures as a Release may have.
func TestSP42_DefaultRateLimiterStartsAt5msAndDoublesTo1000s(t *testing.T) {
	seed := "That limiter starts at 5 milliseconds and doubles the delay up to 1000 seconds."
	req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "team-a", Name: "podinfo"}}
	l := newRetryLimiter()
	var got []time.Duration
	for range 40 {
		got = append(got, l.When(req))
	}
	var want []time.Duration
	for d := 5 * time.Millisecond; len(want) < 40; d *= 2 {
		want = append(want, min(d, 1000*time.Second))
	}
	// 5 ms × 2^17 = 655.36 s, × 2^18 = 1310.72 s: the 19th failure is the first at the cap.
	if want[0] != 5*time.Millisecond || want[1] != 10*time.Millisecond || want[17] != 655360*time.Millisecond ||
		want[18] != 1000*time.Second || want[39] != 1000*time.Second {
		t.Fatalf("the expected table is wrong: %v", want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("seed: %q\ndelay of failure %d = %v, want %v", seed, i+1, got[i], want[i])
		}
	}
	// A success (or a hold) makes the work queue forget the Release: 5 ms again.
	l.Forget(req)
	if d := l.When(req); d != 5*time.Millisecond {
		t.Errorf("seed: %q\ndelay after a success = %v, want 5ms", seed, d)
	}
}
