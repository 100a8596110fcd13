package policy

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

func TestSP01_AutomaticAppliesManualAppliesOnlyAfterSync(t *testing.T) {
	cases := map[string]struct {
		seed string
		in   Input
		want *Apply // nil: nothing applied
	}{
		"automatic applies the render": {
			seed: "In automatic mode, convoy applies the render at each reconcile.",
			in:   input(automatic(), lastSuccessful(refOld)),
			want: &Apply{RenderRef: refNew, DryRun: true, RunHooks: true},
		},
		"manual renders and reports, applies nothing without /sync": {
			seed: "In manual mode, convoy renders and reports, but it applies only after a /sync request.",
			in:   input(manual(), lastSuccessful(refOld)),
			want: nil,
		},
		"manual applies after a /sync": {
			seed: "In manual mode, convoy renders and reports, but it applies only after a /sync request.",
			in:   input(manual(), lastSuccessful(refOld), syncRequest(t1)),
			want: &Apply{RenderRef: refNew, DryRun: true, RunHooks: true},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Decide(tc.in).Apply); diff != "" {
				t.Errorf("seed: %q\nDecide().Apply (-want +got):\n%s", tc.seed, diff)
			}
		})
	}
}

func TestSP02_AutomaticUnsetMeansManual(t *testing.T) {
	cases := map[string]struct {
		seed string
		in   Input
		want Plan
	}{
		"no syncPolicy at all": {
			seed: "The field has no default value. If you do not set it, the value is false, and the Release uses manual mode.",
			in:   Input{Now: now, CurrentRender: refNew},
			want: Plan{Stop: &Result{Reason: v1.ReasonWaitingForSync, Message: msgManualNoneApplied}},
		},
		"syncPolicy with only an interval": {
			seed: "If you do not set it, the value is false, and the Release uses manual mode.",
			in:   Input{Now: now, CurrentRender: refNew, Policy: SyncPolicy{Interval: 5 * time.Minute}},
			want: Plan{Stop: &Result{Reason: v1.ReasonWaitingForSync, Message: msgManualNoneApplied}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Decide(tc.in)); diff != "" {
				t.Errorf("seed: %q\nDecide() (-want +got):\n%s", tc.seed, diff)
			}
		})
	}
}

func TestSP03_AutomaticAppliesFullRenderEveryReconcile(t *testing.T) {
	cases := map[string]struct {
		seed string
		in   Input
		want *Apply
	}{
		"nothing changed: the render is the last successful one": {
			seed: "In automatic mode, convoy applies the full render at each reconcile, also when nothing changed.",
			in:   input(automatic(), rendered(refOld), lastSuccessful(refOld)),
			want: applyOf(refOld),
		},
		"periodic reconcile after the /sync was handled corrects drift": {
			seed: "This also corrects drift at each periodic reconcile.",
			in: input(automatic(), interval(5*time.Minute), rendered(refOld), lastSuccessful(refOld),
				syncAt(t0), handledSyncAt(t1)),
			want: applyOf(refOld),
		},
		"the render changed": {
			seed: "In automatic mode, convoy applies the full render at each reconcile.",
			in:   input(automatic(), lastSuccessful(refOld)),
			want: &Apply{RenderRef: refNew, DryRun: true, RunHooks: true},
		},
		"first render": {
			seed: "In automatic mode, convoy applies the full render at each reconcile.",
			in:   input(automatic()),
			want: &Apply{RenderRef: refNew, DryRun: true, RunHooks: true},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := tc.in
			// Three reconciles in a row, each with the status the one before wrote:
			// every one applies the full render.
			for i := range 3 {
				plan, out := reconcile(in, Succeeded())
				if diff := cmp.Diff(tc.want, plan.Apply); diff != "" {
					t.Fatalf("seed: %q\nreconcile %d: Decide().Apply (-want +got):\n%s", tc.seed, i, diff)
				}
				in = next(in, out)
				tc.want = applyOf(in.CurrentRender) // from then on nothing changed
			}
		})
	}
}

func TestSP04_ManualInSyncReportsApplied(t *testing.T) {
	seed := "Equal. The Applied condition is True with reason Applied. The message says that the " +
		"Release is in sync and that the apply waits for /sync."
	cases := map[string]struct {
		in Input
	}{
		"no /sync ever":               {in: input(manual(), rendered(refOld), lastSuccessful(refOld))},
		"the last /sync was handled":  {in: input(manual(), rendered(refOld), lastSuccessful(refOld), syncAt(t1), handledSyncAt(t1))},
		"an older /sync":              {in: input(manual(), rendered(refOld), lastSuccessful(refOld), syncAt(t0), handledSyncAt(t1))},
		"with an interval":            {in: input(manual(), interval(time.Minute), rendered(refOld), lastSuccessful(refOld))},
		"pin equal to current render": {in: input(manual(), rendered(refOld), lastSuccessful(refOld), pin(refOld))},
	}
	want := Condition{
		Type:    v1.ConditionApplied,
		Status:  StatusTrue,
		Reason:  v1.ReasonApplied,
		Message: "The Release is in sync with its render; in manual mode the apply waits for /sync.",
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, out := reconcile(tc.in, Result{})
			if diff := cmp.Diff(want, out.Applied); diff != "" {
				t.Errorf("seed: %q\nApplied (-want +got):\n%s", seed, diff)
			}
		})
	}
}

func TestSP05_ManualWaitsForSyncWhenRenderDiffers(t *testing.T) {
	cases := map[string]struct {
		seed string
		in   Input
		want Condition
	}{
		"different render": {
			seed: "Different, or no render applied yet. The Applied condition is False with reason WaitingForSync.",
			in:   input(manual(), lastSuccessful(refOld)),
			want: Condition{Type: v1.ConditionApplied, Status: StatusFalse, Reason: v1.ReasonWaitingForSync, Message: msgManualDiffers},
		},
		"different render, the last /sync was handled": {
			seed: "Different, or no render applied yet. The Applied condition is False with reason WaitingForSync.",
			in:   input(manual(), lastSuccessful(refOld), syncAt(t1), handledSyncAt(t1)),
			want: Condition{Type: v1.ConditionApplied, Status: StatusFalse, Reason: v1.ReasonWaitingForSync, Message: msgManualDiffers},
		},
		"no render applied yet": {
			seed: "Different, or no render applied yet. The Applied condition is False with reason WaitingForSync.",
			in:   input(manual()),
			want: Condition{Type: v1.ConditionApplied, Status: StatusFalse, Reason: v1.ReasonWaitingForSync, Message: msgManualNoneApplied},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, out := reconcile(tc.in, Result{})
			if diff := cmp.Diff(tc.want, out.Applied); diff != "" {
				t.Errorf("seed: %q\nApplied (-want +got):\n%s", tc.seed, diff)
			}
		})
	}
}

func TestSP06_ManualWithoutSyncAppliesNothingAndRunsNoDryRun(t *testing.T) {
	seed := "In both cases convoy applies nothing and does not run the pre-apply dry run."
	cases := map[string]struct {
		in Input
	}{
		"equal":              {in: input(manual(), rendered(refOld), lastSuccessful(refOld))},
		"different":          {in: input(manual(), lastSuccessful(refOld))},
		"none applied yet":   {in: input(manual())},
		"handled /sync":      {in: input(manual(), lastSuccessful(refOld), syncAt(t1), handledSyncAt(t1))},
		"with failurePolicy": {in: input(manual(), lastSuccessful(refOld), failurePolicy(0))},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			plan, out := reconcile(tc.in, Succeeded())
			// Apply == nil is the whole instruction: no hooks, no dry run, no apply, no prune.
			if plan.Apply != nil || plan.Stop == nil {
				t.Errorf("seed: %q\nDecide() = %+v, want a Stop and no Apply", seed, plan)
			}
			want := StatusUpdate{} // nothing applied: no lastSuccessful, no lastHandledSyncAt, no rollout
			if diff := cmp.Diff(want, out.Status); diff != "" {
				t.Errorf("seed: %q\nStatus (-want +got):\n%s", seed, diff)
			}
		})
	}
}

func TestSP12_AutomaticDoesNotUseLastHandledSyncAt(t *testing.T) {
	cases := map[string]struct {
		seed string
		in   Input
	}{
		"a /sync later than lastHandledSyncAt": {
			seed: "In automatic mode, convoy does not use status.lastHandledSyncAt.",
			in:   input(automatic(), syncRequest(t2), handledSyncAt(t1)),
		},
		"a /sync and no lastHandledSyncAt": {
			seed: "In automatic mode, convoy does not use status.lastHandledSyncAt.",
			in:   input(automatic(), syncRequest(t2)),
		},
		"a /sync older than lastHandledSyncAt": {
			seed: "A /sync request only starts a reconcile.",
			in:   input(automatic(), syncRequest(t0), handledSyncAt(t1)),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			plan, out := reconcile(tc.in, Succeeded())
			if plan.Sync.Pending {
				t.Errorf("seed: %q\nautomatic mode: the /sync is pending", tc.seed)
			}
			if diff := cmp.Diff(&Apply{RenderRef: refNew, DryRun: true, RunHooks: true}, plan.Apply); diff != "" {
				t.Errorf("seed: %q\nApply (-want +got):\n%s", tc.seed, diff)
			}
			if out.Status.LastHandledSyncAt != nil {
				t.Errorf("seed: %q\nautomatic mode writes lastHandledSyncAt = %v", tc.seed, out.Status.LastHandledSyncAt)
			}
		})
	}
}
