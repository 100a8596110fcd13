package policy

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/hooks"
)

func object(kind, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind(kind)
	u.SetName(name)
	return u
}

// Lifecycle hooks (docs/hooks.md): batches of one
// phase in ascending order, WaitingForHooks while one runs, HookFailed when a Job
// failed or timed out.
func TestPlanHooks(t *testing.T) {
	pre := func(name string, batch int32) hooks.Hook {
		return hooks.Hook{Name: name, Phase: v1.HookPreApply, Batch: batch, Job: "web-" + name + "-0b0b0b0b0b"}
	}
	post := func(name string, batch int32) hooks.Hook {
		h := pre(name, batch)
		h.Phase = v1.HookPostApply
		return h
	}
	migrate, backup, seed, notify := pre("migrate", 0), pre("backup", 0), pre("seed", 1), post("notify", 0)
	seed.Timeout = 2 * time.Minute
	sa := hooks.Hook{Name: "migrate-sa", Phase: v1.HookPreApply, Batch: 0, Object: object("ServiceAccount", "migrate-sa")}
	cfg := hooks.Hook{Name: "seed-config", Phase: v1.HookPreApply, Batch: 1, Object: object("ConfigMap", "seed-config")}
	all := []hooks.Hook{notify, seed, migrate, cfg, backup, sa}
	state := func(phase v1.HookJobPhase, msg string, recheck time.Duration) HookJob {
		return HookJob{Phase: phase, Message: msg, RecheckAfter: recheck}
	}
	ok := state(v1.HookJobSucceeded, "The Job succeeded.", 0)
	running := state(v1.HookJobRunning, "The Job runs.", 3*time.Minute)
	status := func(h hooks.Hook, phase v1.HookJobPhase, msg string) v1.HookStatus {
		return v1.HookStatus{Name: h.Name, Batch: h.Batch, HookPhase: h.Phase, Run: v1.HookRunUpgrade, Phase: phase, Job: h.Job, Message: msg}
	}
	applied := func(h hooks.Hook) v1.HookStatus {
		return status(h, v1.HookJobSucceeded, h.Object.GetKind()+" "+h.Name+" applied.")
	}
	cases := map[string]struct {
		phase  v1.HookPhase
		resume *HookBatch
		jobs   map[string]HookJob
		want   HookStep
	}{
		"no Job yet: batch 0's objects are applied, its Jobs created, the Release waits until the default timeout": {
			phase: v1.HookPreApply,
			want: HookStep{
				Apply:  []hooks.Hook{sa},
				Create: []hooks.Hook{backup, migrate},
				Status: []v1.HookStatus{applied(sa), status(backup, v1.HookJobRunning, "The Job runs."), status(migrate, v1.HookJobRunning, "The Job runs.")},
				Stop: &Result{Reason: v1.ReasonWaitingForHooks, RecheckAfter: v1.DefaultHookTimeout,
					Message: "Waiting for PreApply hook batch 0: Jobs web-backup-0b0b0b0b0b, web-migrate-0b0b0b0b0b."},
			},
		},
		"batch 0 partly done: wait for the rest, at its timeout": {
			phase: v1.HookPreApply,
			jobs:  map[string]HookJob{backup.Job: ok, migrate.Job: running},
			want: HookStep{
				Apply:  []hooks.Hook{sa},
				Status: []v1.HookStatus{applied(sa), status(backup, v1.HookJobSucceeded, "The Job succeeded."), status(migrate, v1.HookJobRunning, "The Job runs.")},
				Stop: &Result{Reason: v1.ReasonWaitingForHooks, RecheckAfter: 3 * time.Minute,
					Message: "Waiting for PreApply hook batch 0: Jobs web-backup-0b0b0b0b0b, web-migrate-0b0b0b0b0b."},
			},
		},
		"batch 0 done: batch 1's object before its Job, with its own timeout": {
			phase: v1.HookPreApply,
			jobs:  map[string]HookJob{backup.Job: ok, migrate.Job: ok},
			want: HookStep{
				Apply:  []hooks.Hook{sa, cfg},
				Create: []hooks.Hook{seed},
				Status: []v1.HookStatus{applied(cfg), status(seed, v1.HookJobRunning, "The Job runs.")},
				Stop: &Result{Reason: v1.ReasonWaitingForHooks, RecheckAfter: 2 * time.Minute,
					Message: "Waiting for PreApply hook batch 1: Jobs web-seed-0b0b0b0b0b."},
			},
		},
		"every batch done: completed now, the last batch recorded": {
			phase: v1.HookPreApply,
			jobs:  map[string]HookJob{backup.Job: ok, migrate.Job: ok, seed.Job: ok},
			want: HookStep{Apply: []hooks.Hook{sa, cfg}, Completed: true,
				Status: []v1.HookStatus{applied(cfg), status(seed, v1.HookJobSucceeded, "The Job succeeded.")}},
		},
		"resumed at batch 1: batch 0's Jobs are gone but done": {
			phase: v1.HookPreApply, resume: &HookBatch{Phase: v1.HookPreApply, Batch: 1},
			jobs: map[string]HookJob{seed.Job: ok},
			want: HookStep{Apply: []hooks.Hook{cfg}, Completed: true,
				Status: []v1.HookStatus{applied(cfg), status(seed, v1.HookJobSucceeded, "The Job succeeded.")}},
		},
		"completed in an earlier reconcile: nothing is applied or created again": {
			phase: v1.HookPreApply, resume: &HookBatch{Phase: v1.HookPreApply, Batch: 1, Done: true},
			want: HookStep{},
		},
		"a failed Job fails the batch and creates nothing": {
			phase: v1.HookPreApply,
			jobs:  map[string]HookJob{migrate.Job: state(v1.HookJobFailed, "The Job timed out after 2s.", 0)},
			want: HookStep{
				Status: []v1.HookStatus{applied(sa), status(backup, v1.HookJobRunning, "The Job runs."), status(migrate, v1.HookJobFailed, "The Job timed out after 2s.")},
				Stop: &Result{Reason: v1.ReasonHookFailed, Message: "Hook batch 0 failed: Job web-migrate-0b0b0b0b0b of hook migrate: " +
					"The Job timed out after 2s. Nothing more runs for this render until the render changes or a forced /sync runs the hooks again."},
			},
		},
		"PreApply after the apply (a PostApply batch runs): done": {
			phase: v1.HookPreApply, resume: &HookBatch{Phase: v1.HookPostApply, Batch: 0},
			want: HookStep{},
		},
		"PostApply: only its own hooks": {
			phase: v1.HookPostApply, resume: &HookBatch{Phase: v1.HookPreApply, Batch: 1},
			want: HookStep{
				Create: []hooks.Hook{notify},
				Status: []v1.HookStatus{status(notify, v1.HookJobRunning, "The Job runs.")},
				Stop: &Result{Reason: v1.ReasonWaitingForHooks, RecheckAfter: v1.DefaultHookTimeout,
					Message: "Waiting for PostApply hook batch 0: Jobs web-notify-0b0b0b0b0b."},
			},
		},
		"the PostApply batch done": {
			phase: v1.HookPostApply, jobs: map[string]HookJob{notify.Job: ok},
			want: HookStep{Completed: true, Status: []v1.HookStatus{status(notify, v1.HookJobSucceeded, "The Job succeeded.")}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, PlanHooks(tc.phase, v1.HookRunUpgrade, all, tc.resume, tc.jobs)); diff != "" {
				t.Errorf("PlanHooks() (-want +got):\n%s", diff)
			}
		})
	}
}

// The HookFailed message stays the same from the reconcile that saw the failure to
// the ones that read it back from status.hooks.
func TestFailedHookOfKeepsTheMessage(t *testing.T) {
	h := hooks.Hook{Name: "migrate", Phase: v1.HookPreApply, Job: "web-migrate-0b0b0b0b0b"}
	step := PlanHooks(v1.HookPreApply, v1.HookRunInstall, []hooks.Hook{h}, nil, map[string]HookJob{h.Job: {Phase: v1.HookJobFailed, Message: "The Job failed: BackoffLimitExceeded: limit"}})
	got := FailedHookOf(refNew, step.Status)
	if diff := cmp.Diff(&FailedHook{RenderRef: refNew, Message: step.Stop.Message}, got); diff != "" {
		t.Errorf("FailedHookOf() (-want +got):\n%s", diff)
	}
	if FailedHookOf(refNew, []v1.HookStatus{{Name: "migrate", Phase: v1.HookJobRunning}}) != nil {
		t.Error("FailedHookOf() of a running batch is not nil")
	}
}

// Step 8 and 12 across reconciles: a running batch goes on for an unchanged render
// (a forced re-run, PostApply batches); a PostApply wait counts the apply but keeps
// the /sync pending; a running batch requeues at its timeout.
func TestHooksAcrossReconciles(t *testing.T) {
	t.Run("a running PostApply batch of the render goes on although it is the last successful one", func(t *testing.T) {
		in := input(manual(), rendered(refOld), lastSuccessful(refOld), syncRequest(t1), failurePolicy(time.Minute),
			rollout(Rollout{Phase: v1.RolloutProgressing, RenderRef: refOld, Deadline: now.Add(time.Minute)}))
		in.HooksRunning, in.HooksRunningPhase = refOld, v1.HookPostApply
		plan := Decide(in)
		if diff := cmp.Diff(&Apply{RenderRef: refOld, DryRun: true, RunHooks: true}, plan.Apply); diff != "" {
			t.Errorf("Apply (-want +got):\n%s", diff)
		}
	})
	// SP-19, SP-20 — seed: the next reconcile after ?force=true "skips the pre-apply dry run"
	// and "starts a new Progressing rollout, if the Release has a failurePolicy. This
	// clears a Failed or RolledBack rollout." Decision 0093: the force's reconcile
	// waits at a PreApply batch of the render applied last (a re-run, which only a
	// force makes); the reconcile that carries the batches on goes on with the force's
	// apply although the force is handled: no dry run, a new rollout (here after a
	// Failed, halted one).
	t.Run("a forced re-run's PreApply batches go on with the force's apply", func(t *testing.T) {
		in := input(automatic(), rendered(refOld), lastSuccessful(refOld), forcedSyncRequest(t1), handledForceAt(t1),
			failurePolicy(time.Minute), withAction(v1.FailureActionHalt),
			rollout(Rollout{Phase: v1.RolloutFailed, RenderRef: refOld, PreviousRenderRef: refPin}))
		in.HooksRunning, in.HooksRunningPhase = refOld, v1.HookPreApply
		plan := Decide(in)
		if diff := cmp.Diff(&Apply{RenderRef: refOld, DryRun: false, RunHooks: true, Forced: true, StartRollout: true}, plan.Apply); diff != "" {
			t.Errorf("Apply (-want +got):\n%s", diff)
		}
	})
	// Decision 0093: the force's reconcile waits at a PreApply batch of a render not
	// applied yet (its dry run is what the user forced past); status.hooks records the
	// batch as forced, so the reconcile that carries it on goes on with the force's
	// apply: no dry run, a new rollout. Without the record it is a first run: dry run.
	t.Run("a forced sync's PreApply batches of a new render go on with the force's apply", func(t *testing.T) {
		in := input(automatic(), rendered(refNew), lastSuccessful(refOld), forcedSyncRequest(t1), handledForceAt(t1),
			failurePolicy(time.Minute), rollout(Rollout{Phase: v1.RolloutSucceeded, RenderRef: refOld}))
		in.HooksRunning, in.HooksRunningPhase, in.HooksForced = refNew, v1.HookPreApply, true
		if diff := cmp.Diff(&Apply{RenderRef: refNew, DryRun: false, RunHooks: true, Forced: true, StartRollout: true}, Decide(in).Apply); diff != "" {
			t.Errorf("Apply (-want +got):\n%s", diff)
		}
		in.HooksForced = false
		if diff := cmp.Diff(&Apply{RenderRef: refNew, DryRun: true, RunHooks: true, StartRollout: true}, Decide(in).Apply); diff != "" {
			t.Errorf("not recorded as forced: Apply (-want +got):\n%s", diff)
		}
	})
	t.Run("a forced sync's PostApply batches do not restart the rollout", func(t *testing.T) {
		in := input(automatic(), rendered(refNew), lastSuccessful(refNew), forcedSyncRequest(t1), handledForceAt(t1),
			failurePolicy(time.Minute), rollout(Rollout{Phase: v1.RolloutProgressing, RenderRef: refNew, Deadline: now.Add(time.Minute)}))
		in.HooksRunning, in.HooksRunningPhase, in.HooksForced = refNew, v1.HookPostApply, true
		if diff := cmp.Diff(&Apply{RenderRef: refNew, DryRun: true, RunHooks: true}, Decide(in).Apply); diff != "" {
			t.Errorf("Apply (-want +got):\n%s", diff)
		}
	})
	t.Run("a running batch of another render does not", func(t *testing.T) {
		in := input(automatic(), rendered(refOld), lastSuccessful(refOld))
		in.HooksRunning = refNew
		if diff := cmp.Diff(applyOf(refOld), Decide(in).Apply); diff != "" {
			t.Errorf("Apply (-want +got):\n%s", diff)
		}
	})
	t.Run("a PostApply wait counts the apply and keeps the /sync pending", func(t *testing.T) {
		in := input(manual(), interval(time.Hour), lastSuccessful(refOld), syncRequest(t1))
		wait := Result{Reason: v1.ReasonWaitingForHooks, Message: "Waiting for PostApply hook batch 0: Jobs x.", AfterApply: true, RecheckAfter: time.Minute}
		_, out := reconcile(in, wait)
		want := StatusUpdate{LastSuccessfulRender: refNew}
		if diff := cmp.Diff(want, out.Status); diff != "" {
			t.Errorf("Status (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(Result{Reason: v1.ReasonWaitingForHooks, Message: wait.Message}, out.Result); diff != "" {
			t.Errorf("Result (-want +got):\n%s", diff)
		}
		if out.Requeue.After != time.Minute {
			t.Errorf("Requeue = %+v, want at the hook's timeout, 1m", out.Requeue)
		}
		// The next reconcile goes on in manual mode: the /sync is still pending.
		in = next(in, out)
		in.HooksRunning = refNew
		if plan := Decide(in); plan.Apply == nil || !plan.Apply.RunHooks || !plan.Sync.Pending {
			t.Errorf("next reconcile: %+v, want the apply with its hooks, the /sync pending", plan)
		}
	})
	t.Run("a PostApply failure counts the apply and holds the render", func(t *testing.T) {
		in := input(automatic(), lastSuccessful(refOld))
		failed := Result{Reason: v1.ReasonHookFailed, Message: "Hook batch 0 failed: x.", AfterApply: true}
		_, out := reconcile(in, failed)
		if out.Status.LastSuccessfulRender != refNew || out.Kind != KindFailure {
			t.Errorf("Outcome = %+v, want lastSuccessful %s and a failure", out, refNew)
		}
		in = next(in, out)
		in.FailedHook = &FailedHook{RenderRef: refNew, Message: failed.Message}
		if plan := Decide(in); plan.Stop == nil || plan.Stop.Reason != v1.ReasonHookFailed {
			t.Errorf("next reconcile: %+v, want HookFailed", plan)
		}
	})
	t.Run("a PreApply wait applies nothing and requeues at the timeout", func(t *testing.T) {
		in := input(automatic(), interval(time.Hour))
		_, out := reconcile(in, Result{Reason: v1.ReasonWaitingForHooks, Message: "m", RecheckAfter: 2 * time.Second})
		if out.Status.LastSuccessfulRender != "" || out.Requeue.After != 2*time.Second || out.Kind != KindHold {
			t.Errorf("Outcome = %+v, want nothing applied, a hold, requeue after 2s", out)
		}
	})
}
