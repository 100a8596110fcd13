package observer

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/policy"
	"kumodo.io/convoy/internal/testenv"
)

// SP-20, the sync policy: "POST releases/<name>/sync?force=true … The next reconcile
// then: … starts a new Progressing rollout, if the Release has a failurePolicy." End
// to end with the controller and the observer on kwok: a forced /sync of a
// render that is Healthy already starts a new rollout, and that rollout ends Succeeded
// at once, not at its deadline. The forced apply changes nothing on the cluster, so the
// observer's health of the render does not change and writes nothing; the controller
// concludes the rollout from the health it has, which assesses the inventory as the
// forced apply left it. Neither mode has a periodic reconcile within the test (an
// interval of an hour), and the healthTimeout is 10 minutes.
func TestSP20_AForcedSyncOfAHealthyRenderSucceedsAtOnce(t *testing.T) {
	for _, automatic := range []bool{true, false} {
		t.Run(fmt.Sprintf("automatic=%v", automatic), func(t *testing.T) {
			const timeout = 10 * time.Minute
			e := newEnv(t)
			e.startController()
			e.startObserver(observerOptions{})
			rel := appRelease(e.ns, "app", valuesAvailable)
			rel.Spec.SyncPolicy.Automatic = ptr.To(automatic)
			rel.Spec.SyncPolicy.Interval = &metav1.Duration{Duration: time.Hour}
			rel.Spec.FailurePolicy = &v1.FailurePolicy{HealthTimeout: &metav1.Duration{Duration: timeout}}
			e.create(rel)
			good := e.waitRender("app", "")
			if !automatic {
				e.sync("app")
			}
			e.waitRollout("app", good, v1.RolloutSucceeded, time.Time{})
			e.waitCondition("app", v1.ConditionReady, metav1.ConditionTrue, policy.ReasonReady)

			forcedAt := e.release("app").Annotations[v1.AnnotationSyncForceRequestedAt]
			e.forceSync("app")
			if got := e.release("app").Annotations[v1.AnnotationSyncForceRequestedAt]; got == forcedAt || got == "" {
				t.Fatalf("sync-force-requested-at %q after the forced /sync, was %q", got, forcedAt)
			} else {
				forcedAt = got
			}
			start := time.Now()
			var ro *v1.RolloutStatus
			testenv.Eventually(t, e.ctx, "the forced rollout Succeeded", time.Minute, func() (bool, string) {
				rel := e.release("app")
				handled := rel.Status.LastHandledForceSyncAt
				ro = rel.Status.Rollout
				if handled == nil || handled.UTC().Format(time.RFC3339) != forcedAt {
					return false, fmt.Sprintf("lastHandledForceSyncAt %v, want %s; rollout %+v", handled, forcedAt, ro)
				}
				return ro != nil && ro.RenderRef == good && ro.Phase == v1.RolloutSucceeded,
					fmt.Sprintf("rollout %+v", ro)
			})
			t.Logf("the forced rollout Succeeded %s after the forced /sync: %s", time.Since(start).Round(time.Millisecond), ro.Message)
			if ro.StartedAt == nil || ro.Deadline == nil || ro.Deadline.Sub(ro.StartedAt.Time) != timeout {
				t.Errorf("rollout %+v: want a new rollout with a deadline healthTimeout (%s) after its start", ro, timeout)
			}
			e.waitCondition("app", v1.ConditionReady, metav1.ConditionTrue, policy.ReasonReady)
			// The forced sync's rollout is a new one: a second start for the render.
			e.eventually("two rollouts of "+good, func() (bool, string) {
				n := e.rolloutStarts("app", good)
				return n == 2, fmt.Sprintf("%d RolloutProgressing events", n)
			})
			e.waitEvent("app", "RolloutSucceeded")
		})
	}
}
