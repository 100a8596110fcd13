package policy

import (
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// failure is a Result with reason and a fixed message.
func failure(reason string) Result { return Stopped(reason, "something happened") }

func TestSP34_TransientReasons(t *testing.T) {
	seed := "Transient failures include SourceNotReady, ValuesNotReady, ClusterNotReady, DeployFailed and PruneFailed."
	for _, reason := range []string{
		v1.ReasonSourceNotReady, v1.ReasonValuesNotReady, v1.ReasonClusterNotReady,
		v1.ReasonDeployFailed, v1.ReasonPruneFailed,
	} {
		t.Run(reason, func(t *testing.T) {
			if got := KindOf(reason); got != KindTransient {
				t.Errorf("seed: %q\nKindOf(%s) = %s, want %s", seed, reason, got, KindTransient)
			}
			// Retried with backoff, not at the next periodic reconcile.
			in := input(automatic(), interval(time.Hour), backoff(10*time.Second), failures(2))
			_, out := reconcile(in, failure(reason))
			want := Requeue{After: 40 * time.Second}
			if diff := cmp.Diff(want, out.Requeue); diff != "" {
				t.Errorf("seed: %q\nRequeue (-want +got):\n%s", seed, diff)
			}
			if out.Counter != CounterIncrement {
				t.Errorf("seed: %q\nCounter = %s, want %s", seed, out.Counter, CounterIncrement)
			}
		})
	}
}

func TestSP35_NonTransientReasonsCheckedAtNextPeriodicReconcile(t *testing.T) {
	seed := "Unsupported, Unappliable, Pinned, HookFailed and the waiting reasons are not transient. " +
		"convoy checks them again at the next periodic reconcile."
	cases := map[string]struct {
		reason string
		kind   Kind
	}{
		"Unsupported":            {reason: v1.ReasonUnsupported, kind: KindFailure},
		"Unappliable":            {reason: v1.ReasonUnappliable, kind: KindFailure},
		"HookFailed":             {reason: v1.ReasonHookFailed, kind: KindFailure},
		"VerificationFailed":     {reason: v1.ReasonVerificationFailed, kind: KindFailure},
		"ServiceAccountNotFound": {reason: v1.ReasonServiceAccountNotFound, kind: KindFailure},
		"Forbidden":              {reason: v1.ReasonForbidden, kind: KindFailure},
		"Pinned":                 {reason: v1.ReasonPinned, kind: KindHold},
		"WaitingForSync":         {reason: v1.ReasonWaitingForSync, kind: KindHold},
		"WaitingForClusterWave":  {reason: v1.ReasonWaitingForClusterWave, kind: KindHold},
		"WaitingForSyncWave":     {reason: v1.ReasonWaitingForSyncWave, kind: KindHold},
		"WaitingForHooks":        {reason: v1.ReasonWaitingForHooks, kind: KindHold},
		"RolledBack":             {reason: v1.ReasonRolledBack, kind: KindHold},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := KindOf(tc.reason); got != tc.kind {
				t.Errorf("seed: %q\nKindOf(%s) = %s, want %s", seed, tc.reason, got, tc.kind)
			}
			// With a backoff and failures counted, still the periodic reconcile, no error.
			in := input(automatic(), interval(5*time.Minute), backoff(time.Second), failures(3))
			_, out := reconcile(in, failure(tc.reason))
			if diff := cmp.Diff(Requeue{After: 5 * time.Minute}, out.Requeue); diff != "" {
				t.Errorf("seed: %q\nRequeue (-want +got):\n%s", seed, diff)
			}
		})
	}
}

func TestSP35_UnknownReasonIsRetried(t *testing.T) {
	if got := KindOf("SomethingNew"); got != KindTransient {
		t.Errorf("KindOf(unknown) = %s, want %s", got, KindTransient)
	}
}

func TestSP36_IntervalIsThePeriodicReconcile(t *testing.T) {
	seed := "spec.syncPolicy.interval is the period of the periodic reconcile."
	cases := map[string]struct {
		in      Input
		attempt Result
	}{
		"automatic, applied":          {in: input(automatic(), interval(5*time.Minute)), attempt: Succeeded()},
		"manual, in sync":             {in: input(manual(), interval(5*time.Minute), rendered(refOld), lastSuccessful(refOld))},
		"manual, WaitingForSync":      {in: input(manual(), interval(5*time.Minute), lastSuccessful(refOld))},
		"hold: WaitingForClusterWave": {in: input(automatic(), interval(5*time.Minute), blockedByClusterWave("a/b"))},
		"non-transient: Unsupported": {
			in: input(automatic(), interval(5*time.Minute), rendered(""), preflight(v1.ReasonUnsupported, "scheme ftp")),
		},
		"non-transient after the apply: Unappliable": {
			in: input(automatic(), interval(5*time.Minute)), attempt: failure(v1.ReasonUnappliable),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, out := reconcile(tc.in, tc.attempt)
			if diff := cmp.Diff(Requeue{After: 5 * time.Minute}, out.Requeue); diff != "" {
				t.Errorf("seed: %q\nRequeue (-want +got):\n%s", seed, diff)
			}
		})
	}
}

func TestSP37_NoIntervalNoPeriodicReconcile(t *testing.T) {
	seed := "With interval not set or 0, convoy schedules no periodic reconcile. " +
		"Only the informer resync and the events above start a reconcile."
	cases := map[string]struct {
		in      Input
		attempt Result
	}{
		"automatic, applied":     {in: input(automatic()), attempt: Succeeded()},
		"manual, WaitingForSync": {in: input(manual(), lastSuccessful(refOld))},
		"manual, in sync":        {in: input(manual(), rendered(refOld), lastSuccessful(refOld))},
		"hold: Pinned":           {in: input(automatic(), pinnedRenderGone())},
		"non-transient":          {in: input(automatic()), attempt: failure(v1.ReasonHookFailed)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, out := reconcile(tc.in, tc.attempt)
			if diff := cmp.Diff(Requeue{}, out.Requeue); diff != "" {
				t.Errorf("seed: %q\nRequeue (-want +got):\n%s", seed, diff)
			}
		})
	}
}

func TestSP38_BackoffDelay(t *testing.T) {
	seed := "With retryBackoff.initial set, convoy calculates the delay before retry number n as initial × factor^(n-1)."
	cases := map[string]struct {
		b    Backoff
		want []time.Duration // retries 1, 2, 3, …
	}{
		"10s × 2": {
			b:    Backoff{Initial: 10 * time.Second, Factor: 2},
			want: []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second, 80 * time.Second, 160 * time.Second},
		},
		"1s × 1.5 (fractions allowed)": {
			b:    Backoff{Initial: time.Second, Factor: 1.5},
			want: []time.Duration{time.Second, 1500 * time.Millisecond, 2250 * time.Millisecond, 3375 * time.Millisecond},
		},
		"factor 1: constant": {
			b:    Backoff{Initial: 30 * time.Second, Factor: 1},
			want: []time.Duration{30 * time.Second, 30 * time.Second, 30 * time.Second},
		},
		"100ms × 3": {
			b:    Backoff{Initial: 100 * time.Millisecond, Factor: 3},
			want: []time.Duration{100 * time.Millisecond, 300 * time.Millisecond, 900 * time.Millisecond, 2700 * time.Millisecond},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got []time.Duration
			for n := 1; n <= len(tc.want); n++ {
				got = append(got, tc.b.Delay(n))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("seed: %q\nDelay(1…) (-want +got):\n%s", seed, diff)
			}
		})
	}
}

// Consecutive transient failures through Decide and Finish: the n-th failure requeues
// after the delay before retry n.
func TestSP38_ConsecutiveFailuresBackOff(t *testing.T) {
	seed := "With retryBackoff.initial set, convoy calculates the delay before retry number n as initial × factor^(n-1)."
	in := input(automatic(), interval(time.Hour), backoff(5*time.Second))
	var got []time.Duration
	for range 4 {
		_, out := reconcile(in, failure(v1.ReasonDeployFailed))
		got = append(got, out.Requeue.After)
		in = next(in, out)
	}
	want := []time.Duration{5 * time.Second, 10 * time.Second, 20 * time.Second, 40 * time.Second}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("seed: %q\nRequeueAfter of failures 1…4 (-want +got):\n%s", seed, diff)
	}
}

func TestSP39_FactorBelowOneMeansTwo(t *testing.T) {
	seed := "If factor is less than 1, convoy uses 2."
	for _, factor := range []float64{0, 0.5, 0.999, -3, math.NaN()} {
		t.Run(fmt.Sprint(factor), func(t *testing.T) {
			b := Backoff{Initial: time.Second, Factor: factor}
			got := []time.Duration{b.Delay(1), b.Delay(2), b.Delay(3), b.Delay(4)}
			want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("seed: %q\nDelay(1…4) (-want +got):\n%s", seed, diff)
			}
		})
	}
}

func TestSP40_DelayCappedAtMax(t *testing.T) {
	cases := map[string]struct {
		seed string
		b    Backoff
		n    int
		want time.Duration
	}{
		"below max": {
			seed: "The delay is not more than max.",
			b:    Backoff{Initial: 10 * time.Second, Factor: 2, Max: time.Minute}, n: 3, want: 40 * time.Second,
		},
		"capped at max": {
			seed: "The delay is not more than max.",
			b:    Backoff{Initial: 10 * time.Second, Factor: 2, Max: time.Minute}, n: 4, want: time.Minute,
		},
		"max below initial": {
			seed: "The delay is not more than max.",
			b:    Backoff{Initial: 10 * time.Second, Factor: 2, Max: 5 * time.Second}, n: 1, want: 5 * time.Second,
		},
		"max unset: 1000 s": {
			seed: "If max is not set, the limit is 1000 seconds.",
			b:    Backoff{Initial: 10 * time.Second, Factor: 2}, n: 8, want: 1000 * time.Second,
		},
		"max unset, just below 1000 s": {
			seed: "If max is not set, the limit is 1000 seconds.",
			b:    Backoff{Initial: 10 * time.Second, Factor: 2}, n: 7, want: 640 * time.Second,
		},
		"max unset, a huge retry number does not overflow": {
			seed: "If max is not set, the limit is 1000 seconds.",
			b:    Backoff{Initial: time.Hour, Factor: 1e300}, n: 1_000_000, want: 1000 * time.Second,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := tc.b.Delay(tc.n); got != tc.want {
				t.Errorf("seed: %q\nDelay(%d) = %v, want %v", tc.seed, tc.n, got, tc.want)
			}
		})
	}
}

func TestSP41_FailureCountInMemory(t *testing.T) {
	seed := "convoy counts the failures in memory. A success or a hold resets the count."
	cases := map[string]struct {
		in      Input
		attempt Result
		want    CounterUpdate
	}{
		"a transient failure counts":            {in: input(automatic()), attempt: failure(v1.ReasonDeployFailed), want: CounterIncrement},
		"a transient failure before the render": {in: input(automatic(), rendered(""), preflight(v1.ReasonValuesNotReady, "no ConfigMap")), want: CounterIncrement},
		"a success resets":                      {in: input(automatic(), failures(3)), attempt: Succeeded(), want: CounterReset},
		"manual in sync resets":                 {in: input(manual(), rendered(refOld), lastSuccessful(refOld), failures(3)), want: CounterReset},
		"a hold resets: WaitingForSync":         {in: input(manual(), failures(3)), want: CounterReset},
		"a hold resets: WaitingForSyncWave":     {in: input(automatic(), failures(3)), attempt: failure(v1.ReasonWaitingForSyncWave), want: CounterReset},
		"a hold resets: Pinned after the apply": {in: input(automatic(), pin(refPin), failures(3)), attempt: Succeeded(), want: CounterReset},
		"a non-transient failure leaves it":     {in: input(automatic(), failures(3)), attempt: failure(v1.ReasonUnappliable), want: CounterKeep},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, out := reconcile(tc.in, tc.attempt)
			if out.Counter != tc.want {
				t.Errorf("seed: %q\nCounter = %s, want %s", seed, out.Counter, tc.want)
			}
		})
	}
}

func TestSP41_FailureCounter(t *testing.T) {
	seed := "convoy counts the failures in memory. A success or a hold resets the count."
	podinfo, other := Key{Namespace: "team-a", Name: "podinfo"}, Key{Namespace: "team-b", Name: "podinfo"}
	c := NewFailureCounter()
	var got []int
	for _, u := range []CounterUpdate{
		CounterIncrement, CounterIncrement, CounterKeep, CounterIncrement, // transient, transient, non-transient, transient
		CounterReset, // success or hold
		CounterIncrement,
	} {
		got = append(got, c.Update(podinfo, u))
	}
	if diff := cmp.Diff([]int{1, 2, 2, 3, 0, 1}, got); diff != "" {
		t.Errorf("seed: %q\ncounts (-want +got):\n%s", seed, diff)
	}
	if n := c.Get(other); n != 0 {
		t.Errorf("seed: %q\nanother Release's count = %d, want 0", seed, n)
	}
}

// The controller keys the counter by the request's NamespacedName.
func TestFailureCounterKeyFromNamespacedName(t *testing.T) {
	c := NewFailureCounter()
	c.Increment(Key(types.NamespacedName{Namespace: "team-a", Name: "podinfo"}))
	if n := c.Get(Key{Namespace: "team-a", Name: "podinfo"}); n != 1 {
		t.Errorf("count = %d, want 1", n)
	}
}

// A new FailureCounter starts every Release at 0: the counter lives in memory only.
// That a restart of the controller resets the count is proven end to end, with a
// restarted controller, by internal/controller's TestSP41_RestartResetsTheCount.
func TestSP41_ANewFailureCounterStartsAtZero(t *testing.T) {
	key := Key{Namespace: "team-a", Name: "podinfo"}
	before := NewFailureCounter()
	before.Increment(key)
	before.Increment(key)
	for name, c := range map[string]*FailureCounter{"NewFailureCounter": NewFailureCounter(), "zero value": {}} {
		if n := c.Get(key); n != 0 {
			t.Errorf("%s: count = %d, want 0", name, n)
		}
	}
	if n := before.Get(key); n != 2 {
		t.Errorf("the first counter's count = %d, want 2", n)
	}
}

func TestSP41_FailureCounterIsSafeForConcurrentUse(t *testing.T) {
	c := NewFailureCounter()
	key := Key{Namespace: "team-a", Name: "podinfo"}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for range 100 {
				c.Increment(key)
				c.Get(Key{Namespace: "team-a", Name: fmt.Sprint(i)})
			}
		})
	}
	wg.Wait()
	if n := c.Get(key); n != 800 {
		t.Errorf("count = %d, want 800", n)
	}
}

func TestSP42_WithoutInitialTheWorkQueueRetries(t *testing.T) {
	seed := "Without retryBackoff.initial, the work queue retries with its default rate limiter."
	cases := map[string]struct {
		in Input
	}{
		"no retryBackoff":      {in: input(automatic(), interval(time.Hour))},
		"no interval either":   {in: input(automatic())},
		"many failures before": {in: input(automatic(), failures(30))},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, out := reconcile(tc.in, failure(v1.ReasonClusterNotReady))
			if diff := cmp.Diff(Requeue{ReturnError: true}, out.Requeue); diff != "" {
				t.Errorf("seed: %q\nRequeue (-want +got):\n%s", seed, diff)
			}
		})
	}
}

func TestRequeueAtRolloutDeadline(t *testing.T) {
	progressing := func(deadline time.Time) option {
		return rollout(Rollout{Phase: v1.RolloutProgressing, RenderRef: refNew, PreviousRenderRef: refOld, Deadline: deadline})
	}
	cases := map[string]struct {
		in      Input
		attempt Result
		want    Requeue
	}{
		"deadline before the interval": {
			in:      input(automatic(), interval(time.Hour), failurePolicy(0), lastSuccessful(refNew), progressing(now.Add(3*time.Minute))),
			attempt: Succeeded(),
			want:    Requeue{After: 3 * time.Minute},
		},
		"interval before the deadline": {
			in:      input(automatic(), interval(time.Minute), failurePolicy(0), lastSuccessful(refNew), progressing(now.Add(3*time.Minute))),
			attempt: Succeeded(),
			want:    Requeue{After: time.Minute},
		},
		"no interval: the deadline": {
			in:      input(manual(), rendered(refNew), lastSuccessful(refNew), failurePolicy(0), progressing(now.Add(3*time.Minute))),
			attempt: Succeeded(),
			want:    Requeue{After: 3 * time.Minute},
		},
		"deadline passed: the interval": {
			in:      input(automatic(), interval(time.Hour), failurePolicy(0), lastSuccessful(refNew), progressing(now.Add(-time.Second))),
			attempt: Succeeded(),
			want:    Requeue{After: time.Hour},
		},
		"a rollout started now: its deadline": {
			in:      input(automatic(), interval(time.Hour), failurePolicy(2*time.Minute), lastSuccessful(refOld)),
			attempt: Succeeded(),
			want:    Requeue{After: 2 * time.Minute},
		},
		"transient failure with backoff: the earlier": {
			in:      input(automatic(), backoff(10*time.Minute), failurePolicy(0), lastSuccessful(refNew), progressing(now.Add(3*time.Minute))),
			attempt: failure(v1.ReasonDeployFailed),
			want:    Requeue{After: 3 * time.Minute},
		},
		"a Succeeded rollout has no deadline": {
			in: input(automatic(), interval(time.Hour), failurePolicy(0), rendered(refNew), lastSuccessful(refNew),
				rollout(Rollout{Phase: v1.RolloutSucceeded, RenderRef: refNew, Deadline: now.Add(time.Minute)})),
			attempt: Succeeded(),
			want:    Requeue{After: time.Hour},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, out := reconcile(tc.in, tc.attempt)
			if diff := cmp.Diff(tc.want, out.Requeue); diff != "" {
				t.Errorf("Requeue (-want +got):\n%s", diff)
			}
		})
	}
}
