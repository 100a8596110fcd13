package policy

import (
	"strings"
	"testing"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// Decision 0165: a forced /sync is used up by the one reconcile that handles it,
// also when that reconcile fails or waits (SP-21, SP-22), and a reconcile that could
// not act on it says so: SpentForce names why, Finish puts it in the Applied message,
// and the controller writes it as a Warning event (ForceSpent).
func TestForceSpentWithoutEffect(t *testing.T) {
	rolledBack := rollout(Rollout{Phase: v1.RolloutRolledBack, RenderRef: refNew, PreviousRenderRef: refOld})
	cases := map[string]struct {
		in      Input
		attempt Result
		// want lists what the message must say; nil: the force acted, or none was pending.
		want []string
	}{
		"waiting for a cluster wave": {
			in:   input(automatic(), lastSuccessful(refOld), failurePolicy(0), rolledBack, forcedSyncRequest(t1), blockedByClusterWave("team-b/db")),
			want: []string{"lower cluster wave", "nothing was applied", "dry run", "rolled back", "sync --force again"},
		},
		"the Cluster is not ready": {
			in:   input(automatic(), forcedSyncRequest(t1), rendered(""), preflight(v1.ReasonClusterNotReady, "unreachable")),
			want: []string{"stopped before the apply (ClusterNotReady)", "nothing was applied", "sync --force again"},
		},
		"the render failed": {
			in:   input(automatic(), forcedSyncRequest(t1), rendered(""), preflight(v1.ReasonUnappliable, "template error")),
			want: []string{"stopped before the apply (Unappliable)"},
		},
		"the pinned render is gone": {
			in:   input(automatic(), forcedSyncRequest(t1), pin(refPin), pinnedRenderGone()),
			want: []string{"stopped before the apply (Pinned)"},
		},
		"manual mode, a force written by hand without a /sync": {
			in:   input(manual(), lastSuccessful(refOld), forceAt(t2), syncAt(t1), handledSyncAt(t1)),
			want: []string{"stopped before the apply (WaitingForSync)"},
		},
		"the forced apply failed": {
			in:      input(automatic(), lastSuccessful(refOld), failurePolicy(0), forcedSyncRequest(t1)),
			attempt: Stopped(v1.ReasonDeployFailed, "the apply failed"),
			want:    []string{"its apply failed (DeployFailed)", "no rollout started", "sync --force again"},
		},
		"the forced apply was refused": {
			in:      input(automatic(), forcedSyncRequest(t1)),
			attempt: Stopped(v1.ReasonUnappliable, "refused"),
			want:    []string{"its apply failed (Unappliable)"},
		},
		"a re-run PreApply hook failed": {
			in:      input(automatic(), lastSuccessful(refNew), forcedSyncRequest(t1)),
			attempt: Stopped(v1.ReasonHookFailed, "Job failed"),
			want:    []string{"its apply failed (HookFailed)"},
		},
		"the forced apply succeeded": {
			in:      input(automatic(), lastSuccessful(refOld), failurePolicy(0), forcedSyncRequest(t1)),
			attempt: Succeeded(),
		},
		"the forced apply applied its first sync wave": {
			in:      input(automatic(), lastSuccessful(refOld), failurePolicy(0), forcedSyncRequest(t1)),
			attempt: Result{Reason: v1.ReasonWaitingForSyncWave, Message: "wave 1 waits", WavesApplied: true},
		},
		"the forced PreApply hooks run, recorded as forced": {
			in:      input(automatic(), lastSuccessful(refNew), forcedSyncRequest(t1)),
			attempt: Stopped(v1.ReasonWaitingForHooks, "batch 0 runs"),
		},
		"the apply done, a PostApply hook failed": {
			in:      input(automatic(), lastSuccessful(refOld), forcedSyncRequest(t1)),
			attempt: Result{Reason: v1.ReasonHookFailed, Message: "Job failed", AfterApply: true},
		},
		"no force pending": {
			in:      input(automatic(), forcedSyncRequest(t1), handledForceAt(t1), blockedByClusterWave("team-b/db")),
			attempt: Stopped(v1.ReasonDeployFailed, "the apply failed"),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, out := reconcile(tc.in, tc.attempt)
			if out.Status.LastHandledForceSyncAt == nil && len(tc.want) > 0 {
				t.Errorf("lastHandledForceSyncAt not written: the force must be used up (SP-22)")
			}
			if tc.want == nil {
				if out.ForceSpent != nil {
					t.Errorf("ForceSpent = %q, want none: the force acted, or none was pending", out.ForceSpent.Message)
				}
				if strings.Contains(out.Applied.Message, "forced /sync") {
					t.Errorf("Applied message %q speaks of the force", out.Applied.Message)
				}
				return
			}
			if out.ForceSpent == nil {
				t.Fatalf("ForceSpent = nil, want the force reported as used up without effect (Applied: %q)", out.Applied.Message)
			}
			for _, w := range tc.want {
				if !strings.Contains(out.ForceSpent.Message, w) {
					t.Errorf("ForceSpent message %q does not say %q", out.ForceSpent.Message, w)
				}
			}
			if !strings.Contains(out.Applied.Message, out.ForceSpent.Message) {
				t.Errorf("Applied message %q does not carry %q", out.Applied.Message, out.ForceSpent.Message)
			}
			if strings.Contains(out.ForceSpent.Message, "2026") {
				t.Errorf("ForceSpent message %q holds a time: condition messages must not flap", out.ForceSpent.Message)
			}
		})
	}
}

// The note lasts for the reconcile that used the force up: the next one, with no
// force pending, reports its own result alone.
func TestForceSpentNoteLastsOneReconcile(t *testing.T) {
	in := input(automatic(), forcedSyncRequest(t1), blockedByClusterWave("team-b/db"))
	_, out := reconcile(in, Result{})
	if out.ForceSpent == nil {
		t.Fatal("the forced reconcile that waited for a cluster wave reported no spent force")
	}
	_, out = reconcile(next(in, out), Result{})
	if out.ForceSpent != nil || out.Result.Reason != v1.ReasonWaitingForClusterWave || strings.Contains(out.Applied.Message, "forced") {
		t.Errorf("the next reconcile: ForceSpent %+v, Applied %s %q; want WaitingForClusterWave without the note",
			out.ForceSpent, out.Result.Reason, out.Applied.Message)
	}
}
