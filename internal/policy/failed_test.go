package policy

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// A failure outside Decide and Finish (a deletion that cannot go on, the finalizer's
// patch) is reported and retried as any failure of its reason: Applied=False, Ready
// from it, Healthy as it was, the count and retryBackoff of a transient failure.
func TestFailedIsReportedAndRetriedAsItsReason(t *testing.T) {
	healthy := Condition{Type: v1.ConditionHealthy, Status: StatusTrue, Reason: v1.ReasonHealthy, Message: "Every object is healthy."}
	cases := map[string]struct {
		in      Input
		res     Result
		wantOut Outcome
	}{
		"the Cluster away during a deletion, retryBackoff": {
			in:  input(automatic(), interval(time.Hour), backoff(time.Second), failures(2)),
			res: Stopped(v1.ReasonClusterNotReady, "Cluster \"prod\" cannot be reached."),
			wantOut: Outcome{
				Result:  Stopped(v1.ReasonClusterNotReady, "Cluster \"prod\" cannot be reached."),
				Kind:    KindTransient,
				Applied: Condition{Type: v1.ConditionApplied, Status: StatusFalse, Reason: v1.ReasonClusterNotReady, Message: "Cluster \"prod\" cannot be reached."},
				Healthy: healthy,
				Ready:   Condition{Type: v1.ConditionReady, Status: StatusFalse, Reason: v1.ReasonClusterNotReady, Message: "Cluster \"prod\" cannot be reached."},
				Counter: CounterIncrement,
				Requeue: Requeue{After: 4 * time.Second},
			},
		},
		"a failed delete without retryBackoff.initial: the work queue": {
			in:  input(manual(), interval(time.Hour)),
			res: Stopped(v1.ReasonDeleteFailed, "The API server refused."),
			wantOut: Outcome{
				Result:  Stopped(v1.ReasonDeleteFailed, "The API server refused."),
				Kind:    KindTransient,
				Applied: Condition{Type: v1.ConditionApplied, Status: StatusFalse, Reason: v1.ReasonDeleteFailed, Message: "The API server refused."},
				Healthy: healthy,
				Ready:   Condition{Type: v1.ConditionReady, Status: StatusFalse, Reason: v1.ReasonDeleteFailed, Message: "The API server refused."},
				Counter: CounterIncrement,
				Requeue: Requeue{ReturnError: true},
			},
		},
		"the attempt's bookkeeping is dropped": {
			in:  input(automatic(), backoff(time.Second)),
			res: Result{Reason: v1.ReasonDeployFailed, Message: "x", AfterApply: true, RecheckAfter: time.Minute, InventoryGeneration: 3},
			wantOut: Outcome{
				Result:  Stopped(v1.ReasonDeployFailed, "x"),
				Kind:    KindTransient,
				Applied: Condition{Type: v1.ConditionApplied, Status: StatusFalse, Reason: v1.ReasonDeployFailed, Message: "x"},
				Healthy: healthy,
				Ready:   Condition{Type: v1.ConditionReady, Status: StatusFalse, Reason: v1.ReasonDeployFailed, Message: "x"},
				Counter: CounterIncrement,
				Requeue: Requeue{After: time.Second},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.wantOut, Failed(tc.in, tc.res, healthy)); diff != "" {
				t.Errorf("Failed (-want +got):\n%s", diff)
			}
		})
	}
}

// TestFailedStatusWriteCountedOnce: a reconcile whose status write fails is one
// transient failure. It counts once in the FailureCounter whatever the reconcile had
// decided — a transient failure already counted is not counted a second time for the
// write, a success does not reset the count — and it is retried with retryBackoff
// (the delay of the failure it is), not handed to the work queue.
func TestFailedStatusWriteCountedOnce(t *testing.T) {
	cases := map[string]struct {
		in      Input
		attempt Result
		// before is the count before the reconcile (in.Failures).
		before      int
		wantCount   int
		wantRequeue Requeue
	}{
		"a transient failure whose write fails": {
			in: input(automatic(), backoff(time.Second)), attempt: failure(v1.ReasonDeployFailed),
			before: 2, wantCount: 3, wantRequeue: Requeue{After: 4 * time.Second},
		},
		"a success whose write fails": {
			in: input(automatic(), backoff(time.Second), interval(time.Hour)), attempt: Succeeded(),
			before: 0, wantCount: 1, wantRequeue: Requeue{After: time.Second},
		},
		"a non-transient failure whose write fails": {
			in: input(automatic(), backoff(time.Second), interval(time.Hour)), attempt: failure(v1.ReasonUnappliable),
			before: 1, wantCount: 2, wantRequeue: Requeue{After: 2 * time.Second},
		},
		"without retryBackoff.initial: the work queue": {
			in: input(automatic()), attempt: failure(v1.ReasonDeployFailed),
			before: 0, wantCount: 1, wantRequeue: Requeue{ReturnError: true},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			key := Key{Namespace: "team-a", Name: "web"}
			counter := NewFailureCounter()
			for range tc.before {
				counter.Increment(key)
			}
			tc.in.Failures = counter.Get(key)
			_, out := reconcile(tc.in, tc.attempt)
			// The controller applies one CounterUpdate per reconcile: the
			// Outcome's, or Unrecorded's when the status write failed.
			out = Unrecorded(tc.in, out)
			counter.Update(key, out.Counter)
			if got := counter.Get(key); got != tc.wantCount {
				t.Errorf("count %d after the failed write, want %d (once)", got, tc.wantCount)
			}
			if diff := cmp.Diff(tc.wantRequeue, out.Requeue); diff != "" {
				t.Errorf("Requeue (-want +got):\n%s", diff)
			}
			if out.Kind != KindTransient {
				t.Errorf("Kind %s, want %s", out.Kind, KindTransient)
			}
		})
	}
}
