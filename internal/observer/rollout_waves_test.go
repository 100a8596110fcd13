package observer

import (
	"fmt"
	"strings"
	"testing"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/policy"
)

// Values of the chart twowaves (Deployments wave-0 and wave-1 in sync waves 0 and 1).
const (
	// twoWavesAvailable: both Deployments become Available on kwok's nodes.
	twoWavesAvailable = `{"image":"registry.example/app:1"}`
	// twoWavesFirstNeverAvailable: a new image for both, and no node matches wave-0's
	// nodeSelector: wave 0 never becomes Healthy, so wave 1 is never applied.
	twoWavesFirstNeverAvailable = `{"image":"registry.example/app:2","firstNodeSelector":{"convoy.kumodo.io/test":"no-such-node"}}`
)

// SP-20 — seed: "The next reconcile then: … starts a new Progressing rollout, if the
// Release has a failurePolicy. This clears a Failed or RolledBack rollout."
// Decisions 0071 and 0070, end to end with the controller and the observer on kwok: the
// rollout of a render applied wave by wave starts when its first wave is applied, so a
// render whose first wave never becomes Healthy fails at its deadline and is rolled
// back (the Release waits for the sync wave meanwhile). A forced /sync after the
// rollback starts a new rollout at the first wave's apply, which the next reconciles
// keep (no rollback hold re-applying the previous render) until it fails at its own
// deadline. Wave 1 of the failed render is never applied.
func TestRolloutOfAFirstWaveThatNeverBecomesHealthyRollsBack(t *testing.T) {
	e := newEnv(t)
	tl := e.watchTimeline("app")
	e.startController()
	e.startObserver(observerOptions{})
	rel := &v1.Release{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "app"},
		Spec: v1.ReleaseSpec{
			Chart:         v1.ChartSource{Repository: chartsURL, Name: "twowaves"},
			Values:        &runtime.RawExtension{Raw: []byte(twoWavesAvailable)},
			SyncPolicy:    v1.SyncPolicy{Automatic: ptr.To(true)},
			FailurePolicy: &v1.FailurePolicy{HealthTimeout: &metav1.Duration{Duration: 5 * time.Second}},
		},
	}
	e.create(rel)
	good := e.waitRender("app", "")
	e.waitRollout("app", good, v1.RolloutSucceeded, time.Time{})
	e.waitCondition("app", v1.ConditionReady, metav1.ConditionTrue, policy.ReasonReady)

	e.setValues("app", twoWavesFirstNeverAvailable)
	bad := e.waitRender("app", good)
	ro := e.waitRollout("app", bad, v1.RolloutProgressing, time.Time{}).Status.Rollout
	if ro.PreviousRenderRef != good {
		t.Errorf("rollout of %s: previousRenderRef %q, want %s", bad, ro.PreviousRenderRef, good)
	}
	if got := ro.Deadline.Sub(ro.StartedAt.Time); got != 5*time.Second {
		t.Errorf("rollout deadline %s after its start, want the healthTimeout 5s", got)
	}

	rolledBack := e.waitRollout("app", bad, v1.RolloutRolledBack, time.Time{})
	seen := time.Now()
	ro = rolledBack.Status.Rollout
	if deadline := ro.Deadline.Time; seen.Sub(deadline) > 5*time.Second {
		t.Errorf("rolled back at %s, want at the deadline %s (and a little)", seen.UTC().Format(time.RFC3339Nano), deadline)
	}
	if !strings.Contains(ro.Message, "deadline") {
		t.Errorf("rollout message %q does not say the deadline passed", ro.Message)
	}
	wantApplied(t, rolledBack, metav1.ConditionFalse, v1.ReasonRolledBack)
	if ls := rolledBack.Status.LastSuccessful; ls == nil || ls.RenderRef != good {
		t.Errorf("lastSuccessful %+v, want the previous render %s", ls, good)
	}
	if sel := e.nodeSelector(e.ns, "wave-0"); len(sel) != 0 {
		t.Errorf("wave-0 keeps the failed render's nodeSelector %v after the rollback", sel)
	}
	e.waitCondition("app", v1.ConditionHealthy, metav1.ConditionTrue, v1.ReasonHealthy)

	// A forced /sync: a new rollout of the failed render starts at its first wave, and
	// holds until its deadline.
	e.forceSync("app")
	forced := e.waitRollout("app", bad, v1.RolloutProgressing, ro.StartedAt.Add(time.Second)).Status.Rollout
	if forced.PreviousRenderRef != good {
		t.Errorf("forced rollout of %s: previousRenderRef %q, want %s", bad, forced.PreviousRenderRef, good)
	}
	again := e.waitRollout("app", bad, v1.RolloutRolledBack, forced.StartedAt.Time)
	if ls := again.Status.LastSuccessful; ls == nil || ls.RenderRef != good {
		t.Errorf("after the forced rollout: lastSuccessful %+v, want %s", ls, good)
	}

	// wave-0 changed four times after its creation: to the failed render, back, to
	// the failed render by the force, back. More means that a reconcile between the
	// forced apply and the deadline re-applied the previous render (the force used up
	// by its first reconcile).
	if gen := e.deployment(e.ns, "wave-0").Generation; gen != 5 {
		t.Errorf("wave-0 generation %d, want 5 (created, failed render, rollback, forced, rollback)", gen)
	}
	// Wave 1 of the failed render was never applied: its Deployment is as created.
	w1 := e.deployment(e.ns, "wave-1")
	if img := w1.Spec.Template.Spec.Containers[0].Image; w1.Generation != 1 || img != "registry.example/app:1" {
		t.Errorf("wave-1 generation %d, image %s: want 1, the good render's image", w1.Generation, img)
	}
	tl.neverHealthy(t, bad)
}

// Decision 0072, end to end: in manual mode a render whose rollout failed at its
// deadline is rolled back (without a /sync: the failurePolicy's standing order), and
// the periodic reconciles after it keep reporting RolledBack with what to do, never
// WaitingForSync ("run sync to apply it"), which a /sync would not do.
func TestManualModeKeepsReportingRolledBack(t *testing.T) {
	e := newEnv(t)
	e.startController()
	e.startObserver(observerOptions{})
	rel := appRelease(e.ns, "app", valuesAvailable)
	rel.Spec.SyncPolicy.Automatic = ptr.To(false)
	rel.Spec.SyncPolicy.Interval = &metav1.Duration{Duration: time.Second}
	rel.Spec.FailurePolicy = &v1.FailurePolicy{HealthTimeout: &metav1.Duration{Duration: 5 * time.Second}}
	e.create(rel)
	good := e.waitRender("app", "")
	e.sync("app")
	e.waitRollout("app", good, v1.RolloutSucceeded, time.Time{})

	e.setValues("app", valuesNeverAvailable)
	bad := e.waitRender("app", good)
	e.sync("app")
	e.waitRollout("app", bad, v1.RolloutRolledBack, time.Time{})
	e.consistently("the periodic reconciles report RolledBack", 4*time.Second, func() (bool, string) {
		rel := e.release("app")
		applied := apimeta.FindStatusCondition(rel.Status.Conditions, v1.ConditionApplied)
		ok := applied != nil && applied.Reason == v1.ReasonRolledBack && strings.Contains(applied.Message, "--force") &&
			rel.Status.LastSuccessful != nil && rel.Status.LastSuccessful.RenderRef == good
		return ok, fmt.Sprintf("Applied %+v, lastSuccessful %+v", applied, rel.Status.LastSuccessful)
	})
	if sel := e.nodeSelector(e.ns, "app"); len(sel) != 0 {
		t.Errorf("the Deployment has the rolled-back render's nodeSelector %v", sel)
	}
}
