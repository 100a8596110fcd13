package policy

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// A rollout that starts in a reconcile whose apply left the render as the observer
// last assessed it Healthy (the inventory's generation did not change) ends Succeeded
// in that reconcile: nothing changes for the observer to write, so no reconcile would
// judge it before its deadline (a forced sync of a Healthy render). Every other start
// stays Progressing until the observer's assessment of what the apply left, with a
// requeue at the deadline.
func TestARolloutOfARenderHealthyAsAppliedSucceedsAtOnce(t *testing.T) {
	const timeout = 10 * time.Minute
	inventoryGen := func(gen int64) option { return func(in *Input) { in.InventoryGeneration = gen } }
	healthAt := func(ref string, gen int64, state v1.HealthStatus) option {
		return health(Health{RenderRef: ref, Generation: gen, State: state})
	}
	succeeded := Rollout{Phase: v1.RolloutSucceeded, RenderRef: refNew, PreviousRenderRef: refOld}
	atOnce := &RolloutChange{Phase: v1.RolloutSucceeded, Message: msgHealthyAtStart}
	started := &RolloutStart{RenderRef: refNew, PreviousRenderRef: refOld, StartedAt: now, Deadline: now.Add(timeout)}
	cases := map[string]struct {
		in          Input
		attempt     Result
		wantRollout *RolloutStart
		wantPhase   *RolloutChange
		wantRequeue time.Duration
		wantHealthy string
	}{
		"a forced sync of a Healthy render that changed nothing: Succeeded at once, no requeue at the deadline": {
			in: input(automatic(), failurePolicy(timeout), lastSuccessful(refNew), rollout(succeeded),
				healthAt(refNew, 3, v1.HealthHealthy), inventoryGen(3), forcedSyncRequest(t1)),
			attempt:     Result{Reason: v1.ReasonApplied, InventoryGeneration: 3},
			wantRollout: started, wantPhase: atOnce, wantHealthy: StatusTrue,
		},
		"the same in manual mode, with an interval: the interval's requeue only": {
			in: input(manual(), interval(time.Hour), failurePolicy(timeout), lastSuccessful(refNew), rollout(succeeded),
				healthAt(refNew, 3, v1.HealthHealthy), inventoryGen(3), forcedSyncRequest(t1)),
			attempt:     Result{Reason: v1.ReasonApplied, InventoryGeneration: 3},
			wantRollout: started, wantPhase: atOnce, wantRequeue: time.Hour, wantHealthy: StatusTrue,
		},
		"an observer that records no generation: its Healthy counts, as for the Healthy condition": {
			in: input(automatic(), failurePolicy(timeout), lastSuccessful(refNew), rollout(succeeded),
				healthOf(refNew, v1.HealthHealthy), inventoryGen(3), forcedSyncRequest(t1)),
			attempt:     Result{Reason: v1.ReasonApplied, InventoryGeneration: 3},
			wantRollout: started, wantPhase: atOnce, wantHealthy: StatusTrue,
		},
		"a failurePolicy added to a Healthy Release: its first rollout Succeeded at once": {
			in: input(automatic(), failurePolicy(timeout), lastSuccessful(refNew),
				healthAt(refNew, 3, v1.HealthHealthy), inventoryGen(3)),
			attempt:     Result{Reason: v1.ReasonApplied, InventoryGeneration: 3},
			wantRollout: &RolloutStart{RenderRef: refNew, StartedAt: now, Deadline: now.Add(timeout)},
			wantPhase:   atOnce, wantHealthy: StatusTrue,
		},
		"the forced apply changed an object (a new inventory generation): Progressing until the observer assesses it": {
			in: input(automatic(), failurePolicy(timeout), lastSuccessful(refNew), rollout(succeeded),
				healthAt(refNew, 3, v1.HealthHealthy), inventoryGen(3), forcedSyncRequest(t1)),
			attempt:     Result{Reason: v1.ReasonApplied, InventoryGeneration: 4},
			wantRollout: started, wantRequeue: timeout, wantHealthy: StatusUnknown,
		},
		"a forced sync of a Progressing render: Progressing": {
			in: input(automatic(), failurePolicy(timeout), lastSuccessful(refNew), rollout(succeeded),
				healthAt(refNew, 3, v1.HealthProgressing), inventoryGen(3), forcedSyncRequest(t1)),
			attempt:     Result{Reason: v1.ReasonApplied, InventoryGeneration: 3},
			wantRollout: started, wantRequeue: timeout, wantHealthy: StatusFalse,
		},
		"a forced sync of a Degraded render: Progressing, not judged Failed as it starts": {
			in: input(automatic(), failurePolicy(timeout), lastSuccessful(refNew), rollout(succeeded),
				healthAt(refNew, 3, v1.HealthDegraded), inventoryGen(3), forcedSyncRequest(t1)),
			attempt:     Result{Reason: v1.ReasonApplied, InventoryGeneration: 3},
			wantRollout: started, wantRequeue: timeout, wantHealthy: StatusFalse,
		},
		"a new render: the Healthy of the render before does not count": {
			in: input(automatic(), failurePolicy(timeout), lastSuccessful(refOld),
				rollout(Rollout{Phase: v1.RolloutSucceeded, RenderRef: refOld}),
				healthAt(refOld, 3, v1.HealthHealthy), inventoryGen(3)),
			attempt:     Result{Reason: v1.ReasonApplied, InventoryGeneration: 4},
			wantRollout: started, wantRequeue: timeout, wantHealthy: StatusUnknown,
		},
		"the first sync waves applied, a later one waits: Progressing": {
			in: input(automatic(), failurePolicy(timeout), lastSuccessful(refNew), rollout(succeeded),
				healthAt(refNew, 3, v1.HealthHealthy), inventoryGen(3), forcedSyncRequest(t1)),
			attempt:     Result{Reason: v1.ReasonWaitingForSyncWave, WavesApplied: true, InventoryGeneration: 3},
			wantRollout: started, wantRequeue: timeout, wantHealthy: StatusTrue,
		},
		"the forced apply waits for its PreApply hooks: no rollout yet": {
			in: input(automatic(), failurePolicy(timeout), lastSuccessful(refNew), rollout(succeeded),
				healthAt(refNew, 3, v1.HealthHealthy), inventoryGen(3), forcedSyncRequest(t1)),
			attempt:     Stopped(v1.ReasonWaitingForHooks, "hooks"),
			wantHealthy: StatusTrue,
		},
		"applied, its PostApply hooks run: Succeeded at once, as the next reconcile would judge it": {
			in: input(automatic(), failurePolicy(timeout), lastSuccessful(refNew), rollout(succeeded),
				healthAt(refNew, 3, v1.HealthHealthy), inventoryGen(3), forcedSyncRequest(t1)),
			attempt:     Result{Reason: v1.ReasonWaitingForHooks, Message: "hooks", AfterApply: true, InventoryGeneration: 3},
			wantRollout: started, wantPhase: atOnce, wantHealthy: StatusTrue,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			plan, out := reconcile(tc.in, tc.attempt)
			if plan.Apply == nil {
				t.Fatalf("no apply: stop %+v", plan.Stop)
			}
			if diff := cmp.Diff(tc.wantRollout, out.Status.Rollout); diff != "" {
				t.Errorf("Rollout (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantPhase, out.Status.RolloutPhase); diff != "" {
				t.Errorf("RolloutPhase (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(Requeue{After: tc.wantRequeue}, out.Requeue); diff != "" {
				t.Errorf("Requeue (-want +got):\n%s", diff)
			}
			if out.Healthy.Status != tc.wantHealthy {
				t.Errorf("Healthy %s (%s: %s), want %s", out.Healthy.Status, out.Healthy.Reason, out.Healthy.Message, tc.wantHealthy)
			}
			if tc.wantPhase == nil || tc.wantRollout == nil {
				return
			}
			// The next reconcile reads the rollout as ended: nothing is left to judge.
			in := next(tc.in, out)
			if in.Rollout == nil || in.Rollout.Phase != v1.RolloutSucceeded {
				t.Errorf("the next reconcile reads rollout %+v, want Succeeded", in.Rollout)
			}
		})
	}
}
