package observer

import (
	"strings"
	"testing"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/policy"
)

// SP-20, SP-21 — seed: "starts a new Progressing rollout, if the Release has a
// failurePolicy." and "A force request has effect for one reconcile only." Decision
// 0159, end to end with the controller and the observer on kwok: a forced sync of a
// new render with a PreApply hook and two sync waves whose wave 0 never becomes
// Healthy starts its rollout once, at wave 0's apply. The periodic reconciles (every
// second) while wave 1 waits keep that rollout (the finished PreApply batch, recorded
// as the forced sync's, no longer restarts it), so it fails at its healthTimeout and
// is rolled back; one RolloutProgressing event for the render.
func TestSP20_SP21_AForcedRenderWithPreApplyHooksStartsOneRollout(t *testing.T) {
	const timeout = 6 * time.Second
	e := newEnv(t)
	tl := e.watchTimeline("app")
	e.startController()
	e.startObserver(observerOptions{})
	rel := &v1.Release{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "app"},
		Spec: v1.ReleaseSpec{
			Chart:  v1.ChartSource{Repository: chartsURL, Name: "twowaves"},
			Values: &runtime.RawExtension{Raw: []byte(twoWavesAvailable)},
			SyncPolicy: v1.SyncPolicy{Automatic: ptr.To(false),
				Interval: &metav1.Duration{Duration: time.Second}},
			FailurePolicy: &v1.FailurePolicy{HealthTimeout: &metav1.Duration{Duration: timeout}},
		},
		Lifecycle: &v1.Lifecycle{Hooks: []v1.Hook{hookOf("migrate", v1.HookPreApply, 0)}},
	}
	e.create(rel)
	good := e.waitRender("app", "")
	e.sync("app")
	e.waitRollout("app", good, v1.RolloutSucceeded, time.Time{})
	e.waitCondition("app", v1.ConditionReady, metav1.ConditionTrue, policy.ReasonReady)

	e.setValues("app", twoWavesFirstNeverAvailable)
	bad := e.waitRender("app", good)
	e.forceSync("app")
	started := e.waitRollout("app", bad, v1.RolloutProgressing, time.Time{}).Status.Rollout
	if job := e.hookJob("app", "migrate", bad); job == nil || job.Status.CompletionTime == nil {
		t.Errorf("the PreApply hook's Job of %s: %+v, want one that completed before the apply", bad, job)
	}

	failed := e.waitRollout("app", bad, v1.RolloutRolledBack, time.Time{}).Status.Rollout
	if !failed.StartedAt.Equal(started.StartedAt) || !failed.Deadline.Equal(started.Deadline) {
		t.Errorf("the rollout rolled back started at %s with deadline %s; the first one at %s with %s: a rollout started again",
			failed.StartedAt.UTC(), failed.Deadline.UTC(), started.StartedAt.UTC(), started.Deadline.UTC())
	}
	if got := failed.Deadline.Sub(failed.StartedAt.Time); got != timeout {
		t.Errorf("deadline %s after the start, want the healthTimeout %s", got, timeout)
	}
	if !strings.Contains(failed.Message, "deadline") {
		t.Errorf("rollout message %q does not say that the deadline passed", failed.Message)
	}
	e.waitEvent("app", "RolloutRolledBack")
	if n := e.rolloutStarts("app", bad); n != 1 {
		t.Errorf("%d RolloutProgressing events for render %s, want exactly 1", n, bad)
	}
	tl.neverHealthy(t, bad)
}

// rolloutStarts counts the RolloutProgressing events about the Release name that name
// renderRef (each event's series counts as that many).
func (e *env) rolloutStarts(name, renderRef string) int {
	e.t.Helper()
	var list eventsv1.EventList
	if err := e.client.List(e.ctx, &list, client.InNamespace(e.ns)); err != nil {
		e.t.Fatal(err)
	}
	n := 0
	for _, ev := range list.Items {
		if ev.Regarding.Kind != "Release" || ev.Regarding.Name != name || ev.Reason != "RolloutProgressing" ||
			!strings.Contains(ev.Note, renderRef) {
			continue
		}
		n++
		if ev.Series != nil {
			n += int(ev.Series.Count) - 1
		}
	}
	e.t.Logf("%d RolloutProgressing events for %s", n, renderRef)
	return n
}
