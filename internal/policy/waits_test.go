package policy

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// waveHold records that the last apply of ref held at a sync wave (status.syncWave).
func waveHold(ref string) option { return func(in *Input) { in.WaveHold = ref } }

// hooksRunning records a running hook batch of ref (status.hooks).
func hooksRunning(ref string) option { return func(in *Input) { in.HooksRunning = ref } }

// heldAtWave is the attempt of an apply whose first waves were applied and whose next
// wave waits.
func heldAtWave() Result {
	return Result{Reason: v1.ReasonWaitingForSyncWave, Message: "Sync waves up to 0 are applied; wave 1 waits until they are Healthy.", WavesApplied: true}
}

// Decision 0070: the rollout of a render starts when its first wave is applied, so
// that a render whose first wave never becomes Healthy fails at its deadline; it does
// not succeed while later waves wait.
func TestRolloutStartsAtTheFirstWave(t *testing.T) {
	start := &RolloutStart{RenderRef: refNew, PreviousRenderRef: refOld, StartedAt: now, Deadline: now.Add(time.Minute)}
	cases := map[string]struct {
		in          Input
		attempt     Result
		wantRollout *RolloutStart
		wantPhase   *RolloutChange
		wantLast    string
		wantReason  string
	}{
		"first wave applied, the next waits: the rollout starts, the apply is not done": {
			in:          input(automatic(), lastSuccessful(refOld), failurePolicy(time.Minute)),
			attempt:     heldAtWave(),
			wantRollout: start,
			wantReason:  v1.ReasonWaitingForSyncWave,
		},
		"the next wave of the same render: the rollout goes on": {
			in:         input(automatic(), lastSuccessful(refOld), failurePolicy(time.Minute), progressing(30*time.Second), waveHold(refNew)),
			attempt:    heldAtWave(),
			wantReason: v1.ReasonWaitingForSyncWave,
		},
		"first wave Healthy, later waves wait: not Succeeded yet": {
			in:         input(automatic(), lastSuccessful(refOld), failurePolicy(time.Minute), progressing(30*time.Second), waveHold(refNew), healthOf(refNew, v1.HealthHealthy)),
			attempt:    heldAtWave(),
			wantReason: v1.ReasonWaitingForSyncWave,
		},
		"all waves applied and Healthy: Succeeded": {
			in:         input(automatic(), lastSuccessful(refNew), failurePolicy(time.Minute), progressing(30*time.Second), healthOf(refNew, v1.HealthHealthy)),
			attempt:    Succeeded(),
			wantPhase:  &RolloutChange{Phase: v1.RolloutSucceeded, Message: "The render became Healthy before its deadline."},
			wantLast:   refNew,
			wantReason: v1.ReasonApplied,
		},
		"first wave never Healthy, deadline passed, Halt: Failed while waiting for the wave": {
			in: input(automatic(), lastSuccessful(refOld), failurePolicy(time.Minute), withAction(v1.FailureActionHalt),
				progressing(-time.Second), waveHold(refNew), healthOf(refNew, v1.HealthProgressing)),
			attempt: heldAtWave(),
			wantPhase: &RolloutChange{Phase: v1.RolloutFailed, Message: "The render did not become Healthy before its deadline " +
				now.Add(-time.Second).Format(time.RFC3339) + "."},
			wantReason: v1.ReasonWaitingForSyncWave,
		},
		"first wave never Healthy, deadline passed, Rollback: the previous render is applied": {
			in: input(automatic(), lastSuccessful(refOld), failurePolicy(time.Minute),
				progressing(-time.Second), waveHold(refNew), healthOf(refNew, v1.HealthProgressing)),
			attempt: Succeeded(),
			wantPhase: &RolloutChange{Phase: v1.RolloutRolledBack, Message: "The rollout failed: The render did not become Healthy before its deadline " +
				now.Add(-time.Second).Format(time.RFC3339) + "; rolled back to render " + refOld + "."},
			wantLast:   refOld,
			wantReason: v1.ReasonRolledBack,
		},
		"a rollback that waited for a wave of the previous render says why the rollout failed": {
			in: input(automatic(), lastSuccessful(refOld), failurePolicy(time.Minute), rollout(Rollout{
				Phase: v1.RolloutFailed, RenderRef: refNew, PreviousRenderRef: refOld, Message: "The render became Degraded.",
			}), waveHold(refOld)),
			attempt: Succeeded(),
			wantPhase: &RolloutChange{Phase: v1.RolloutRolledBack, Message: "The rollout failed: The render became Degraded; " +
				"rolled back to render " + refOld + "."},
			wantLast:   refOld,
			wantReason: v1.ReasonRolledBack,
		},
		"a failed apply of the first wave starts no rollout": {
			in:         input(automatic(), lastSuccessful(refOld), failurePolicy(time.Minute)),
			attempt:    Stopped(v1.ReasonDeployFailed, "The apply of sync wave 0 failed: boom."),
			wantReason: v1.ReasonDeployFailed,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, out := reconcile(tc.in, tc.attempt)
			if diff := cmp.Diff(tc.wantRollout, out.Status.Rollout); diff != "" {
				t.Errorf("new rollout (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantPhase, out.Status.RolloutPhase); diff != "" {
				t.Errorf("rollout phase (-want +got):\n%s", diff)
			}
			if out.Status.LastSuccessfulRender != tc.wantLast {
				t.Errorf("lastSuccessful %q, want %q", out.Status.LastSuccessfulRender, tc.wantLast)
			}
			if out.Result.Reason != tc.wantReason {
				t.Errorf("reason %s, want %s", out.Result.Reason, tc.wantReason)
			}
		})
	}
}

// Decision 0070: a rollout started at the first wave requeues at its deadline while
// the next wave waits, so the deadline is judged without any other event.
func TestRolloutStartedAtTheFirstWaveRequeuesAtItsDeadline(t *testing.T) {
	in := input(automatic(), lastSuccessful(refOld), failurePolicy(5*time.Second))
	_, out := reconcile(in, heldAtWave())
	if out.Requeue.After != 5*time.Second {
		t.Errorf("requeue after %s, want 5s (the rollout's deadline)", out.Requeue.After)
	}
}

// Decision 0071: the force is used up by one reconcile (lastHandledForceSyncAt, seed
// SP-21/SP-22), but its effects carry through the waits of its apply: after a
// RolledBack rollout, a forced sync of a render in two waves applies wave 0, starts
// the new rollout there, and the next reconciles apply the later wave of that render
// without the rollback hold and without a dry run.
func TestForceCarriesThroughSyncWaves(t *testing.T) {
	rolledBack := Rollout{Phase: v1.RolloutRolledBack, RenderRef: refNew, PreviousRenderRef: refOld}
	in := input(automatic(), lastSuccessful(refOld), failurePolicy(time.Minute), rollout(rolledBack), forcedSyncRequest(t1), handledForceAt(t0))

	plan, out := reconcile(in, heldAtWave())
	if diff := cmp.Diff(&Apply{RenderRef: refNew, RunHooks: true, RerunHooks: true, Forced: true, StartRollout: true}, plan.Apply); diff != "" {
		t.Fatalf("forced reconcile: Apply (-want +got):\n%s", diff)
	}
	if out.Status.LastHandledForceSyncAt == nil || !out.Status.LastHandledForceSyncAt.Equal(*at(t1)) {
		t.Errorf("forced reconcile that waits: lastHandledForceSyncAt %v, want %s", out.Status.LastHandledForceSyncAt, t1)
	}
	want := &RolloutStart{RenderRef: refNew, PreviousRenderRef: refOld, StartedAt: now, Deadline: now.Add(time.Minute)}
	if diff := cmp.Diff(want, out.Status.Rollout); diff != "" {
		t.Fatalf("forced reconcile held at wave 1: new rollout (-want +got):\n%s", diff)
	}

	in = next(in, out)
	waveHold(refNew)(&in)
	healthOf(refNew, v1.HealthHealthy)(&in)
	plan, out = reconcile(in, Succeeded())
	if diff := cmp.Diff(&Apply{RenderRef: refNew, RunHooks: true}, plan.Apply); diff != "" {
		t.Fatalf("the reconcile after the wave: Apply (-want +got):\n%s", diff)
	}
	if out.Result.Reason != v1.ReasonApplied || out.Status.LastSuccessfulRender != refNew {
		t.Errorf("the reconcile after the wave: %s, lastSuccessful %q; want Applied, %s", out.Result.Reason, out.Status.LastSuccessfulRender, refNew)
	}
	if out.Status.RolloutPhase != nil || out.Status.Rollout != nil {
		t.Errorf("the last wave's reconcile changed the rollout: %+v %+v", out.Status.Rollout, out.Status.RolloutPhase)
	}
	if out.Status.LastHandledForceSyncAt != nil {
		t.Errorf("a reconcile without a pending force wrote lastHandledForceSyncAt %v", out.Status.LastHandledForceSyncAt)
	}

	in = next(in, out)
	in.WaveHold = ""
	_, out = reconcile(in, Succeeded())
	if p := out.Status.RolloutPhase; p == nil || p.Phase != v1.RolloutSucceeded {
		t.Errorf("all waves applied and Healthy: rollout phase %+v, want Succeeded", p)
	}
}

// Decision 0093: a forced sync of a RolledBack render whose PreApply hook batch
// waits goes on at the next reconciles as forced: no rollback hold, no dry run, and the
// apply after the batches starts the new rollout.
func TestForceCarriesThroughHookBatches(t *testing.T) {
	rolledBack := Rollout{Phase: v1.RolloutRolledBack, RenderRef: refNew, PreviousRenderRef: refOld}
	base := input(automatic(), lastSuccessful(refOld), failurePolicy(time.Minute), rollout(rolledBack), forcedSyncRequest(t1), handledForceAt(t1))
	cases := map[string]struct {
		in        Input
		wantApply *Apply
	}{
		"the forced sync's hook batch runs: the render goes on, forced": {
			in:        with(base, hooksRunning(refNew)),
			wantApply: &Apply{RenderRef: refNew, RunHooks: true, Forced: true, StartRollout: true},
		},
		"no hook batch runs: the RolledBack hold": {
			in:        base,
			wantApply: &Apply{RenderRef: refOld, DryRun: true, Report: &Result{Reason: v1.ReasonRolledBack, Message: msgRolledBack}},
		},
		"a hook batch of the previous render: the RolledBack hold": {
			in:        with(base, hooksRunning(refOld)),
			wantApply: &Apply{RenderRef: refOld, DryRun: true, Report: &Result{Reason: v1.ReasonRolledBack, Message: msgRolledBack}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			plan := Decide(tc.in)
			if diff := cmp.Diff(tc.wantApply, plan.Apply); diff != "" {
				t.Errorf("Apply (-want +got):\n%s", diff)
			}
		})
	}

	// The whole sequence: forced reconcile waits at the PreApply batch, the next one
	// applies and starts the rollout, the one after does not hold.
	in := with(base, handledForceAt(t0))
	_, out := reconcile(in, Result{Reason: v1.ReasonWaitingForHooks, Message: "waiting"})
	if out.Status.Rollout != nil || out.Status.LastHandledForceSyncAt == nil {
		t.Fatalf("forced reconcile waiting for hooks: rollout %+v, lastHandledForceSyncAt %v; want none, written", out.Status.Rollout, out.Status.LastHandledForceSyncAt)
	}
	in = with(next(in, out), hooksRunning(refNew))
	_, out = reconcile(in, Succeeded())
	if out.Status.Rollout == nil || out.Status.Rollout.RenderRef != refNew || out.Status.LastSuccessfulRender != refNew {
		t.Fatalf("apply after the forced hook batches: rollout %+v, lastSuccessful %q; want a new rollout of %s", out.Status.Rollout, out.Status.LastSuccessfulRender, refNew)
	}
	in = with(next(in, out), hooksRunning(""))
	plan := Decide(in)
	if plan.Apply == nil || plan.Apply.RenderRef != refNew || plan.Apply.Report != nil {
		t.Errorf("after the forced apply: Apply %+v, want %s without a hold", plan.Apply, refNew)
	}
}

// Decision 0071: a reconcile that carries on an apply held at a sync wave does not
// dry-run: the pre-apply dry run is of the whole render, before anything is applied.
func TestNoDryRunWhenAnApplyHeldAtAWaveGoesOn(t *testing.T) {
	cases := map[string]struct {
		in   Input
		want bool
	}{
		"a new render: dry run":                     {in: input(automatic(), lastSuccessful(refOld)), want: true},
		"the held apply of the render goes on":      {in: input(automatic(), lastSuccessful(refOld), waveHold(refNew)), want: false},
		"another render's apply held: dry run":      {in: input(automatic(), lastSuccessful(refOld), waveHold(refOld)), want: true},
		"manual, /sync, held apply goes on":         {in: input(manual(), lastSuccessful(refOld), syncRequest(t2), waveHold(refNew)), want: false},
		"rollback while the render's apply is held": {in: input(automatic(), lastSuccessful(refOld), failurePolicy(time.Minute), progressing(-time.Second), waveHold(refNew)), want: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			plan := Decide(tc.in)
			if plan.Apply == nil {
				t.Fatalf("no apply: %+v", plan.Stop)
			}
			if plan.Apply.DryRun != tc.want {
				t.Errorf("DryRun %v, want %v", plan.Apply.DryRun, tc.want)
			}
		})
	}
}

func with(in Input, opts ...option) Input {
	for _, o := range opts {
		o(&in)
	}
	return in
}

// Decision 0072: in manual mode, after a rollback, a render whose rollout was rolled
// back reports RolledBack (with what to do), as the rollback did, not WaitingForSync:
// a /sync would keep the previous render applied.
func TestManualModeAfterARollbackReportsRolledBack(t *testing.T) {
	rolledBack := Rollout{Phase: v1.RolloutRolledBack, RenderRef: refNew, PreviousRenderRef: refOld}
	held := &Result{Reason: v1.ReasonRolledBack, Message: msgRolledBack}
	cases := map[string]struct {
		in        Input
		wantStop  *Result
		wantApply *Apply
	}{
		"no /sync: RolledBack, nothing applied": {
			in:       input(manual(), lastSuccessful(refOld), failurePolicy(time.Minute), rollout(rolledBack)),
			wantStop: held,
		},
		"a /sync: the previous render is applied, RolledBack": {
			in:        input(manual(), lastSuccessful(refOld), failurePolicy(time.Minute), rollout(rolledBack), syncRequest(t2), handledSyncAt(t1)),
			wantApply: &Apply{RenderRef: refOld, DryRun: true, Report: held},
		},
		"a forced /sync: the rolled-back render is rolled out again": {
			in:        input(manual(), lastSuccessful(refOld), failurePolicy(time.Minute), rollout(rolledBack), forcedSyncRequest(t2), handledSyncAt(t1), handledForceAt(t1)),
			wantApply: &Apply{RenderRef: refNew, RunHooks: true, RerunHooks: true, Forced: true, StartRollout: true},
		},
		"a new render: WaitingForSync": {
			in: input(manual(), lastSuccessful(refOld), failurePolicy(time.Minute),
				rollout(Rollout{Phase: v1.RolloutRolledBack, RenderRef: refPin, PreviousRenderRef: refOld})),
			wantStop: &Result{Reason: v1.ReasonWaitingForSync, Message: msgManualDiffers},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			plan := Decide(tc.in)
			if diff := cmp.Diff(tc.wantStop, plan.Stop); diff != "" {
				t.Errorf("Stop (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantApply, plan.Apply); diff != "" {
				t.Errorf("Apply (-want +got):\n%s", diff)
			}
		})
	}

	// No flapping: the rollback reconcile and the quiet ones after it report the same
	// Applied condition.
	in := input(manual(), lastSuccessful(refNew), failurePolicy(time.Minute), progressing(-time.Second), healthOf(refNew, v1.HealthProgressing))
	_, out := reconcile(in, Succeeded())
	first := out.Applied
	if first.Reason != v1.ReasonRolledBack {
		t.Fatalf("rollback reconcile: Applied %+v, want RolledBack", first)
	}
	for i := range 2 {
		in = next(in, out)
		_, out = reconcile(in, Succeeded())
		if diff := cmp.Diff(first, out.Applied); diff != "" {
			t.Errorf("quiet reconcile %d after the rollback: Applied (-rollback +now):\n%s", i+1, diff)
		}
	}
}
