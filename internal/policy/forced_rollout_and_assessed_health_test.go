package policy

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// world is what the controller's status and the ReleaseInventory hold between two
// reconciles of a simulated Release, beyond what next carries: the hook record, the
// wave hold and the rollouts started.
type world struct {
	in       Input
	rollouts int
	phases   []v1.RolloutPhase
}

// step runs one reconcile at t whose apply ends with attempt (when the plan applies)
// and carries its outcome into the next Input as the controller's status write and
// the apply's inventory write would.
func (w *world) step(t time.Time, attempt func(Plan) Result) (Plan, Outcome) {
	w.in.Now = t
	plan := Decide(w.in)
	res := Result{}
	if plan.Apply != nil {
		res = attempt(plan)
	}
	out := Finish(w.in, plan, res)
	if out.Status.Rollout != nil {
		w.rollouts++
	}
	if p := out.Status.RolloutPhase; p != nil {
		w.phases = append(w.phases, p.Phase)
	}
	in := next(w.in, out)
	if plan.Apply != nil {
		switch {
		case res.Reason == v1.ReasonWaitingForHooks:
			// status.hooks records the running PreApply batch, as a forced sync's
			// when the apply is.
			in.HooksRunning, in.HooksRunningPhase, in.HooksForced = plan.Apply.RenderRef, v1.HookPreApply, plan.Apply.Forced
		case res.WavesApplied:
			// The PreApply phase completed: status.hooks keeps its last batch, all
			// Succeeded, with the mark unless the outcome clears it.
			in.WaveHold, in.WaveHoldApplied = plan.Apply.RenderRef, 1
			if out.Status.HooksForcedDone {
				in.HooksForced = false
			}
		case res.Reason == v1.ReasonApplied:
			in.WaveHold, in.WaveHoldApplied = "", 0
			in.HooksRunning, in.HooksRunningPhase, in.HooksForced = "", "", false
		}
	}
	w.in = in
	return plan, out
}

// Decision 0159: a forced sync of a new render with PreApply hooks and two sync
// waves starts its rollout once, at its first wave's apply. The finished PreApply
// batch that status.hooks keeps, marked as the forced sync's, must not start another
// at each later reconcile while wave 1 waits: the deadline would move at every resync
// (2 minutes, less than healthTimeout), so a first wave that never becomes Healthy
// would never fail. It fails at healthTimeout and is rolled back or halted, as its
// failurePolicy says.
func TestSP20_SP21_AForcedRenderWithPreApplyHooksStartsOneRollout(t *testing.T) {
	seed := "starts a new Progressing rollout, if the Release has a failurePolicy. … A force request has effect for one reconcile only."
	const timeout = 5 * time.Minute
	cases := map[string]struct {
		mode      option
		action    v1.FailureAction
		wantPhase v1.RolloutPhase
	}{
		"manual, Rollback: rolled back at healthTimeout":    {mode: manual(), action: v1.FailureActionRollback, wantPhase: v1.RolloutRolledBack},
		"automatic, Rollback: rolled back at healthTimeout": {mode: automatic(), action: v1.FailureActionRollback, wantPhase: v1.RolloutRolledBack},
		"manual, Halt: Failed at healthTimeout":             {mode: manual(), action: v1.FailureActionHalt, wantPhase: v1.RolloutFailed},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := &world{in: input(tc.mode, rendered(refNew), lastSuccessful(refOld), failurePolicy(timeout), withAction(tc.action),
				rollout(Rollout{Phase: v1.RolloutSucceeded, RenderRef: refOld}), forcedSyncRequest(t1), handledForceAt(t0))}
			// The forced reconcile waits at the PreApply batch.
			w.step(now, func(Plan) Result { return Result{Reason: v1.ReasonWaitingForHooks, Message: "waiting"} })
			// The batch completed: the next reconcile applies wave 0; wave 1 waits.
			started := now.Add(10 * time.Second)
			held := func(p Plan) Result {
				if p.Apply.RenderRef != refNew {
					return Succeeded() // the rollback's apply
				}
				return Result{Reason: v1.ReasonWaitingForSyncWave, Message: "wave 1 waits", WavesApplied: true}
			}
			w.step(started, held)
			if w.rollouts != 1 {
				t.Fatalf("seed: %q\nrollouts after the first wave = %d, want 1", seed, w.rollouts)
			}
			deadline := w.in.Rollout.Deadline
			// The resyncs while wave 0 never becomes Healthy, up past the deadline.
			for at := started.Add(2 * time.Minute); !at.After(started.Add(timeout + 4*time.Minute)); at = at.Add(2 * time.Minute) {
				w.step(at, held)
			}
			if w.rollouts != 1 {
				t.Errorf("seed: %q\nrollouts started = %d, want exactly 1", seed, w.rollouts)
			}
			if !deadline.Equal(started.Add(timeout)) {
				t.Errorf("deadline = %v, want the first wave's apply + healthTimeout, %v", deadline, started.Add(timeout))
			}
			if w.in.Rollout == nil || w.in.Rollout.Phase != tc.wantPhase || w.in.Rollout.RenderRef != refNew {
				t.Errorf("rollout at the end = %+v, want %s of %s", w.in.Rollout, tc.wantPhase, refNew)
			}
			if len(w.phases) == 0 || w.phases[0] != tc.wantPhase {
				t.Errorf("phases written = %v, want %s first", w.phases, tc.wantPhase)
			}
		})
	}
}

// The outcome that clears the forced mark: the reconcile that applies the forced
// sync's first waves (or all of them), not one that still waits at its hooks or fails.
func TestHooksForcedDone(t *testing.T) {
	forced := func(in *Input) { in.HooksRunning, in.HooksRunningPhase, in.HooksForced = refNew, v1.HookPreApply, true }
	base := input(automatic(), lastSuccessful(refOld), failurePolicy(time.Minute), forcedSyncRequest(t1), handledForceAt(t1), forced)
	cases := map[string]struct {
		attempt Result
		want    bool
	}{
		"first waves applied":       {attempt: Result{Reason: v1.ReasonWaitingForSyncWave, WavesApplied: true}, want: true},
		"applied in full":           {attempt: Succeeded(), want: true},
		"PostApply batch waits":     {attempt: Result{Reason: v1.ReasonWaitingForHooks, AfterApply: true}, want: true},
		"PreApply batch still runs": {attempt: Result{Reason: v1.ReasonWaitingForHooks}},
		"the apply failed":          {attempt: Stopped(v1.ReasonDeployFailed, "refused")},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, out := reconcile(base, tc.attempt)
			if out.Status.HooksForcedDone != tc.want {
				t.Errorf("HooksForcedDone = %v, want %v", out.Status.HooksForcedDone, tc.want)
			}
		})
	}
	_, out := reconcile(input(automatic(), lastSuccessful(refOld)), Result{Reason: v1.ReasonWaitingForSyncWave, WavesApplied: true})
	if out.Status.HooksForcedDone {
		t.Errorf("no forced batch recorded: HooksForcedDone set")
	}
}

// Decision 0160: health counts only when the observer assessed the inventory as
// it is — every object of the render that is applied. The reconcile that applies a
// render's last wave (its inventory write raises the generation) does not report the
// render Healthy from the assessment of its first waves, and the reconciles before
// the next assessment neither judge its rollout Succeeded nor report it Healthy.
func TestHealthCountsOnlyForTheAssessedInventoryGeneration(t *testing.T) {
	assessed := func(gen int64, state v1.HealthStatus) option {
		return health(Health{RenderRef: refNew, Generation: gen, State: state})
	}
	inventoryGen := func(gen int64) option { return func(in *Input) { in.InventoryGeneration = gen } }
	cases := map[string]struct {
		in          Input
		attempt     Result
		wantHealthy string
		wantPhase   *RolloutChange
	}{
		"the last wave's apply raised the generation: not Healthy yet": {
			in:          input(automatic(), lastSuccessful(refOld), failurePolicy(time.Hour), progressing(time.Hour), waveHold(refNew), assessed(3, v1.HealthHealthy), inventoryGen(3)),
			attempt:     Result{Reason: v1.ReasonApplied, InventoryGeneration: 4},
			wantHealthy: StatusUnknown,
		},
		"the last wave's apply changed nothing: Healthy": {
			in:          input(automatic(), lastSuccessful(refOld), failurePolicy(time.Hour), progressing(time.Hour), waveHold(refNew), assessed(3, v1.HealthHealthy), inventoryGen(3)),
			attempt:     Result{Reason: v1.ReasonApplied, InventoryGeneration: 3},
			wantHealthy: StatusTrue,
		},
		"before the next assessment: no Succeeded, not Healthy": {
			in:          input(automatic(), lastSuccessful(refNew), failurePolicy(time.Hour), progressing(time.Hour), assessed(3, v1.HealthHealthy), inventoryGen(4)),
			attempt:     Succeeded(),
			wantHealthy: StatusUnknown,
		},
		"the assessment of the inventory as it is: Succeeded, Healthy": {
			in:          input(automatic(), lastSuccessful(refNew), failurePolicy(time.Hour), progressing(time.Hour), assessed(4, v1.HealthHealthy), inventoryGen(4)),
			attempt:     Succeeded(),
			wantHealthy: StatusTrue,
			wantPhase:   &RolloutChange{Phase: v1.RolloutSucceeded, Message: "The render became Healthy before its deadline."},
		},
		"an old Degraded does not fail the rollout of what was applied since": {
			in:          input(automatic(), lastSuccessful(refNew), failurePolicy(time.Hour), withAction(v1.FailureActionHalt), progressing(time.Hour), assessed(3, v1.HealthDegraded), inventoryGen(4)),
			attempt:     Succeeded(),
			wantHealthy: StatusUnknown,
		},
		"an observer that records no generation counts as current": {
			in:          input(automatic(), lastSuccessful(refNew), failurePolicy(time.Hour), progressing(time.Hour), assessed(0, v1.HealthHealthy), inventoryGen(4)),
			attempt:     Succeeded(),
			wantHealthy: StatusTrue,
			wantPhase:   &RolloutChange{Phase: v1.RolloutSucceeded, Message: "The render became Healthy before its deadline."},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			plan, out := reconcile(tc.in, tc.attempt)
			if out.Healthy.Status != tc.wantHealthy {
				t.Errorf("Healthy = %+v, want %s", out.Healthy, tc.wantHealthy)
			}
			if tc.wantHealthy != StatusTrue && out.Ready.Status == StatusTrue {
				t.Errorf("Ready = %+v, want not True", out.Ready)
			}
			if diff := cmp.Diff(tc.wantPhase, plan.Rollout); diff != "" {
				t.Errorf("rollout judged (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAssessedHealth(t *testing.T) {
	h := &Health{RenderRef: refNew, Generation: 3, State: v1.HealthHealthy}
	cases := map[string]struct {
		h    *Health
		gen  int64
		want *Health
	}{
		"none":                    {h: nil, gen: 3},
		"of the generation":       {h: h, gen: 3, want: h},
		"of a later generation":   {h: h, gen: 2, want: h},
		"of an older generation":  {h: h, gen: 4},
		"no inventory generation": {h: h, gen: 0, want: h},
		"no recorded generation":  {h: &Health{RenderRef: refNew}, gen: 9, want: &Health{RenderRef: refNew}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, AssessedHealth(tc.h, tc.gen)); diff != "" {
				t.Errorf("AssessedHealth (-want +got):\n%s", diff)
			}
		})
	}
}
