package policy

import (
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// HoldsBeforeRender: the cluster wave stops a reconcile before the render only when an
// apply may follow (decision 0088).
func TestHoldsBeforeRender(t *testing.T) {
	cases := map[string]struct {
		in   Input
		want bool
	}{
		"no lower wave blocks":               {in: input(automatic()), want: false},
		"automatic, blocked":                 {in: input(automatic(), blockedByClusterWave("b/db")), want: true},
		"manual, blocked, nothing pending":   {in: input(manual(), blockedByClusterWave("b/db")), want: false},
		"manual, blocked, a /sync pending":   {in: input(manual(), syncRequest(t1), blockedByClusterWave("b/db")), want: true},
		"manual, blocked, a force pending":   {in: input(manual(), forceAt(t1), blockedByClusterWave("b/db")), want: true},
		"manual, blocked, the /sync handled": {in: input(manual(), syncRequest(t1), handledSyncAt(t1), blockedByClusterWave("b/db")), want: false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := HoldsBeforeRender(tc.in); got != tc.want {
				t.Errorf("HoldsBeforeRender = %t, want %t", got, tc.want)
			}
		})
	}
}

// The steps of the reconcile flow around the sync policy (sync-policy.md steps 2–9):
// what is decided here now, so that the later issues only fill in their step.
func TestDecideSteps(t *testing.T) {
	pinned := &Result{Reason: v1.ReasonPinned, Message: pinnedMessage(refPin, refNew)}
	rolledBack := &Result{Reason: v1.ReasonRolledBack, Message: msgRolledBack}
	cases := map[string]struct {
		in   Input
		want Plan
	}{
		"step 2: a lower cluster wave is not ready": {
			in: input(automatic(), blockedByClusterWave("team-b/db")),
			want: Plan{Stop: &Result{Reason: v1.ReasonWaitingForClusterWave,
				Message: "Waiting for Release team-b/db of a lower cluster wave on the same Cluster to be Applied and Healthy."}},
		},
		"step 2 before step 4": {
			in: input(automatic(), blockedByClusterWave("team-b/db"), rendered(""), preflight(v1.ReasonSourceNotReady, "down")),
			want: Plan{Stop: &Result{Reason: v1.ReasonWaitingForClusterWave,
				Message: "Waiting for Release team-b/db of a lower cluster wave on the same Cluster to be Applied and Healthy."}},
		},
		// SP-04 — seed: "Equal. The Applied condition is True with reason Applied."
		// Decision 0088: the cluster wave gates only an apply.
		"step 2: manual, in sync, no /sync, a lower cluster wave not ready: Applied": {
			in:   input(manual(), lastSuccessful(refNew), blockedByClusterWave("team-b/db")),
			want: Plan{Stop: &Result{Reason: v1.ReasonApplied, Message: msgManualInSync}},
		},
		"step 2: manual, render differs, no /sync, a lower cluster wave not ready: WaitingForSync": {
			in:   input(manual(), lastSuccessful(refOld), blockedByClusterWave("team-b/db")),
			want: Plan{Stop: &Result{Reason: v1.ReasonWaitingForSync, Message: msgManualDiffers}},
		},
		"step 2: manual with a pending /sync, a lower cluster wave not ready: the apply waits": {
			in: input(manual(), lastSuccessful(refNew), syncRequest(t1), blockedByClusterWave("team-b/db")),
			want: Plan{Sync: Request{Pending: true, At: at(t1)}, Stop: &Result{Reason: v1.ReasonWaitingForClusterWave,
				Message: "Waiting for Release team-b/db of a lower cluster wave on the same Cluster to be Applied and Healthy."}},
		},
		"step 2: manual, the rollback of a Failed rollout waits for a lower cluster wave": {
			in: input(manual(), lastSuccessful(refNew), failurePolicy(time.Minute), blockedByClusterWave("team-b/db"),
				rollout(Rollout{Phase: v1.RolloutFailed, RenderRef: refNew, PreviousRenderRef: refOld})),
			want: Plan{Stop: &Result{Reason: v1.ReasonWaitingForClusterWave,
				Message: "Waiting for Release team-b/db of a lower cluster wave on the same Cluster to be Applied and Healthy."}},
		},
		"steps 3–4: the render failed": {
			in:   input(automatic(), rendered(""), preflight(v1.ReasonValuesNotReady, "ConfigMap podinfo-values not found.")),
			want: Plan{Stop: &Result{Reason: v1.ReasonValuesNotReady, Message: "ConfigMap podinfo-values not found."}},
		},
		"steps 3–4: no render and no reason": {
			in:   input(automatic(), rendered("")),
			want: Plan{Stop: &Result{Reason: v1.ReasonUnappliable, Message: "There is no render to apply."}},
		},
		"step 5: a pin applies the pinned render and reports Pinned": {
			in:   input(automatic(), lastSuccessful(refOld), pin(refPin)),
			want: Plan{Apply: &Apply{RenderRef: refPin, DryRun: true, RunHooks: true, Report: pinned}},
		},
		"step 5: the pinned Render is gone: Pinned, nothing applied": {
			in: input(automatic(), pinnedRenderGone()),
			want: Plan{Stop: &Result{Reason: v1.ReasonPinned, Message: "Pinned at render " + refPin +
				", but its Render no longer exists; nothing is applied. Pin an existing render or unpin."}},
		},
		"step 5: a pin equal to the current render changes nothing": {
			in:   input(automatic(), lastSuccessful(refOld), pin(refNew)),
			want: Plan{Apply: &Apply{RenderRef: refNew, DryRun: true, RunHooks: true}},
		},
		"steps 5–6: manual, pinned render applied, no /sync: Pinned": {
			in:   input(manual(), lastSuccessful(refPin), pin(refPin)),
			want: Plan{Stop: pinned},
		},
		"steps 5–6: manual, pinned render not applied, no /sync: WaitingForSync": {
			in:   input(manual(), lastSuccessful(refOld), pin(refPin)),
			want: Plan{Stop: &Result{Reason: v1.ReasonWaitingForSync, Message: msgManualDiffers}},
		},
		"steps 5–6: manual, the /pin write is a /sync": {
			in: input(manual(), lastSuccessful(refOld), pin(refPin), syncRequest(t1)),
			want: Plan{Sync: Request{At: at(t1), Pending: true},
				Apply: &Apply{RenderRef: refPin, DryRun: true, RunHooks: true, Report: pinned}},
		},
		"step 7: RolledBack keeps the previous render applied": {
			in: input(automatic(), lastSuccessful(refOld), failurePolicy(0),
				rollout(Rollout{Phase: v1.RolloutRolledBack, RenderRef: refNew, PreviousRenderRef: refOld})),
			want: Plan{Apply: &Apply{RenderRef: refOld, DryRun: true, Report: rolledBack}},
		},
		"step 7: a new render after a rollback goes on": {
			in: input(automatic(), rendered(refPin), lastSuccessful(refOld), failurePolicy(0),
				rollout(Rollout{Phase: v1.RolloutRolledBack, RenderRef: refNew, PreviousRenderRef: refOld})),
			want: Plan{Apply: &Apply{RenderRef: refPin, DryRun: true, RunHooks: true, StartRollout: true}},
		},
		"step 7: RolledBack without a previous render: nothing applied": {
			in:   input(automatic(), failurePolicy(0), rollout(Rollout{Phase: v1.RolloutRolledBack, RenderRef: refNew})),
			want: Plan{Stop: rolledBack},
		},
		"step 8: hooks for a render other than the last successful one": {
			in:   input(automatic(), lastSuccessful(refOld)),
			want: Plan{Apply: &Apply{RenderRef: refNew, DryRun: true, RunHooks: true}},
		},
		"step 8: no hooks for an unchanged render": {
			in:   input(automatic(), rendered(refOld), lastSuccessful(refOld)),
			want: Plan{Apply: applyOf(refOld)},
		},
		"step 8: a failed hook holds the render until it changes": {
			in:   input(automatic(), lastSuccessful(refOld), failedHook(refNew, "Job podinfo-migrate-0b0b0b0b0b failed: BackoffLimitExceeded.")),
			want: Plan{Stop: &Result{Reason: v1.ReasonHookFailed, Message: "Job podinfo-migrate-0b0b0b0b0b failed: BackoffLimitExceeded."}},
		},
		"step 8: a failed hook of an older render does not hold": {
			in:   input(automatic(), lastSuccessful(refOld), failedHook(refOld, "failed")),
			want: Plan{Apply: &Apply{RenderRef: refNew, DryRun: true, RunHooks: true}},
		},
		"step 8: a forced sync runs the failed hook again": {
			in: input(automatic(), lastSuccessful(refOld), failedHook(refNew, "failed"), forcedSyncRequest(t1)),
			want: Plan{Sync: Request{At: at(t1)}, Force: Request{At: at(t1), Pending: true},
				Apply: &Apply{RenderRef: refNew, RunHooks: true, RerunHooks: true, Forced: true}},
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

// A successful apply of a pinned or rolled-back-to render counts as a successful apply:
// lastSuccessful and lastHandledSyncAt move, and the Release holds.
func TestHoldAfterSuccessfulApply(t *testing.T) {
	cases := map[string]struct {
		in   Input
		want Outcome
	}{
		"pinned": {
			in: input(manual(), interval(time.Minute), lastSuccessful(refOld), pin(refPin), syncRequest(t1)),
			want: Outcome{
				Result: Result{Reason: v1.ReasonPinned, Message: pinnedMessage(refPin, refNew)},
				Kind:   KindHold,
				Status: StatusUpdate{LastSuccessfulRender: refPin, LastHandledSyncAt: at(t1)},
			},
		},
		"rolled back": {
			in: input(automatic(), interval(time.Minute), lastSuccessful(refOld), failurePolicy(0),
				rollout(Rollout{Phase: v1.RolloutRolledBack, RenderRef: refNew, PreviousRenderRef: refOld})),
			want: Outcome{
				Result: Result{Reason: v1.ReasonRolledBack, Message: msgRolledBack},
				Kind:   KindHold,
				Status: StatusUpdate{LastSuccessfulRender: refOld},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, out := reconcile(tc.in, Succeeded())
			tc.want.Applied = AppliedCondition(tc.want.Result)
			tc.want.Healthy = HealthyCondition(nil, tc.want.Status.LastSuccessfulRender)
			tc.want.Ready = ReadyCondition(tc.want.Applied, tc.want.Healthy)
			tc.want.Counter = CounterReset
			tc.want.Requeue = Requeue{After: time.Minute}
			if diff := cmp.Diff(tc.want, out); diff != "" {
				t.Errorf("Finish() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPlanWaves(t *testing.T) {
	ref := func(name string) v1.ObjectReference {
		return v1.ObjectReference{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "ns", Name: name}
	}
	// objects is one Deployment per wave, named after it ("w-1", "w0", ...).
	objects := func(waves ...int32) []WaveObject {
		var out []WaveObject
		for _, w := range waves {
			out = append(out, WaveObject{Ref: ref("w" + itoa(int(w))), Wave: w})
		}
		return out
	}
	// healthy is the observer's data for renderRef: the named objects Healthy, the
	// others listed Progressing. (The observer's per-wave health is not an input:
	// during an upgrade the old objects make every wave look Healthy.)
	healthy := func(renderRef string, names []string, others ...string) *Health {
		h := &Health{RenderRef: renderRef, State: v1.HealthProgressing, Objects: map[v1.ObjectReference]v1.HealthStatus{}}
		for _, n := range names {
			h.Objects[ref(n).Unversioned()] = v1.HealthHealthy
		}
		for _, n := range others {
			h.Objects[ref(n).Unversioned()] = v1.HealthProgressing
		}
		return h
	}
	hold := func(applied, next int) *Result {
		return &Result{Reason: v1.ReasonWaitingForSyncWave, Message: "Sync waves up to " + itoa(applied) +
			" are applied; wave " + itoa(next) + " waits until they are Healthy."}
	}
	cases := map[string]struct {
		in   WaveInput
		want WavePlan
	}{
		"no objects":                 {want: WavePlan{}},
		"no objects, applied":        {in: WaveInput{Applied: true}, want: WavePlan{}},
		"one wave: applied, no hold": {in: WaveInput{Objects: objects(0, 0, 0)}, want: WavePlan{Waves: []int32{0}, Total: 1}},
		"first reconcile: the first wave, then hold": {
			in:   WaveInput{Objects: objects(1, 0, -1, 1)},
			want: WavePlan{Waves: []int32{-1}, Total: 3, Hold: hold(-1, 0)},
		},
		"the first wave applied and healthy: up to the second": {
			in:   WaveInput{Objects: objects(-1, 0, 1), AppliedWaves: 1, Health: healthy(refNew, []string{"w-1"})},
			want: WavePlan{Waves: []int32{-1, 0}, Total: 3, Hold: hold(0, 1)},
		},
		"all but the last applied and healthy: every wave": {
			in:   WaveInput{Objects: objects(-1, 0, 1), AppliedWaves: 2, Health: healthy(refNew, []string{"w-1", "w0"})},
			want: WavePlan{Waves: []int32{-1, 0, 1}, Total: 3},
		},
		"health of another render does not count": {
			in:   WaveInput{Objects: objects(0, 1), AppliedWaves: 1, Health: healthy(refOld, []string{"w0", "w1"})},
			want: WavePlan{Waves: []int32{0}, Total: 2, Hold: hold(0, 1)},
		},
		"a later wave healthy, an earlier not": {
			in:   WaveInput{Objects: objects(0, 1, 2), AppliedWaves: 2, Health: healthy(refNew, []string{"w1"}, "w0")},
			want: WavePlan{Waves: []int32{0}, Total: 3, Hold: hold(0, 1)},
		},
		// Decision 0073: after the upgrade's wave 0, the inventory still holds the
		// old render's objects of waves 1 and 2, Healthy; they do not count until this
		// render applied them.
		"upgrade: healthy waves not yet applied for this render do not count": {
			in:   WaveInput{Objects: objects(0, 1, 2), AppliedWaves: 1, Health: healthy(refNew, []string{"w0", "w1", "w2"})},
			want: WavePlan{Waves: []int32{0, 1}, Total: 3, Hold: hold(1, 2)},
		},
		"upgrade: the wave applied in this reconcile waits for its assessment": {
			in:   WaveInput{Objects: objects(0, 1, 2), Health: healthy(refNew, []string{"w0", "w1", "w2"})},
			want: WavePlan{Waves: []int32{0}, Total: 3, Hold: hold(0, 1)},
		},
		"an object of the render without a health result is not healthy": {
			in: WaveInput{
				Objects:      append(objects(0, 1), WaveObject{Ref: ref("new"), Wave: 0}),
				AppliedWaves: 1, Health: healthy(refNew, []string{"w0", "w1"}),
			},
			want: WavePlan{Waves: []int32{0}, Total: 2, Hold: hold(0, 1)},
		},
		"an object's health counts whatever its version": {
			in: WaveInput{
				Objects:      []WaveObject{{Ref: v1.ObjectReference{Group: "apps", Version: "v1beta2", Kind: "Deployment", Namespace: "ns", Name: "w0"}}, {Ref: ref("w1"), Wave: 1}},
				AppliedWaves: 1, Health: healthy(refNew, []string{"w0"}),
			},
			want: WavePlan{Waves: []int32{0, 1}, Total: 2},
		},
		// Case 2: an object the render dropped stays in the inventory, and in the
		// observer's data, until the prune; it never gates a wave.
		"upgrade: a dropped object that is Missing does not gate": {
			in: WaveInput{Objects: objects(0, 1), AppliedWaves: 1, Health: func() *Health {
				h := healthy(refNew, []string{"w0"})
				h.Objects[ref("dropped").Unversioned()] = v1.HealthMissing
				return h
			}()},
			want: WavePlan{Waves: []int32{0, 1}, Total: 2},
		},
		// Case 7: the render applied in full is applied in full at each reconcile,
		// whatever a lower wave's health.
		"the render applied in full: every wave, a lower one Degraded": {
			in: WaveInput{Objects: objects(0, 1, 2), AppliedWaves: 3, Applied: true, Health: func() *Health {
				h := healthy(refNew, []string{"w1", "w2"})
				h.Objects[ref("w0").Unversioned()] = v1.HealthDegraded
				return h
			}()},
			want: WavePlan{Waves: []int32{0, 1, 2}, Total: 3},
		},
		"the render applied in full, no health yet: every wave": {
			in:   WaveInput{Objects: objects(0, 1, 2), Applied: true},
			want: WavePlan{Waves: []int32{0, 1, 2}, Total: 3},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tc.in.RenderRef = refNew
			if diff := cmp.Diff(tc.want, PlanWaves(tc.in)); diff != "" {
				t.Errorf("PlanWaves() (-want +got):\n%s", diff)
			}
		})
	}
}

func itoa(i int) string { return strconv.Itoa(i) }
