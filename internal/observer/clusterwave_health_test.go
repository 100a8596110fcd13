package observer

import (
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/policy"
)

// SP-30 — seed: the reconcile of a Release starts when "The status of the Applied or
// Healthy condition changes on a Release of a lower cluster wave on the same Cluster."
// Decision 0160, end to end: Healthy is never reported from health data older than
// the objects it judges. A Release of cluster wave 0 upgrades in sync waves 0 and 1,
// wave 1 slow to roll out (minReadySeconds 8); a Release of cluster wave 1 on the same
// Cluster, created with the upgrade, applies only once the lower one's wave 1 rolled
// out the new render, and the lower one's rollout is not Succeeded, nor its Healthy
// True for the new render, before. To make the race certain, the lower Release's
// reconciles are held back once wave 0 is applied, until the observer has assessed it
// Healthy (wave 0 rolled out, wave 1 still the old, Healthy objects); then the
// observer stops and the held reconcile applies wave 1. Before the fix, that reconcile
// reported Healthy=True from the assessment of the render with only wave 0 applied,
// and the later ones judged the rollout Succeeded: the higher wave applied at once.
func TestSP30_AHigherClusterWaveWaitsForTheLastSyncWaveOfTheLowerOne(t *testing.T) {
	e := newEnv(t)
	seen := &rolloutEvents{}
	lowReconciles := &pausable{}
	e.startControllerWith(controllerOptions{middleware: lowReconciles.middleware})
	obs := e.startObserver(observerOptions{})
	values := func(image string) *runtime.RawExtension {
		return &runtime.RawExtension{Raw: fmt.Appendf(nil, `{"image":%q,"firstMinReadySeconds":3,"secondMinReadySeconds":8}`, image)}
	}
	low := &v1.Release{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "low"},
		Spec: v1.ReleaseSpec{
			Chart:         v1.ChartSource{Repository: chartsURL, Name: "twowaves"},
			Values:        values(imageOld),
			SyncPolicy:    v1.SyncPolicy{Automatic: ptr.To(true)},
			FailurePolicy: &v1.FailurePolicy{HealthTimeout: &metav1.Duration{Duration: 2 * time.Minute}},
		},
	}
	e.create(low)
	first := e.waitCondition("low", v1.ConditionReady, metav1.ConditionTrue, policy.ReasonReady)
	e.watchWaveGate(seen, imageNew)

	// The upgrade and the higher wave, at once: the higher wave waits for the lower
	// one's new render, wave 1 included, to be Applied and Healthy.
	e.edit("low", func(r *v1.Release) { r.Spec.Values = values(imageNew) })
	high := appRelease(e.ns, "high", valuesAvailable)
	high.Spec.ClusterWave = 1
	e.create(high)
	e.waitCondition("low", v1.ConditionApplied, metav1.ConditionFalse, v1.ReasonWaitingForSyncWave)
	lowReconciles.pause("low")
	ref := e.release("low").Status.Render.Ref
	e.eventually("the observer assessed the new render with wave 0 rolled out: Healthy", func() (bool, string) {
		inv := e.inventory("low")
		st := inv.Status
		return inv.RenderRef == ref && inv.SyncWave != nil && st.RenderRef == ref && st.Health == v1.HealthHealthy &&
				st.ObservedGeneration == inv.Generation,
			fmt.Sprintf("inventory %s (syncWave %+v, generation %d), status %s %s of generation %d",
				inv.RenderRef, inv.SyncWave, inv.Generation, st.RenderRef, st.Health, st.ObservedGeneration)
	})
	obs.stop()
	lowReconciles.resume("low")
	e.eventually("the lower wave's last sync wave applied", func() (bool, string) {
		r := e.release("low")
		ls := r.Status.LastSuccessful
		return ls != nil && ls.RenderRef == ref, fmt.Sprintf("lastSuccessful %+v; seen: %s", ls, seen)
	})
	e.consistently("while the observer has not assessed wave 1: not Healthy, no Succeeded, the higher wave waits", 3*time.Second, func() (bool, string) {
		r := e.release("low")
		healthy := conditionTrue(r, v1.ConditionHealthy)
		succeeded := r.Status.Rollout != nil && r.Status.Rollout.Phase == v1.RolloutSucceeded && r.Status.Rollout.RenderRef == ref
		return !healthy && !succeeded && !e.deploymentExists(e.ns, "high"),
			fmt.Sprintf("low Healthy %t, rollout %+v; seen: %s", healthy, r.Status.Rollout, seen)
	})

	e.startObserver(observerOptions{})
	e.waitUpgradeReady("low", first, seen.String)
	e.waitCondition("high", v1.ConditionReady, metav1.ConditionTrue, policy.ReasonReady)
	e.eventually("the rollout Succeeded", func() (bool, string) {
		return seen.index("low Succeeded "+ref) >= 0, seen.String()
	})
	t.Logf("seen: %s", seen)
	rolledOut := seen.index("rolled out wave-1")
	for _, later := range []string{"created high", "low Succeeded " + ref, "low Healthy " + ref} {
		if i := seen.index(later); rolledOut < 0 || i < 0 || i < rolledOut {
			t.Errorf("%q must come after %q; seen: %s", later, "rolled out wave-1", seen)
		}
	}
}

// watchWaveGate records in r, in the order this process sees them: "applied <name>" and
// "rolled out <name>" of the Deployments with image, "created <name>" of the first
// sight of any other Deployment, and of the Release low "low Healthy <render>" (Healthy
// True for its generation and lastSuccessful render) and "low Succeeded <render>".
func (e *env) watchWaveGate(r *rolloutEvents, image string) {
	e.t.Helper()
	deps, err := e.client.Watch(e.ctx, &appsv1.DeploymentList{}, client.InNamespace(e.ns))
	if err != nil {
		e.t.Fatal(err)
	}
	rels, err := e.client.Watch(e.ctx, &v1.ReleaseList{}, client.InNamespace(e.ns))
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(deps.Stop)
	e.t.Cleanup(rels.Stop)
	go func() {
		for ev := range deps.ResultChan() {
			d, ok := ev.Object.(*appsv1.Deployment)
			if !ok || ev.Type == watch.Deleted {
				continue
			}
			if d.Spec.Template.Spec.Containers[0].Image != image {
				if d.Name != "wave-0" && d.Name != "wave-1" {
					r.add("created " + d.Name)
				}
				continue
			}
			r.add("applied " + d.Name)
			want := ptr.Deref(d.Spec.Replicas, 1)
			st := d.Status
			if st.ObservedGeneration >= d.Generation && st.UpdatedReplicas == want && st.AvailableReplicas == want && st.Replicas == want {
				r.add("rolled out " + d.Name)
			}
		}
	}()
	go func() {
		for ev := range rels.ResultChan() {
			rel, ok := ev.Object.(*v1.Release)
			if !ok || rel.Name != "low" {
				continue
			}
			if h := apimeta.FindStatusCondition(rel.Status.Conditions, v1.ConditionHealthy); h != nil && h.Status == metav1.ConditionTrue &&
				h.ObservedGeneration == rel.Generation && rel.Status.LastSuccessful != nil {
				r.add("low Healthy " + rel.Status.LastSuccessful.RenderRef)
			}
			if ro := rel.Status.Rollout; ro != nil && ro.Phase == v1.RolloutSucceeded {
				r.add("low Succeeded " + ro.RenderRef)
			}
		}
	}()
}
