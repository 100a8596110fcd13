package policy

import (
	"time"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// now is the fixed time of every test reconcile.
var now = time.Date(2026, 12, 2, 10, 4, 5, 0, time.UTC)

// Render refs used by the tests.
const (
	refOld = "sha256:0a0a0a0a0a0a"
	refNew = "sha256:0b0b0b0b0b0b"
	refPin = "sha256:0c0c0c0c0c0c"
)

// Annotation values and their times.
const (
	t0 = "2026-12-02T10:00:00Z"
	t1 = "2026-12-02T10:01:00Z"
	t2 = "2026-12-02T10:02:00Z"
)

// at parses an RFC 3339 time for a test table; it panics on a typo in the table.
func at(s string) *time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return &t
}

// option changes the Input of a test.
type option func(*Input)

// input builds the Input of a reconcile of a manual-mode Release whose current render is
// refNew, with nothing applied yet, at now.
func input(opts ...option) Input {
	in := Input{Now: now, CurrentRender: refNew}
	for _, o := range opts {
		o(&in)
	}
	return in
}

func automatic() option { return func(in *Input) { in.Policy.Automatic = true } }
func manual() option    { return func(in *Input) { in.Policy.Automatic = false } }

func interval(d time.Duration) option { return func(in *Input) { in.Policy.Interval = d } }

// backoff sets retryBackoff: initial, factor 2, max unset.
func backoff(initial time.Duration) option {
	return func(in *Input) { in.Policy.Backoff = &Backoff{Initial: initial, Factor: 2} }
}

func rendered(ref string) option       { return func(in *Input) { in.CurrentRender = ref } }
func lastSuccessful(ref string) option { return func(in *Input) { in.LastSuccessfulRender = ref } }

func syncAt(v string) option        { return func(in *Input) { in.Requests.SyncRequestedAt = v } }
func forceAt(v string) option       { return func(in *Input) { in.Requests.ForceRequestedAt = v } }
func handledSyncAt(v string) option { return func(in *Input) { in.Requests.LastHandledSyncAt = at(v) } }
func handledForceAt(v string) option {
	return func(in *Input) { in.Requests.LastHandledForceSyncAt = at(v) }
}

// syncRequest is a POST …/sync at v: it writes sync-requested-at.
func syncRequest(v string) option { return syncAt(v) }

// forcedSyncRequest is a POST …/sync?force=true at v: it writes both annotations.
func forcedSyncRequest(v string) option {
	return func(in *Input) { syncAt(v)(in); forceAt(v)(in) }
}

func failurePolicy(timeout time.Duration) option {
	return func(in *Input) { in.FailurePolicy = &FailurePolicy{HealthTimeout: timeout} }
}

func rollout(r Rollout) option { return func(in *Input) { in.Rollout = &r } }

// pin pins ref, whose Render exists.
func pin(ref string) option {
	return func(in *Input) { in.Pin = &Pin{RenderRef: ref, RenderExists: true} }
}

// pinnedRenderGone pins refPin, whose Render no longer exists.
func pinnedRenderGone() option {
	return func(in *Input) { in.Pin = &Pin{RenderRef: refPin} }
}

func preflight(reason, message string) option {
	return func(in *Input) { in.Preflight = &Result{Reason: reason, Message: message} }
}

func blockedByClusterWave(name string) option {
	return func(in *Input) { in.ClusterWaveBlocker = name }
}

func failedHook(ref, message string) option {
	return func(in *Input) { in.FailedHook = &FailedHook{RenderRef: ref, Message: message} }
}

func health(h Health) option { return func(in *Input) { in.Health = &h } }

func failures(n int) option { return func(in *Input) { in.Failures = n } }

// reconcile runs one reconcile's decisions, with attempt as the result of the apply
// when the plan applies.
func reconcile(in Input, attempt Result) (Plan, Outcome) {
	plan := Decide(in)
	return plan, Finish(in, plan, attempt)
}

// next is the Input of the next reconcile after out, with the status it wrote.
func next(in Input, out Outcome) Input {
	if out.Status.LastSuccessfulRender != "" {
		in.LastSuccessfulRender = out.Status.LastSuccessfulRender
	}
	if out.Status.LastHandledSyncAt != nil {
		in.Requests.LastHandledSyncAt = out.Status.LastHandledSyncAt
	}
	if out.Status.LastHandledForceSyncAt != nil {
		in.Requests.LastHandledForceSyncAt = out.Status.LastHandledForceSyncAt
	}
	if out.Status.Rollout != nil {
		r := out.Status.Rollout
		in.Rollout = &Rollout{Phase: v1.RolloutProgressing, RenderRef: r.RenderRef,
			PreviousRenderRef: r.PreviousRenderRef, Deadline: r.Deadline}
	}
	if p := out.Status.RolloutPhase; p != nil && in.Rollout != nil {
		r := *in.Rollout
		r.Phase = p.Phase
		in.Rollout = &r
	}
	switch out.Counter {
	case CounterIncrement:
		in.Failures++
	case CounterReset:
		in.Failures = 0
	}
	return in
}

// applyOf is the Apply of a plain apply of ref: dry run, no force.
func applyOf(ref string) *Apply { return &Apply{RenderRef: ref, DryRun: true} }
