package policy

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

func TestSP19_ForceSkipsPreApplyDryRun(t *testing.T) {
	seed := "The next reconcile then: skips the pre-apply dry run."
	cases := map[string]struct {
		in   Input
		want *Apply
	}{
		"manual, forced /sync": {
			in:   input(manual(), lastSuccessful(refOld), forcedSyncRequest(t2), handledSyncAt(t1), handledForceAt(t1)),
			want: &Apply{RenderRef: refNew, DryRun: false, RunHooks: true, RerunHooks: true, Forced: true},
		},
		"automatic, forced /sync": {
			in:   input(automatic(), rendered(refOld), lastSuccessful(refOld), forcedSyncRequest(t2)),
			want: &Apply{RenderRef: refOld, DryRun: false, RunHooks: true, RerunHooks: true, Forced: true},
		},
		"force already handled: dry run again": {
			in:   input(automatic(), rendered(refOld), lastSuccessful(refOld), forcedSyncRequest(t1), handledForceAt(t1)),
			want: applyOf(refOld),
		},
		"force handled in the same second: dry run again": {
			in:   input(automatic(), rendered(refOld), lastSuccessful(refOld), forceAt("2026-12-02T10:01:00.5Z"), handledForceAt(t1)),
			want: applyOf(refOld),
		},
		"plain /sync: dry run": {
			in:   input(manual(), rendered(refOld), lastSuccessful(refOld), syncRequest(t2), handledSyncAt(t1)),
			want: applyOf(refOld),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Decide(tc.in).Apply); diff != "" {
				t.Errorf("seed: %q\nApply (-want +got):\n%s", seed, diff)
			}
		})
	}
}

func TestSP20_ForceStartsNewProgressingRollout(t *testing.T) {
	seed := "starts a new Progressing rollout, if the Release has a failurePolicy. This clears a Failed or RolledBack rollout."
	rolledBack := Rollout{Phase: v1.RolloutRolledBack, RenderRef: refNew, PreviousRenderRef: refOld}
	cases := map[string]struct {
		in          Input
		wantApply   *Apply
		wantRollout *RolloutStart
	}{
		"force clears a RolledBack rollout": {
			in:          input(automatic(), lastSuccessful(refOld), failurePolicy(10*time.Minute), rollout(rolledBack), forcedSyncRequest(t1)),
			wantApply:   &Apply{RenderRef: refNew, RunHooks: true, RerunHooks: true, Forced: true, StartRollout: true},
			wantRollout: &RolloutStart{RenderRef: refNew, PreviousRenderRef: refOld, StartedAt: now, Deadline: now.Add(10 * time.Minute)},
		},
		"force clears a Failed rollout (Halt)": {
			in: input(manual(), rendered(refNew), lastSuccessful(refNew), failurePolicy(0),
				rollout(Rollout{Phase: v1.RolloutFailed, RenderRef: refNew, PreviousRenderRef: refOld}), forcedSyncRequest(t1)),
			wantApply:   &Apply{RenderRef: refNew, RunHooks: true, RerunHooks: true, Forced: true, StartRollout: true},
			wantRollout: &RolloutStart{RenderRef: refNew, PreviousRenderRef: refOld, StartedAt: now, Deadline: now.Add(DefaultHealthTimeout)},
		},
		"force of an unchanged render after a Succeeded rollout": {
			in: input(automatic(), rendered(refNew), lastSuccessful(refNew), failurePolicy(time.Minute),
				rollout(Rollout{Phase: v1.RolloutSucceeded, RenderRef: refNew, PreviousRenderRef: refOld}), forcedSyncRequest(t1)),
			wantApply:   &Apply{RenderRef: refNew, RunHooks: true, RerunHooks: true, Forced: true, StartRollout: true},
			wantRollout: &RolloutStart{RenderRef: refNew, PreviousRenderRef: refOld, StartedAt: now, Deadline: now.Add(time.Minute)},
		},
		"no failurePolicy: no rollout": {
			in:        input(automatic(), lastSuccessful(refOld), forcedSyncRequest(t1)),
			wantApply: &Apply{RenderRef: refNew, RunHooks: true, RerunHooks: true, Forced: true},
		},
		"without force, a RolledBack render stays rolled back": {
			in:        input(automatic(), lastSuccessful(refOld), failurePolicy(0), rollout(rolledBack), syncRequest(t1)),
			wantApply: &Apply{RenderRef: refOld, DryRun: true, Report: &Result{Reason: v1.ReasonRolledBack, Message: msgRolledBack}},
		},
		"without force, an unchanged render after a Succeeded rollout starts none": {
			in: input(automatic(), rendered(refNew), lastSuccessful(refNew), failurePolicy(0),
				rollout(Rollout{Phase: v1.RolloutSucceeded, RenderRef: refNew, PreviousRenderRef: refOld})),
			wantApply: applyOf(refNew),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			plan, out := reconcile(tc.in, Succeeded())
			if diff := cmp.Diff(tc.wantApply, plan.Apply); diff != "" {
				t.Errorf("seed: %q\nApply (-want +got):\n%s", seed, diff)
			}
			if diff := cmp.Diff(tc.wantRollout, out.Status.Rollout); diff != "" {
				t.Errorf("seed: %q\nrollout (-want +got):\n%s", seed, diff)
			}
		})
	}
}

// A force whose apply fails starts no rollout: the rollout starts with a successful
// apply (sync-policy.md step 12), and the force is spent.
func TestSP20_FailedForcedApplyStartsNoRollout(t *testing.T) {
	in := input(automatic(), lastSuccessful(refOld), failurePolicy(0), forcedSyncRequest(t1))
	_, out := reconcile(in, Stopped(v1.ReasonDeployFailed, "the apply failed"))
	if out.Status.Rollout != nil {
		t.Errorf("rollout = %+v, want none after a failed apply", out.Status.Rollout)
	}
}

func TestSP21_ForceHasEffectForOneReconcileOnly(t *testing.T) {
	seed := "A force request has effect for one reconcile only."
	cases := map[string]struct {
		first Result // how the forced reconcile ended
	}{
		"the forced reconcile succeeded": {first: Succeeded()},
		"the forced reconcile failed":    {first: Stopped(v1.ReasonDeployFailed, "the apply failed")},
		"the forced reconcile waited":    {first: Stopped(v1.ReasonWaitingForSyncWave, "wave 1 waits")},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := input(automatic(), lastSuccessful(refOld), failurePolicy(0), forcedSyncRequest(t1))
			plan, out := reconcile(in, tc.first)
			if !plan.Force.Pending || plan.Apply.DryRun || !plan.Apply.StartRollout {
				t.Fatalf("seed: %q\nthe forced reconcile: %+v, want the force in effect", seed, plan.Apply)
			}
			in = next(in, out)
			in.Now = now.Add(time.Minute)
			plan = Decide(in)
			if plan.Force.Pending {
				t.Errorf("seed: %q\nthe force is still pending at the next reconcile", seed)
			}
			if plan.Apply == nil || !plan.Apply.DryRun {
				t.Errorf("seed: %q\nthe next reconcile skips the dry run: %+v", seed, plan.Apply)
			}
		})
	}
}

func TestSP22_LastHandledForceSyncAtWrittenAlsoOnFailureOrWait(t *testing.T) {
	seed := "convoy writes status.lastHandledForceSyncAt after that reconcile, also when the reconcile fails or waits."
	cases := map[string]struct {
		in      Input
		attempt Result
		want    *time.Time
	}{
		"succeeded": {
			in:      input(automatic(), forcedSyncRequest(t1)),
			attempt: Succeeded(),
			want:    at(t1),
		},
		"the apply failed": {
			in:      input(automatic(), forcedSyncRequest(t1)),
			attempt: Stopped(v1.ReasonDeployFailed, "the apply failed"),
			want:    at(t1),
		},
		"the apply waits for a sync wave": {
			in:      input(manual(), forcedSyncRequest(t1)),
			attempt: Stopped(v1.ReasonWaitingForSyncWave, "wave 1 waits"),
			want:    at(t1),
		},
		"the render failed": {
			in:   input(automatic(), forcedSyncRequest(t1), rendered(""), preflight(v1.ReasonSourceNotReady, "repository down")),
			want: at(t1),
		},
		"waiting for a cluster wave": {
			in:   input(automatic(), forcedSyncRequest(t1), blockedByClusterWave("team-b/db")),
			want: at(t1),
		},
		"manual, only the force annotation written by hand: WaitingForSync": {
			in:   input(manual(), lastSuccessful(refOld), forceAt(t2), syncAt(t1), handledSyncAt(t1)),
			want: at(t2),
		},
		"the value read at the start, to the second, in UTC": {
			in:      input(automatic(), forceAt("2026-12-02T11:01:00.25+01:00")),
			attempt: Succeeded(),
			want:    at(t1),
		},
		"no force pending: not written": {
			in:      input(automatic(), forcedSyncRequest(t1), handledForceAt(t1)),
			attempt: Stopped(v1.ReasonDeployFailed, "the apply failed"),
		},
		"an older force: not written": {
			in:      input(automatic(), forcedSyncRequest(t1), handledForceAt(t2)),
			attempt: Stopped(v1.ReasonDeployFailed, "the apply failed"),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, out := reconcile(tc.in, tc.attempt)
			if diff := cmp.Diff(tc.want, out.Status.LastHandledForceSyncAt); diff != "" {
				t.Errorf("seed: %q\nlastHandledForceSyncAt (-want +got):\n%s", seed, diff)
			}
		})
	}
}
