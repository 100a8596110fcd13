package policy

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// Decision 0151: a Release that waits on the observer's assessment says so when the
// assessment is overdue: which wait, since when, what to do; and comes back at the
// bound to say it.
func TestCheckAssessment(t *testing.T) {
	const bound = 2 * time.Minute
	msgWave := heldAtWave().Message
	msgNotAssessed := "The observer has not assessed the last applied render yet."
	since := now.Add(-3 * time.Minute)
	note := "; the observer has not assessed the ReleaseInventory since 2026-12-02T10:01:05Z: " +
		"check that convoy observer runs and can reach the Cluster."
	due := func(ago time.Duration) Assessment { return Assessment{DueSince: now.Add(-ago), OverdueAfter: bound} }

	// The reconciles whose outcomes CheckAssessment looks at.
	type reconciled struct {
		in      Input
		attempt Result
	}
	waveHeld := reconciled{input(syncRequest(t1)), heldAtWave()}
	newRender := reconciled{input(automatic(), interval(5*time.Minute)), Succeeded()}
	inSync := reconciled{input(automatic(), lastSuccessful(refNew), health(Health{RenderRef: refNew, State: v1.HealthHealthy})), Succeeded()}
	waitingForSync := reconciled{input(), Result{}}
	transient := reconciled{input(syncRequest(t1)), Stopped(v1.ReasonDeployFailed, "The apply failed.")}
	backedOff := reconciled{input(automatic(), lastSuccessful(refOld), backoff(10*time.Minute)), Stopped(v1.ReasonDeployFailed, "The apply failed.")}

	cases := map[string]struct {
		of          reconciled // the reconcile whose outcome is checked
		a           Assessment
		wantApplied string
		wantHealthy string
		wantReady   string
		wantRequeue Requeue
		wantOverdue *Overdue
	}{
		"a sync wave waits, the assessment overdue: the Applied message says since when": {
			of: waveHeld, a: due(3 * time.Minute),
			wantApplied: "Sync waves up to 0 are applied; wave 1 waits until they are Healthy" + note,
			wantHealthy: "No render has been applied yet.",
			wantReady:   "Sync waves up to 0 are applied; wave 1 waits until they are Healthy" + note,
			wantOverdue: &Overdue{Since: since, Message: "Sync waves up to 0 are applied; wave 1 waits until they are Healthy" + note},
		},
		"a sync wave waits, the assessment due for less than the bound: back at the bound": {
			of: waveHeld, a: due(30 * time.Second),
			wantApplied: msgWave, wantHealthy: "No render has been applied yet.", wantReady: msgWave,
			wantRequeue: Requeue{After: 90 * time.Second},
		},
		"a sync wave waits, the assessment due exactly the bound: overdue": {
			of: waveHeld, a: due(bound),
			wantApplied: msgWave[:len(msgWave)-1] + "; the observer has not assessed the ReleaseInventory since 2026-12-02T10:02:05Z: check that convoy observer runs and can reach the Cluster.",
			wantHealthy: "No render has been applied yet.",
			wantReady:   msgWave[:len(msgWave)-1] + "; the observer has not assessed the ReleaseInventory since 2026-12-02T10:02:05Z: check that convoy observer runs and can reach the Cluster.",
			wantOverdue: &Overdue{Since: now.Add(-bound), Message: msgWave[:len(msgWave)-1] + "; the observer has not assessed the ReleaseInventory since 2026-12-02T10:02:05Z: check that convoy observer runs and can reach the Cluster."},
		},
		"a sync wave waits, the assessment current: nothing to say": {
			of: waveHeld, a: Assessment{OverdueAfter: bound},
			wantApplied: msgWave, wantHealthy: "No render has been applied yet.", wantReady: msgWave,
		},
		"the check is off": {
			of: waveHeld, a: Assessment{DueSince: since},
			wantApplied: msgWave, wantHealthy: "No render has been applied yet.", wantReady: msgWave,
		},
		"a new render applied, its health overdue: the Healthy message says since when": {
			of: newRender, a: due(3 * time.Minute),
			wantApplied: msgAutomaticApplied,
			wantHealthy: "The observer has not assessed the last applied render yet" + note,
			wantReady:   "The observer has not assessed the last applied render yet" + note,
			wantRequeue: Requeue{After: 5 * time.Minute},
			wantOverdue: &Overdue{Since: since, Message: "The observer has not assessed the last applied render yet" + note},
		},
		"a new render applied, its health due: back at the bound, before the interval": {
			of: newRender, a: due(time.Minute),
			wantApplied: msgAutomaticApplied, wantHealthy: msgNotAssessed, wantReady: msgNotAssessed,
			wantRequeue: Requeue{After: time.Minute},
		},
		"Healthy from the last assessment: nothing waits": {
			of: inSync, a: due(3 * time.Minute),
			wantApplied: msgAutomaticApplied, wantHealthy: "Every object of the last applied render is healthy.",
			wantReady: "The render is applied and healthy.",
		},
		"manual mode waiting for /sync, nothing applied: nothing waits on the observer": {
			of: waitingForSync, a: due(3 * time.Minute),
			wantApplied: msgManualNoneApplied, wantHealthy: "No render has been applied yet.", wantReady: msgManualNoneApplied,
		},
		"a transient failure while a render's health is due: the retryBackoff schedule stays": {
			of: backedOff, a: due(30 * time.Second),
			wantApplied: "The apply failed.", wantHealthy: msgNotAssessed, wantReady: "The apply failed.",
			wantRequeue: Requeue{After: 10 * time.Minute},
		},
		"a transient failure: not a wait, the retry keeps its error": {
			of: transient, a: due(30 * time.Second),
			wantApplied: "The apply failed.", wantHealthy: "No render has been applied yet.", wantReady: "The apply failed.",
			wantRequeue: Requeue{ReturnError: true},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, out := reconcile(tc.of.in, tc.of.attempt)
			got := CheckAssessment(tc.of.in, tc.a, out)
			if diff := cmp.Diff(tc.wantApplied, got.Applied.Message); diff != "" {
				t.Errorf("Applied message (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantHealthy, got.Healthy.Message); diff != "" {
				t.Errorf("Healthy message (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantReady, got.Ready.Message); diff != "" {
				t.Errorf("Ready message (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantRequeue, got.Requeue); diff != "" {
				t.Errorf("Requeue (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantOverdue, got.Overdue); diff != "" {
				t.Errorf("Overdue (-want +got):\n%s", diff)
			}
			if got.Applied.Reason != out.Applied.Reason || got.Applied.Status != out.Applied.Status ||
				got.Healthy.Reason != out.Healthy.Reason || got.Healthy.Status != out.Healthy.Status {
				t.Errorf("conditions %+v %+v, want the reasons and statuses of %+v %+v kept", got.Applied, got.Healthy, out.Applied, out.Healthy)
			}
		})
	}
}

// The message of an overdue wait is the same at every reconcile while the wait lasts
// (no "3m ago"): a steady Release is not written.
func TestCheckAssessmentMessageIsSteady(t *testing.T) {
	_, held := reconcile(input(syncRequest(t1)), heldAtWave())
	a := Assessment{DueSince: now.Add(-5 * time.Minute), OverdueAfter: time.Minute}
	first := CheckAssessment(input(syncRequest(t1)), a, held)
	later := input(syncRequest(t1))
	later.Now = now.Add(time.Hour)
	second := CheckAssessment(later, a, held)
	if first.Applied.Message != second.Applied.Message || first.Overdue == nil {
		t.Errorf("messages %q and %q an hour apart, want one overdue message", first.Applied.Message, second.Applied.Message)
	}
}

func TestOverdueSince(t *testing.T) {
	_, held := reconcile(input(syncRequest(t1)), heldAtWave())
	written := CheckAssessment(input(syncRequest(t1)), Assessment{DueSince: now.Add(-time.Hour), OverdueAfter: time.Minute}, held)
	cases := map[string]struct {
		message string
		want    time.Time
		wantOK  bool
	}{
		"the message CheckAssessment writes": {message: written.Applied.Message, want: now.Add(-time.Hour), wantOK: true},
		"a message without the note":         {message: heldAtWave().Message},
		"a note with a broken time":          {message: "Waiting; " + overdueNote + "yesterday: check."},
		"empty":                              {},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, ok := OverdueSince(tc.message)
			if ok != tc.wantOK || !got.Equal(tc.want) {
				t.Errorf("OverdueSince(%q) = %v, %v; want %v, %v", tc.message, got, ok, tc.want, tc.wantOK)
			}
		})
	}
}
