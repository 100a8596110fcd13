package policy

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// withAction sets the failurePolicy's action.
func withAction(action v1.FailureAction) option {
	return func(in *Input) {
		if in.FailurePolicy == nil {
			in.FailurePolicy = &FailurePolicy{}
		}
		in.FailurePolicy.Action = action
	}
}

// progressing is a Progressing rollout of refNew from refOld whose deadline is d
// after now (negative: passed).
func progressing(d time.Duration) option {
	return rollout(Rollout{Phase: v1.RolloutProgressing, RenderRef: refNew, PreviousRenderRef: refOld, Deadline: now.Add(d)})
}

func healthOf(ref string, state v1.HealthStatus) option {
	return health(Health{RenderRef: ref, State: state})
}

// How a Progressing rollout ends (docs/rollouts.md, "Progressive rollout"):
// the phase written, and what the reconcile applies.
func TestRolloutOutcome(t *testing.T) {
	rolledBack := &Result{Reason: v1.ReasonRolledBack, Message: msgRolledBack}
	cases := map[string]struct {
		in        Input
		attempt   Result
		wantApply *Apply
		wantStop  *Result
		wantPhase *RolloutChange
		wantLast  string
	}{
		"Healthy before the deadline: Succeeded": {
			in:        input(automatic(), failurePolicy(time.Minute), lastSuccessful(refNew), progressing(time.Minute), healthOf(refNew, v1.HealthHealthy)),
			attempt:   Succeeded(),
			wantApply: applyOf(refNew),
			wantPhase: &RolloutChange{Phase: v1.RolloutSucceeded, Message: "The render became Healthy before its deadline."},
			wantLast:  refNew,
		},
		"Healthy for another render does not count": {
			in:        input(automatic(), failurePolicy(time.Minute), lastSuccessful(refNew), progressing(time.Minute), healthOf(refOld, v1.HealthHealthy)),
			attempt:   Succeeded(),
			wantApply: applyOf(refNew),
			wantLast:  refNew,
		},
		"still Progressing before the deadline: no change": {
			in:        input(automatic(), failurePolicy(time.Minute), lastSuccessful(refNew), progressing(time.Minute), healthOf(refNew, v1.HealthProgressing)),
			attempt:   Succeeded(),
			wantApply: applyOf(refNew),
			wantLast:  refNew,
		},
		"Degraded, action Rollback (the default): the previous render is applied, RolledBack": {
			in:        input(automatic(), failurePolicy(time.Minute), lastSuccessful(refNew), progressing(time.Minute), healthOf(refNew, v1.HealthDegraded)),
			attempt:   Succeeded(),
			wantApply: &Apply{RenderRef: refOld, DryRun: true, Report: rolledBack, RollBack: true},
			wantPhase: &RolloutChange{Phase: v1.RolloutRolledBack,
				Message: "The rollout failed: The render became Degraded; rolled back to render " + refOld + "."},
			wantLast: refOld,
		},
		"deadline passed, still Progressing: Failed, rolled back": {
			in:        input(automatic(), failurePolicy(time.Minute), lastSuccessful(refNew), progressing(-time.Second), healthOf(refNew, v1.HealthProgressing)),
			attempt:   Succeeded(),
			wantApply: &Apply{RenderRef: refOld, DryRun: true, Report: rolledBack, RollBack: true},
			wantPhase: &RolloutChange{Phase: v1.RolloutRolledBack, Message: "The rollout failed: The render did not become Healthy before its deadline " +
				now.Add(-time.Second).Format(time.RFC3339) + "; rolled back to render " + refOld + "."},
			wantLast: refOld,
		},
		"the deadline is reached exactly: Failed": {
			in:        input(automatic(), failurePolicy(time.Minute), withAction(v1.FailureActionHalt), lastSuccessful(refNew), progressing(0)),
			attempt:   Succeeded(),
			wantApply: applyOf(refNew),
			wantPhase: &RolloutChange{Phase: v1.RolloutFailed, Message: "The render did not become Healthy before its deadline " + now.Format(time.RFC3339) + "."},
			wantLast:  refNew,
		},
		"Degraded, action Halt: Failed, the failed render stays applied": {
			in:        input(automatic(), failurePolicy(time.Minute), withAction(v1.FailureActionHalt), lastSuccessful(refNew), progressing(time.Minute), healthOf(refNew, v1.HealthDegraded)),
			attempt:   Succeeded(),
			wantApply: applyOf(refNew),
			wantPhase: &RolloutChange{Phase: v1.RolloutFailed, Message: "The render became Degraded."},
			wantLast:  refNew,
		},
		"Failed with nothing to roll back to: Failed, says so": {
			in: input(automatic(), failurePolicy(time.Minute), lastSuccessful(refNew),
				rollout(Rollout{Phase: v1.RolloutProgressing, RenderRef: refNew, Deadline: now.Add(time.Minute)}), healthOf(refNew, v1.HealthDegraded)),
			attempt:   Succeeded(),
			wantApply: applyOf(refNew),
			wantPhase: &RolloutChange{Phase: v1.RolloutFailed, Message: "The render became Degraded. There is no previous render to roll back to."},
			wantLast:  refNew,
		},
		"the rollback's apply fails: Failed is written, the next reconcile tries again": {
			in:        input(automatic(), failurePolicy(time.Minute), lastSuccessful(refNew), progressing(time.Minute), healthOf(refNew, v1.HealthDegraded)),
			attempt:   Stopped(v1.ReasonDeployFailed, "down"),
			wantApply: &Apply{RenderRef: refOld, DryRun: true, Report: rolledBack, RollBack: true},
			wantPhase: &RolloutChange{Phase: v1.RolloutFailed, Message: "The render became Degraded."},
			wantLast:  refNew,
		},
		"a stored Failed rollout with Rollback is rolled back": {
			in: input(automatic(), failurePolicy(time.Minute), lastSuccessful(refNew),
				rollout(Rollout{Phase: v1.RolloutFailed, RenderRef: refNew, PreviousRenderRef: refOld})),
			attempt:   Succeeded(),
			wantApply: &Apply{RenderRef: refOld, DryRun: true, Report: rolledBack, RollBack: true},
			wantPhase: &RolloutChange{Phase: v1.RolloutRolledBack, Message: "The rollout failed; rolled back to render " + refOld + "."},
			wantLast:  refOld,
		},
		"manual mode, no /sync: the rollback goes on (the failurePolicy is a standing order)": {
			in:        input(manual(), failurePolicy(time.Minute), lastSuccessful(refNew), progressing(time.Minute), healthOf(refNew, v1.HealthDegraded)),
			attempt:   Succeeded(),
			wantApply: &Apply{RenderRef: refOld, DryRun: true, Report: rolledBack, RollBack: true},
			wantPhase: &RolloutChange{Phase: v1.RolloutRolledBack,
				Message: "The rollout failed: The render became Degraded; rolled back to render " + refOld + "."},
			wantLast: refOld,
		},
		// seed: "POST releases/<name>/sync?force=true also writes
		// convoy.kumodo.io/sync-force-requested-at. The next reconcile then: […] starts
		// a new Progressing rollout, if the Release has a failurePolicy. This clears a
		// Failed or RolledBack rollout."
		"SP-20: a pending force starts a new rollout instead of judging or rolling back": {
			in: input(automatic(), failurePolicy(time.Minute), lastSuccessful(refNew), progressing(-time.Second),
				healthOf(refNew, v1.HealthDegraded), forcedSyncRequest(t1)),
			attempt:   Succeeded(),
			wantApply: &Apply{RenderRef: refNew, RunHooks: true, RerunHooks: true, Forced: true, StartRollout: true},
			wantLast:  refNew,
		},
		"no failurePolicy: no rollout is judged": {
			in: input(automatic(), lastSuccessful(refNew),
				rollout(Rollout{Phase: v1.RolloutProgressing, RenderRef: refNew, PreviousRenderRef: refOld, Deadline: now.Add(-time.Minute)}), healthOf(refNew, v1.HealthDegraded)),
			attempt:   Succeeded(),
			wantApply: applyOf(refNew),
			wantLast:  refNew,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			plan, out := reconcile(tc.in, tc.attempt)
			if diff := cmp.Diff(tc.wantStop, plan.Stop); diff != "" {
				t.Errorf("Stop (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantApply, plan.Apply); diff != "" {
				t.Errorf("Apply (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantPhase, out.Status.RolloutPhase); diff != "" {
				t.Errorf("RolloutPhase (-want +got):\n%s", diff)
			}
			last := tc.in.LastSuccessfulRender
			if out.Status.LastSuccessfulRender != "" {
				last = out.Status.LastSuccessfulRender
			}
			if last != tc.wantLast {
				t.Errorf("lastSuccessful = %s, want %s", last, tc.wantLast)
			}
		})
	}
}

// After a rollback the Release holds at the previous render (RolledBack) until the
// render changes or a forced sync starts a new rollout, which succeeds once Healthy.
func TestRolloutRollbackThenHoldThenForce(t *testing.T) {
	in := input(automatic(), failurePolicy(time.Minute), lastSuccessful(refNew), progressing(time.Minute), healthOf(refNew, v1.HealthDegraded))
	_, out := reconcile(in, Succeeded())
	if out.Result.Reason != v1.ReasonRolledBack {
		t.Fatalf("rollback reconcile: %s, want RolledBack", out.Result.Reason)
	}
	in = next(in, out)

	plan, out := reconcile(in, Succeeded())
	if plan.Apply == nil || plan.Apply.RenderRef != refOld || out.Result.Reason != v1.ReasonRolledBack {
		t.Fatalf("reconcile after the rollback: apply %+v, result %s; want %s applied, RolledBack", plan.Apply, out.Result.Reason, refOld)
	}
	if out.Status.Rollout != nil || out.Status.RolloutPhase != nil {
		t.Errorf("the hold changed the rollout: %+v %+v", out.Status.Rollout, out.Status.RolloutPhase)
	}
	in = next(in, out)

	forced := in
	forcedSyncRequest(t1)(&forced)
	plan, out = reconcile(forced, Succeeded())
	if plan.Apply == nil || plan.Apply.RenderRef != refNew || !plan.Apply.StartRollout || out.Status.Rollout == nil {
		t.Fatalf("forced sync: apply %+v, rollout %+v; want a new rollout of %s", plan.Apply, out.Status.Rollout, refNew)
	}
	if out.Status.Rollout.PreviousRenderRef != refOld {
		t.Errorf("new rollout's previous render %s, want %s", out.Status.Rollout.PreviousRenderRef, refOld)
	}
	in = next(forced, out)
	healthOf(refNew, v1.HealthHealthy)(&in)
	_, out = reconcile(in, Succeeded())
	if p := out.Status.RolloutPhase; p == nil || p.Phase != v1.RolloutSucceeded {
		t.Errorf("after Healthy: rollout phase %+v, want Succeeded", p)
	}
	if out.Result.Reason != v1.ReasonApplied {
		t.Errorf("after Healthy: %s, want Applied", out.Result.Reason)
	}
}

// With action Halt (or a rollback that cannot happen) the failed render stays applied:
// the Healthy condition says that its rollout failed and why, as long as it is not
// Healthy; the conditions of other rollouts are untouched.
func TestHealthySaysWhyTheRolloutFailed(t *testing.T) {
	failedRollout := rollout(Rollout{Phase: v1.RolloutFailed, RenderRef: refNew, PreviousRenderRef: refOld, Message: "The render became Degraded."})
	degradedMsg := "An object of the last applied render failed. See the ReleaseInventory for which."
	cases := map[string]struct {
		in         Input
		wantStatus string
		wantReason string
		wantMsg    string
	}{
		"Halt: the reconcile that fails the rollout": {
			in: input(automatic(), failurePolicy(time.Minute), withAction(v1.FailureActionHalt), lastSuccessful(refNew),
				progressing(time.Minute), healthOf(refNew, v1.HealthDegraded)),
			wantStatus: StatusFalse, wantReason: v1.ReasonDegraded,
			wantMsg: "The rollout of render " + refNew + " failed: The render became Degraded. " +
				"It stays applied until a new render or a forced sync starts a new rollout. " + degradedMsg,
		},
		"Halt: the reconciles after it, at the deadline, still Progressing": {
			in: input(automatic(), failurePolicy(time.Minute), withAction(v1.FailureActionHalt), lastSuccessful(refNew),
				rollout(Rollout{Phase: v1.RolloutFailed, RenderRef: refNew, PreviousRenderRef: refOld, Message: "The render did not become Healthy before its deadline."}),
				healthOf(refNew, v1.HealthProgressing)),
			wantStatus: StatusFalse, wantReason: v1.ReasonProgressing,
			wantMsg: "The rollout of render " + refNew + " failed: The render did not become Healthy before its deadline. " +
				"It stays applied until a new render or a forced sync starts a new rollout. Objects of the last applied render are still progressing.",
		},
		"Halt: a failed render that becomes Healthy later is just Healthy": {
			in: input(automatic(), failurePolicy(time.Minute), withAction(v1.FailureActionHalt), lastSuccessful(refNew),
				failedRollout, healthOf(refNew, v1.HealthHealthy)),
			wantStatus: StatusTrue, wantReason: v1.ReasonHealthy,
			wantMsg: "Every object of the last applied render is healthy.",
		},
		"Rollback with nothing to roll back to: Failed, Healthy says so": {
			in: input(automatic(), failurePolicy(time.Minute), lastSuccessful(refNew),
				rollout(Rollout{Phase: v1.RolloutProgressing, RenderRef: refNew, Deadline: now.Add(time.Minute)}), healthOf(refNew, v1.HealthDegraded)),
			wantStatus: StatusFalse, wantReason: v1.ReasonDegraded,
			wantMsg: "The rollout of render " + refNew + " failed: The render became Degraded. There is no previous render to roll back to. " +
				"It stays applied until a new render or a forced sync starts a new rollout. " + degradedMsg,
		},
		"rolled back: Healthy is about the previous render, no note": {
			in: input(automatic(), failurePolicy(time.Minute), lastSuccessful(refNew),
				progressing(time.Minute), healthOf(refNew, v1.HealthDegraded)),
			wantStatus: StatusUnknown, wantReason: v1.ReasonNotAssessed,
			wantMsg: "The observer has not assessed the last applied render yet.",
		},
		"a forced sync starts a new rollout: no note": {
			in: input(automatic(), failurePolicy(time.Minute), withAction(v1.FailureActionHalt), lastSuccessful(refNew),
				failedRollout, healthOf(refNew, v1.HealthDegraded), forcedSyncRequest(t1)),
			wantStatus: StatusFalse, wantReason: v1.ReasonDegraded, wantMsg: degradedMsg,
		},
		"a new render: the failed rollout is not about what is applied": {
			in: input(automatic(), failurePolicy(time.Minute), withAction(v1.FailureActionHalt), lastSuccessful(refOld), rendered(refOld),
				rollout(Rollout{Phase: v1.RolloutFailed, RenderRef: refNew, Message: "The render became Degraded."}), healthOf(refOld, v1.HealthDegraded)),
			wantStatus: StatusFalse, wantReason: v1.ReasonDegraded, wantMsg: degradedMsg,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, out := reconcile(tc.in, Succeeded())
			got := out.Healthy
			if got.Status != tc.wantStatus || got.Reason != tc.wantReason || got.Message != tc.wantMsg {
				t.Errorf("Healthy = %s/%s %q\nwant %s/%s %q", got.Status, got.Reason, got.Message, tc.wantStatus, tc.wantReason, tc.wantMsg)
			}
		})
	}
}

// A rollout that fails and is rolled back in the same reconcile goes straight to
// RolledBack in status.rollout; its Failed phase is reported (RolloutFailure) so that
// an event marks each phase change. A stored Failed rollout rolled back later, and a
// rollback whose apply fails, report no second failure.
func TestRollbackReportsTheFailureFirst(t *testing.T) {
	_, out := reconcile(input(automatic(), failurePolicy(time.Minute), lastSuccessful(refNew), progressing(time.Minute),
		healthOf(refNew, v1.HealthDegraded)), Succeeded())
	want := &RolloutChange{Phase: v1.RolloutFailed, Message: "The render became Degraded."}
	if diff := cmp.Diff(want, out.Status.RolloutFailure); diff != "" {
		t.Errorf("RolloutFailure (-want +got):\n%s", diff)
	}
	if p := out.Status.RolloutPhase; p == nil || p.Phase != v1.RolloutRolledBack {
		t.Errorf("RolloutPhase %+v, want RolledBack", p)
	}

	_, out = reconcile(input(automatic(), failurePolicy(time.Minute), lastSuccessful(refNew),
		rollout(Rollout{Phase: v1.RolloutFailed, RenderRef: refNew, PreviousRenderRef: refOld})), Succeeded())
	if out.Status.RolloutFailure != nil {
		t.Errorf("a stored Failed rollout rolled back: RolloutFailure %+v, want none (its event was sent when it failed)", out.Status.RolloutFailure)
	}

	_, out = reconcile(input(automatic(), failurePolicy(time.Minute), lastSuccessful(refNew), progressing(time.Minute),
		healthOf(refNew, v1.HealthDegraded)), Stopped(v1.ReasonDeployFailed, "down"))
	if out.Status.RolloutFailure != nil || out.Status.RolloutPhase == nil || out.Status.RolloutPhase.Phase != v1.RolloutFailed {
		t.Errorf("rollback apply failed: RolloutFailure %+v, RolloutPhase %+v; want Failed stored and no extra failure", out.Status.RolloutFailure, out.Status.RolloutPhase)
	}
}

// A rollout is judged on its render's objects: while the render's apply holds at a
// sync wave, an object of a wave not applied yet is still the previous render's, and
// its Degraded (a Deployment that a rollback left ProgressDeadlineExceeded) cannot fail
// the new render's rollout (decision 0117: the chaos harness saw a good render rolled back
// the second its first wave was applied). The deadline still can.
func TestRolloutIsJudgedOnTheWavesAppliedWhileHeld(t *testing.T) {
	cm := v1.ObjectReference{Version: "v1", Kind: "ConfigMap", Namespace: "app", Name: "config"}
	deploy := v1.ObjectReference{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "app", Name: "web"}
	late := v1.ObjectReference{Version: "v1", Kind: "ConfigMap", Namespace: "app", Name: "late"}
	waves := map[v1.ObjectReference]int32{cm: 0, deploy: 1, late: 2}
	healthWith := func(states map[v1.ObjectReference]v1.HealthStatus) option {
		return health(Health{RenderRef: refNew, State: v1.HealthDegraded, Objects: states, Waves: waves})
	}
	held := func(applied WaveCount) option {
		return func(in *Input) { in.WaveHold, in.WaveHoldApplied = refNew, applied }
	}
	failed := &RolloutChange{Phase: v1.RolloutFailed, Message: "The render became Degraded."}
	cases := map[string]struct {
		opts []option
		want *RolloutChange
	}{
		"held after wave 0, the wave-1 Deployment Degraded: not judged": {
			opts: []option{held(1), healthWith(map[v1.ObjectReference]v1.HealthStatus{cm: v1.HealthHealthy, deploy: v1.HealthDegraded, late: v1.HealthHealthy})},
		},
		"held after wave 0, a wave-0 object Degraded: Failed": {
			opts: []option{held(1), healthWith(map[v1.ObjectReference]v1.HealthStatus{cm: v1.HealthDegraded, deploy: v1.HealthHealthy, late: v1.HealthHealthy})},
			want: failed,
		},
		"held after wave 1, the wave-1 Deployment Degraded: Failed": {
			opts: []option{held(2), healthWith(map[v1.ObjectReference]v1.HealthStatus{cm: v1.HealthHealthy, deploy: v1.HealthDegraded, late: v1.HealthHealthy})},
			want: failed,
		},
		"held after wave 1, only wave 2 Degraded: not judged": {
			opts: []option{held(2), healthWith(map[v1.ObjectReference]v1.HealthStatus{cm: v1.HealthHealthy, deploy: v1.HealthHealthy, late: v1.HealthDegraded})},
		},
		"not held (every wave applied): Degraded anywhere is Failed": {
			opts: []option{healthWith(map[v1.ObjectReference]v1.HealthStatus{cm: v1.HealthHealthy, deploy: v1.HealthHealthy, late: v1.HealthDegraded})},
			want: failed,
		},
		"held at another render's wave: the render's Degraded counts": {
			opts: []option{func(in *Input) { in.WaveHold, in.WaveHoldApplied = refOld, 1 },
				healthWith(map[v1.ObjectReference]v1.HealthStatus{cm: v1.HealthHealthy, deploy: v1.HealthDegraded, late: v1.HealthHealthy})},
			want: failed,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			opts := append([]option{automatic(), failurePolicy(time.Minute), withAction(v1.FailureActionHalt), lastSuccessful(refOld), progressing(time.Minute)}, tc.opts...)
			_, out := reconcile(input(opts...), Succeeded())
			if diff := cmp.Diff(tc.want, out.Status.RolloutPhase); diff != "" {
				t.Errorf("RolloutPhase (-want +got):\n%s", diff)
			}
		})
	}
}
