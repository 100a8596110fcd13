package policy

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

func TestSP09_PendingSyncComparedToTheSecond(t *testing.T) {
	seed := "In manual mode, a request is pending when the annotation time is later than " +
		"status.lastHandledSyncAt. convoy compares the times to the second."
	cases := map[string]struct {
		annotation  string
		lastHandled *time.Time
		want        Request
		wantErr     bool
	}{
		"a second later": {
			annotation: "2026-12-02T10:04:06Z", lastHandled: at("2026-12-02T10:04:05Z"),
			want: Request{At: at("2026-12-02T10:04:06Z"), Pending: true},
		},
		"the same second": {
			annotation: "2026-12-02T10:04:05Z", lastHandled: at("2026-12-02T10:04:05Z"),
			want: Request{At: at("2026-12-02T10:04:05Z")},
		},
		"later within the same second is not later": {
			annotation: "2026-12-02T10:04:05.999Z", lastHandled: at("2026-12-02T10:04:05Z"),
			want: Request{At: at("2026-12-02T10:04:05Z")},
		},
		"lastHandledSyncAt with a fraction, annotation in the next second": {
			annotation: "2026-12-02T10:04:06Z", lastHandled: at("2026-12-02T10:04:05.7Z"),
			want: Request{At: at("2026-12-02T10:04:06Z"), Pending: true},
		},
		"earlier": {
			annotation: "2026-12-02T10:04:04Z", lastHandled: at("2026-12-02T10:04:05Z"),
			want: Request{At: at("2026-12-02T10:04:04Z")},
		},
		"an offset, a second later": {
			annotation: "2026-12-02T11:04:06+01:00", lastHandled: at("2026-12-02T10:04:05Z"),
			want: Request{At: at("2026-12-02T10:04:06Z"), Pending: true},
		},
		"an offset, the same instant": {
			annotation: "2026-12-02T05:34:05-04:30", lastHandled: at("2026-12-02T10:04:05Z"),
			want: Request{At: at("2026-12-02T10:04:05Z")},
		},
		"lower-case t and z": {
			annotation: "2026-12-02t10:04:06.5z", lastHandled: at("2026-12-02T10:04:05Z"),
			want: Request{At: at("2026-12-02T10:04:06Z"), Pending: true},
		},
		"no lastHandledSyncAt yet": {
			annotation: "2026-12-02T10:04:05Z",
			want:       Request{At: at("2026-12-02T10:04:05Z"), Pending: true},
		},
		"no annotation": {
			lastHandled: at("2026-12-02T10:04:05Z"),
			want:        Request{},
		},
		"no annotation, no lastHandledSyncAt": {
			want: Request{},
		},
		"not a time": {
			annotation: "yesterday", lastHandled: at("2026-12-02T10:04:05Z"),
			want: Request{}, wantErr: true,
		},
		"a date without a time": {
			annotation: "2026-12-03",
			want:       Request{}, wantErr: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := EvaluateRequest(tc.annotation, tc.lastHandled)
			if (err != nil) != tc.wantErr {
				t.Errorf("seed: %q\nEvaluateRequest(%q) error = %v, want error %v", seed, tc.annotation, err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("seed: %q\nEvaluateRequest(%q) (-want +got):\n%s", seed, tc.annotation, diff)
			}
		})
	}
}

func TestSP09_PendingSyncAppliesInManualMode(t *testing.T) {
	seed := "In manual mode, a request is pending when the annotation time is later than status.lastHandledSyncAt."
	cases := map[string]struct {
		in   Input
		want *Apply
	}{
		"pending: applies": {
			in:   input(manual(), lastSuccessful(refOld), syncRequest(t2), handledSyncAt(t1)),
			want: &Apply{RenderRef: refNew, DryRun: true, RunHooks: true},
		},
		"pending, render unchanged: applies again": {
			in:   input(manual(), rendered(refOld), lastSuccessful(refOld), syncRequest(t2), handledSyncAt(t1)),
			want: applyOf(refOld),
		},
		"first /sync ever: applies": {
			in:   input(manual(), syncRequest(t1)),
			want: &Apply{RenderRef: refNew, DryRun: true, RunHooks: true},
		},
		"same second as the handled one: not pending": {
			in:   input(manual(), lastSuccessful(refOld), syncRequest("2026-12-02T10:01:00.8Z"), handledSyncAt(t1)),
			want: nil,
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

func TestSP09_InvalidAnnotationIgnoredAndReported(t *testing.T) {
	cases := map[string]struct {
		in   Input
		want Plan
	}{
		"invalid sync-requested-at in manual mode": {
			in: input(manual(), lastSuccessful(refOld), syncAt("soon")),
			want: Plan{
				Warnings: []Warning{{
					Annotation: v1.AnnotationSyncRequestedAt,
					Message: "Annotation convoy.kumodo.io/sync-requested-at is ignored: \"soon\" is not an RFC 3339 time. " +
						"Set it with kubectl convoy release sync, or to a time such as 2026-12-02T10:04:05Z.",
				}},
				Stop: &Result{Reason: v1.ReasonWaitingForSync, Message: msgManualDiffers},
			},
		},
		"invalid sync-force-requested-at, valid /sync": {
			in: input(manual(), lastSuccessful(refOld), syncRequest(t1), forceAt("10:00")),
			want: Plan{
				Sync: Request{At: at(t1), Pending: true},
				Warnings: []Warning{{
					Annotation: v1.AnnotationSyncForceRequestedAt,
					Message: "Annotation convoy.kumodo.io/sync-force-requested-at is ignored: \"10:00\" is not an RFC 3339 time. " +
						"Set it with kubectl convoy release sync, or to a time such as 2026-12-02T10:04:05Z.",
				}},
				Apply: &Apply{RenderRef: refNew, DryRun: true, RunHooks: true},
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

func TestSP10_LastHandledSyncAtSetOnlyAfterSuccessfulApply(t *testing.T) {
	seed := "convoy sets status.lastHandledSyncAt only after a successful apply."
	cases := map[string]struct {
		in      Input
		attempt Result
		want    *time.Time
	}{
		"successful apply: the annotation value read at the start, not now": {
			in:      input(manual(), syncRequest(t1)),
			attempt: Succeeded(),
			want:    at(t1),
		},
		"successful apply: the annotation truncated to the second, in UTC": {
			in:      input(manual(), syncAt("2026-12-02T11:01:00.75+01:00"), handledSyncAt(t0)),
			attempt: Succeeded(),
			want:    at(t1),
		},
		"successful apply of a pinned render (reported Pinned)": {
			in:      input(manual(), pin(refPin), syncRequest(t1)),
			attempt: Succeeded(),
			want:    at(t1),
		},
		"apply failed": {
			in:      input(manual(), syncRequest(t1)),
			attempt: Stopped(v1.ReasonDeployFailed, "the apply failed"),
		},
		"dry run rejected": {
			in:      input(manual(), syncRequest(t1)),
			attempt: Stopped(v1.ReasonUnappliable, "dry run rejected"),
		},
		"apply waits for a sync wave": {
			in:      input(manual(), syncRequest(t1)),
			attempt: Stopped(v1.ReasonWaitingForSyncWave, "wave 1 waits"),
		},
		"stopped before the apply: render failed": {
			in: input(manual(), syncRequest(t1), rendered(""), preflight(v1.ReasonSourceNotReady, "repository down")),
		},
		"stopped before the apply: cluster wave": {
			in: input(manual(), syncRequest(t1), blockedByClusterWave("team-b/db")),
		},
		"stopped before the apply: pinned Render gone": {
			in: input(manual(), syncRequest(t1), pinnedRenderGone()),
		},
		"no pending /sync": {
			in:      input(manual(), rendered(refOld), lastSuccessful(refOld), syncAt(t1), handledSyncAt(t1)),
			attempt: Succeeded(),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, out := reconcile(tc.in, tc.attempt)
			if diff := cmp.Diff(tc.want, out.Status.LastHandledSyncAt); diff != "" {
				t.Errorf("seed: %q\nlastHandledSyncAt (-want +got):\n%s", seed, diff)
			}
		})
	}
}

// A /sync that arrives while an apply runs is later than the value read at the start;
// since lastHandledSyncAt is set to the start's value, it stays pending.
func TestSP10_SyncDuringApplyStaysPending(t *testing.T) {
	in := input(manual(), syncRequest(t1))
	_, out := reconcile(in, Succeeded())
	in = next(in, out)
	in.Requests.SyncRequestedAt = t2 // written while the apply ran
	in.Now = now.Add(time.Minute)
	if plan := Decide(in); !plan.Sync.Pending || plan.Apply == nil {
		t.Errorf("seed: %q\nthe /sync written during the apply is not pending: %+v",
			"convoy sets status.lastHandledSyncAt only after a successful apply.", plan)
	}
}

func TestSP11_FailedOrWaitingApplyLeavesSyncPending(t *testing.T) {
	seed := "If the apply fails or waits, the request stays pending. The next reconcile tries the apply again."
	cases := map[string]struct {
		attempt Result
	}{
		"DeployFailed":       {attempt: Stopped(v1.ReasonDeployFailed, "the apply failed")},
		"PruneFailed":        {attempt: Stopped(v1.ReasonPruneFailed, "the prune failed")},
		"Unappliable":        {attempt: Stopped(v1.ReasonUnappliable, "dry run rejected")},
		"WaitingForSyncWave": {attempt: Stopped(v1.ReasonWaitingForSyncWave, "wave 1 waits")},
		"WaitingForHooks":    {attempt: Stopped(v1.ReasonWaitingForHooks, "hook batch 0 runs")},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := input(manual(), lastSuccessful(refOld), syncRequest(t2), handledSyncAt(t1))
			_, out := reconcile(in, tc.attempt)
			if out.Status.LastHandledSyncAt != nil || out.Status.LastSuccessfulRender != "" {
				t.Fatalf("seed: %q\nstatus after %s = %+v, want nothing handled", seed, name, out.Status)
			}
			// The next reconcile, with the status written, tries the apply again.
			in = next(in, out)
			in.Now = now.Add(time.Minute)
			plan, out := reconcile(in, Succeeded())
			if diff := cmp.Diff(&Apply{RenderRef: refNew, DryRun: true, RunHooks: true}, plan.Apply); diff != "" {
				t.Errorf("seed: %q\nnext reconcile: Apply (-want +got):\n%s", seed, diff)
			}
			if diff := cmp.Diff(at(t2), out.Status.LastHandledSyncAt); diff != "" {
				t.Errorf("seed: %q\nnext reconcile: lastHandledSyncAt (-want +got):\n%s", seed, diff)
			}
		})
	}
}
