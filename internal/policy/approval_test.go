package policy

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// Full render refs for the approval tests: a bound /sync names a full ref, and its
// short form (the first 10 hex digits) is what messages show.
const (
	fullOld = "sha256:0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a"
	fullNew = "sha256:0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b"
	fullPin = "sha256:0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c"
)

// boundSyncRequest is a POST …/sync?render=ref at v: it writes sync-requested-at and
// sync-requested-render.
func boundSyncRequest(v, ref string) option {
	return func(in *Input) { syncAt(v)(in); in.Requests.SyncRequestedRender = ref }
}

// boundForcedSyncRequest is a POST …/sync?render=ref&force=true at v.
func boundForcedSyncRequest(v, ref string) option {
	return func(in *Input) { boundSyncRequest(v, ref)(in); forceAt(v)(in) }
}

// TestApprovalBoundToARender is the decision of a /sync bound to a render: it approves
// that render, not the time it was made. A plain /sync keeps the sync policy's meaning.
func TestApprovalBoundToARender(t *testing.T) {
	staleWaiting := "The /sync of 2026-12-02T10:01:00Z approved render 0a0a0a0a0a; the current render is " +
		"0b0b0b0b0b: review it with kubectl convoy release diff and approve it with kubectl convoy release sync."
	cases := map[string]struct {
		in   Input
		want Plan
	}{
		"bound to the current render: applied as a plain /sync is": {
			in: input(manual(), rendered(fullNew), lastSuccessful(fullOld), handledSyncAt(t0), boundSyncRequest(t1, fullNew)),
			want: Plan{
				Sync:  Request{At: at(t1), Pending: true, Bound: fullNew},
				Apply: &Apply{RenderRef: fullNew, DryRun: true, RunHooks: true},
			},
		},
		"bound to a render that is no longer current: neither applied nor handled": {
			in: input(manual(), rendered(fullNew), lastSuccessful(fullPin), handledSyncAt(t0), boundSyncRequest(t1, fullOld)),
			want: Plan{
				Sync: Request{At: at(t1), Bound: fullOld, Stale: true},
				Stop: &Result{Reason: v1.ReasonWaitingForSync, Message: staleWaiting},
			},
		},
		"bound to a render that is no longer current, nothing applied yet": {
			in: input(manual(), rendered(fullNew), boundSyncRequest(t1, fullOld)),
			want: Plan{
				Sync: Request{At: at(t1), Bound: fullOld, Stale: true},
				Stop: &Result{Reason: v1.ReasonWaitingForSync, Message: staleWaiting},
			},
		},
		"bound to another render while the current one is applied: in sync, the approval is not applied": {
			in: input(manual(), rendered(fullNew), lastSuccessful(fullNew), handledSyncAt(t0), boundSyncRequest(t1, fullOld)),
			want: Plan{
				Sync: Request{At: at(t1), Bound: fullOld, Stale: true},
				Stop: &Result{Reason: v1.ReasonApplied, Message: msgManualInSync + " The /sync of 2026-12-02T10:01:00Z " +
					"approved render 0a0a0a0a0a; the current render is 0b0b0b0b0b: it is not applied."},
			},
		},
		"bound to a render that is no longer current, a lower cluster wave not ready: the approval waits, not the wave": {
			in: input(manual(), rendered(fullNew), lastSuccessful(fullPin), boundSyncRequest(t1, fullOld), blockedByClusterWave("team-a/db")),
			want: Plan{
				Sync: Request{At: at(t1), Bound: fullOld, Stale: true},
				Stop: &Result{Reason: v1.ReasonWaitingForSync, Message: staleWaiting},
			},
		},
		"bound to the current render, a lower cluster wave not ready: waits for the wave": {
			in: input(manual(), rendered(fullNew), boundSyncRequest(t1, fullNew), blockedByClusterWave("team-a/db")),
			want: Plan{
				Sync: Request{At: at(t1), Pending: true, Bound: fullNew},
				Stop: &Result{Reason: v1.ReasonWaitingForClusterWave, Message: "Waiting for Release team-a/db of a lower " +
					"cluster wave on the same Cluster to be Applied and Healthy."},
			},
		},
		"bound to the pinned render of a pinned Release: the pin is applied": {
			in: input(manual(), rendered(fullNew), lastSuccessful(fullOld), pin(fullPin), boundSyncRequest(t1, fullPin)),
			want: Plan{
				Sync: Request{At: at(t1), Pending: true, Bound: fullPin},
				Apply: &Apply{RenderRef: fullPin, DryRun: true, RunHooks: true,
					Report: &Result{Reason: v1.ReasonPinned, Message: pinnedMessage(fullPin, fullNew)}},
			},
		},
		"bound to the current render of a pinned Release: the pin is applied, as a plain /sync's is": {
			in: input(manual(), rendered(fullNew), lastSuccessful(fullOld), pin(fullPin), boundSyncRequest(t1, fullNew)),
			want: Plan{
				Sync: Request{At: at(t1), Pending: true, Bound: fullNew},
				Apply: &Apply{RenderRef: fullPin, DryRun: true, RunHooks: true,
					Report: &Result{Reason: v1.ReasonPinned, Message: pinnedMessage(fullPin, fullNew)}},
			},
		},
		"a plain /sync approves whatever render is current": {
			in: input(manual(), rendered(fullNew), lastSuccessful(fullOld), handledSyncAt(t0), syncRequest(t1)),
			want: Plan{
				Sync:  Request{At: at(t1), Pending: true},
				Apply: &Apply{RenderRef: fullNew, DryRun: true, RunHooks: true},
			},
		},
		"a bound request already handled is no request": {
			in: input(manual(), rendered(fullNew), lastSuccessful(fullOld), handledSyncAt(t1), boundSyncRequest(t1, fullOld)),
			want: Plan{
				Sync: Request{At: at(t1), Bound: fullOld},
				Stop: &Result{Reason: v1.ReasonWaitingForSync, Message: msgManualDiffers},
			},
		},
		"automatic mode ignores the binding": {
			in: input(automatic(), rendered(fullNew), lastSuccessful(fullOld), boundSyncRequest(t1, fullOld)),
			want: Plan{
				Sync:  Request{At: at(t1)},
				Apply: &Apply{RenderRef: fullNew, DryRun: true, RunHooks: true},
			},
		},
		"a forced /sync bound to a render that is no longer current: nothing applied, the force is used up": {
			in: input(manual(), rendered(fullNew), lastSuccessful(fullPin), handledSyncAt(t0), handledForceAt(t0),
				boundForcedSyncRequest(t1, fullOld), blockedByClusterWave("team-a/db")),
			want: Plan{
				Sync:  Request{At: at(t1), Bound: fullOld, Stale: true},
				Force: Request{At: at(t1), Pending: true},
				Stop:  &Result{Reason: v1.ReasonWaitingForSync, Message: staleWaiting},
			},
		},
		"a forced /sync bound to the current render: forced apply": {
			in: input(manual(), rendered(fullNew), lastSuccessful(fullOld), handledSyncAt(t0), handledForceAt(t0),
				boundForcedSyncRequest(t1, fullNew)),
			want: Plan{
				Sync:  Request{At: at(t1), Pending: true, Bound: fullNew},
				Force: Request{At: at(t1), Pending: true},
				Apply: &Apply{RenderRef: fullNew, RunHooks: true, RerunHooks: true, Forced: true},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Decide(tc.in)); diff != "" {
				t.Errorf("Decide() (-want +got):\n%s", diff)
			}
		})
	}
}

// TestApprovalHandledOnlyForItsRender follows a bound /sync through the reconciles of
// the example: the approval of render A waits for a lower cluster wave; the
// values change (render B); the wave turns ready; B is not applied, and the request is
// not handled. Approving B applies it and handles the new request.
func TestApprovalHandledOnlyForItsRender(t *testing.T) {
	in := input(manual(), rendered(fullOld), lastSuccessful(fullPin), handledSyncAt(t0),
		boundSyncRequest(t1, fullOld), blockedByClusterWave("team-a/db"))
	plan, out := reconcile(in, Result{})
	if plan.Apply != nil || out.Result.Reason != v1.ReasonWaitingForClusterWave {
		t.Fatalf("approved render A behind a lower wave: apply %v, reason %s; want no apply, WaitingForClusterWave", plan.Apply, out.Result.Reason)
	}

	// A colleague edits the values: render B. The lower wave turns ready.
	in = next(in, out)
	in.CurrentRender, in.ClusterWaveBlocker = fullNew, ""
	plan, out = reconcile(in, Result{})
	if plan.Apply != nil {
		t.Fatalf("render B applied under the approval of render A: %+v", plan.Apply)
	}
	if out.Result.Reason != v1.ReasonWaitingForSync || out.Applied.Status != StatusFalse {
		t.Errorf("render B: %s/%s; want Applied=False WaitingForSync", out.Applied.Status, out.Result.Reason)
	}
	if out.Status.LastHandledSyncAt != nil {
		t.Errorf("the approval of render A was handled at %v without its apply", out.Status.LastHandledSyncAt)
	}

	// Someone approves render B.
	in = next(in, out)
	boundSyncRequest(t2, fullNew)(&in)
	plan, out = reconcile(in, Result{Reason: v1.ReasonApplied})
	if plan.Apply == nil || plan.Apply.RenderRef != fullNew {
		t.Fatalf("the approval of render B: apply %+v; want render B", plan.Apply)
	}
	if diff := cmp.Diff(at(t2), out.Status.LastHandledSyncAt); diff != "" {
		t.Errorf("lastHandledSyncAt after render B's apply (-want +got):\n%s", diff)
	}
}

func TestHoldsBeforeRenderWithABoundRequest(t *testing.T) {
	cases := map[string]struct {
		in   Input
		want bool
	}{
		"a plain /sync waits for the wave before the render": {
			in: input(manual(), syncRequest(t1), blockedByClusterWave("team-a/db")), want: true,
		},
		"a bound /sync renders first: only the render says whether it is still approved": {
			in: input(manual(), boundSyncRequest(t1, fullOld), blockedByClusterWave("team-a/db")), want: false,
		},
		"a bound forced /sync renders first too": {
			in: input(manual(), boundForcedSyncRequest(t1, fullOld), blockedByClusterWave("team-a/db")), want: false,
		},
		"automatic mode waits for the wave": {
			in: input(automatic(), boundSyncRequest(t1, fullOld), blockedByClusterWave("team-a/db")), want: true,
		},
		"no lower wave: nothing holds": {
			in: input(manual(), syncRequest(t1)), want: false,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := HoldsBeforeRender(tc.in); got != tc.want {
				t.Errorf("HoldsBeforeRender() = %v, want %v", got, tc.want)
			}
		})
	}
}
