package policy

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

func TestAppliedCondition(t *testing.T) {
	cases := map[string]struct {
		in      Input
		attempt Result
		want    Condition
	}{
		"automatic, applied": {
			in: input(automatic()), attempt: Succeeded(),
			want: Condition{Type: v1.ConditionApplied, Status: StatusTrue, Reason: v1.ReasonApplied, Message: msgAutomaticApplied},
		},
		"manual, applied after /sync: the same message as in sync, so the next reconcile writes nothing": {
			in: input(manual(), syncRequest(t1)), attempt: Succeeded(),
			want: Condition{Type: v1.ConditionApplied, Status: StatusTrue, Reason: v1.ReasonApplied, Message: msgManualInSync},
		},
		"apply failed": {
			in: input(automatic()), attempt: Stopped(v1.ReasonDeployFailed, "Deployment podinfo: forbidden."),
			want: Condition{Type: v1.ConditionApplied, Status: StatusFalse, Reason: v1.ReasonDeployFailed, Message: "Deployment podinfo: forbidden."},
		},
		"render failed": {
			in:   input(automatic(), rendered(""), preflight(v1.ReasonSourceNotReady, "Chart podinfo: repository returned 404.")),
			want: Condition{Type: v1.ConditionApplied, Status: StatusFalse, Reason: v1.ReasonSourceNotReady, Message: "Chart podinfo: repository returned 404."},
		},
		"pinned render applied: False/Pinned": {
			in: input(automatic(), pin(refPin)), attempt: Succeeded(),
			want: Condition{Type: v1.ConditionApplied, Status: StatusFalse, Reason: v1.ReasonPinned, Message: pinnedMessage(refPin, refNew)},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, out := reconcile(tc.in, tc.attempt)
			if diff := cmp.Diff(tc.want, out.Applied); diff != "" {
				t.Errorf("Applied (-want +got):\n%s", diff)
			}
		})
	}
}

func TestHealthyCondition(t *testing.T) {
	assessed := func(state v1.HealthStatus, message string) *Health {
		return &Health{RenderRef: refOld, State: state, Message: message}
	}
	cases := map[string]struct {
		health         *Health
		lastSuccessful string
		want           Condition
	}{
		"Healthy": {
			health: assessed(v1.HealthHealthy, ""), lastSuccessful: refOld,
			want: Condition{Type: v1.ConditionHealthy, Status: StatusTrue, Reason: v1.ReasonHealthy,
				Message: "Every object of the last applied render is healthy."},
		},
		"Progressing": {
			health: assessed(v1.HealthProgressing, ""), lastSuccessful: refOld,
			want: Condition{Type: v1.ConditionHealthy, Status: StatusFalse, Reason: v1.ReasonProgressing,
				Message: "Objects of the last applied render are still progressing."},
		},
		"Degraded, with the observer's message": {
			health: assessed(v1.HealthDegraded, "Deployment podinfo/podinfo: progress deadline exceeded."), lastSuccessful: refOld,
			want: Condition{Type: v1.ConditionHealthy, Status: StatusFalse, Reason: v1.ReasonDegraded,
				Message: "Deployment podinfo/podinfo: progress deadline exceeded."},
		},
		"Missing": {
			health: assessed(v1.HealthMissing, ""), lastSuccessful: refOld,
			want: Condition{Type: v1.ConditionHealthy, Status: StatusFalse, Reason: v1.ReasonMissing,
				Message: "An object of the last applied render is missing from the cluster; the next apply recreates it."},
		},
		"Unknown": {
			health: assessed(v1.HealthUnknown, ""), lastSuccessful: refOld,
			want: Condition{Type: v1.ConditionHealthy, Status: StatusUnknown, Reason: v1.ReasonNotAssessed,
				Message: "The observer cannot assess the health of the last applied render."},
		},
		"health of another render: NotAssessed": {
			health: assessed(v1.HealthHealthy, ""), lastSuccessful: refNew,
			want: Condition{Type: v1.ConditionHealthy, Status: StatusUnknown, Reason: v1.ReasonNotAssessed,
				Message: "The observer has not assessed the last applied render yet."},
		},
		"no health data: NotAssessed": {
			lastSuccessful: refOld,
			want: Condition{Type: v1.ConditionHealthy, Status: StatusUnknown, Reason: v1.ReasonNotAssessed,
				Message: "The observer has not assessed the last applied render yet."},
		},
		"nothing applied: NotAssessed": {
			health: assessed(v1.HealthHealthy, ""),
			want: Condition{Type: v1.ConditionHealthy, Status: StatusUnknown, Reason: v1.ReasonNotAssessed,
				Message: "No render has been applied yet."},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, HealthyCondition(tc.health, tc.lastSuccessful)); diff != "" {
				t.Errorf("HealthyCondition (-want +got):\n%s", diff)
			}
		})
	}
}

// Finish assesses Healthy against lastSuccessful as this reconcile leaves it.
func TestHealthyFollowsTheNewLastSuccessful(t *testing.T) {
	in := input(automatic(), lastSuccessful(refOld), health(Health{RenderRef: refOld, State: v1.HealthHealthy}))
	_, out := reconcile(in, Succeeded())
	if out.Healthy.Reason != v1.ReasonNotAssessed {
		t.Errorf("Healthy after applying a new render = %+v, want NotAssessed", out.Healthy)
	}
	_, out = reconcile(in, failure(v1.ReasonDeployFailed))
	if out.Healthy.Reason != v1.ReasonHealthy {
		t.Errorf("Healthy after a failed apply = %+v, want the old render's Healthy", out.Healthy)
	}
}

func TestReadyCondition(t *testing.T) {
	applied := Condition{Type: v1.ConditionApplied, Status: StatusTrue, Reason: v1.ReasonApplied, Message: "applied"}
	waiting := Condition{Type: v1.ConditionApplied, Status: StatusFalse, Reason: v1.ReasonWaitingForSync, Message: "waits"}
	healthy := Condition{Type: v1.ConditionHealthy, Status: StatusTrue, Reason: v1.ReasonHealthy, Message: "healthy"}
	notAssessed := Condition{Type: v1.ConditionHealthy, Status: StatusUnknown, Reason: v1.ReasonNotAssessed, Message: "not yet"}
	degraded := Condition{Type: v1.ConditionHealthy, Status: StatusFalse, Reason: v1.ReasonDegraded, Message: "broken"}
	cases := map[string]struct {
		applied, healthy Condition
		want             Condition
	}{
		"both True": {applied: applied, healthy: healthy,
			want: Condition{Type: v1.ConditionReady, Status: StatusTrue, Reason: ReasonReady, Message: "The render is applied and healthy."}},
		"Applied False first": {applied: waiting, healthy: degraded,
			want: Condition{Type: v1.ConditionReady, Status: StatusFalse, Reason: v1.ReasonWaitingForSync, Message: "waits"}},
		"Healthy False": {applied: applied, healthy: degraded,
			want: Condition{Type: v1.ConditionReady, Status: StatusFalse, Reason: v1.ReasonDegraded, Message: "broken"}},
		"Healthy Unknown: False": {applied: applied, healthy: notAssessed,
			want: Condition{Type: v1.ConditionReady, Status: StatusFalse, Reason: v1.ReasonNotAssessed, Message: "not yet"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, ReadyCondition(tc.applied, tc.healthy)); diff != "" {
				t.Errorf("ReadyCondition (-want +got):\n%s", diff)
			}
		})
	}
}

// Messages say what happened, with no timestamp or changing number: the same Release
// reconciled at another time, after more failures, gets the same conditions, so a
// steady Release is not written.
func TestConditionsDoNotChangeWithTimeOrCount(t *testing.T) {
	cases := map[string]struct {
		opts    []option
		attempt Result
	}{
		"automatic applied":  {opts: []option{automatic()}, attempt: Succeeded()},
		"manual in sync":     {opts: []option{manual(), rendered(refOld), lastSuccessful(refOld), syncAt(t1), handledSyncAt(t1)}},
		"manual waits":       {opts: []option{manual(), lastSuccessful(refOld)}},
		"manual none":        {opts: []option{manual()}},
		"pinned":             {opts: []option{automatic(), pin(refPin)}, attempt: Succeeded()},
		"pin gone":           {opts: []option{automatic(), pinnedRenderGone()}},
		"cluster wave":       {opts: []option{automatic(), blockedByClusterWave("team-b/db")}},
		"rolled back":        {opts: []option{automatic(), failurePolicy(0), rollout(Rollout{Phase: v1.RolloutRolledBack, RenderRef: refNew, PreviousRenderRef: refOld})}, attempt: Succeeded()},
		"transient, backoff": {opts: []option{automatic(), backoff(time.Second)}, attempt: failure(v1.ReasonDeployFailed)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			first := input(tc.opts...)
			later := input(tc.opts...)
			later.Now = now.Add(37*time.Hour + 3*time.Second)
			later.Failures = 7
			_, a := reconcile(first, tc.attempt)
			_, b := reconcile(later, tc.attempt)
			got := []Condition{b.Applied, b.Healthy, b.Ready}
			if diff := cmp.Diff([]Condition{a.Applied, a.Healthy, a.Ready}, got); diff != "" {
				t.Errorf("conditions changed with the time or the count (-first +later):\n%s", diff)
			}
		})
	}
}
