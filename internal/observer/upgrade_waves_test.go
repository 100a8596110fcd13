package observer

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/observer/health"
	"kumodo.io/convoy/internal/policy"
	"kumodo.io/convoy/internal/testenv"
)

// End to end with the release controller: the sync waves of an upgrade (decision
// 0073). The chart upgrade-waves has Deployments wave-0, wave-1 and wave-2 in
// waves 0, 1 and 2, and optionally "dropped" in wave 1.

const (
	imageOld = "registry.example/app:1"
	imageNew = "registry.example/app:2"
)

// upgradeRelease is a Release of the chart upgrade-waves with values.
func upgradeRelease(ns, name, values string) *v1.Release {
	rel := testRelease(ns, name)
	rel.Spec.Chart.Name = "upgrade-waves"
	rel.Spec.Values = &runtime.RawExtension{Raw: []byte(values)}
	return rel
}

// rolloutEvents records, in the order the API server made them, when each Deployment
// of the namespace got the new image ("applied wave-1") and when its rollout of it was
// complete ("rolled out wave-1": every replica updated and available, none old).
type rolloutEvents struct {
	mu  sync.Mutex
	log []string
}

func (e *env) watchRollouts(image string) *rolloutEvents {
	e.t.Helper()
	w, err := e.client.Watch(e.ctx, &appsv1.DeploymentList{}, client.InNamespace(e.ns))
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(w.Stop)
	r := &rolloutEvents{}
	go func() {
		for ev := range w.ResultChan() {
			d, ok := ev.Object.(*appsv1.Deployment)
			if !ok || ev.Type == watch.Deleted || d.Spec.Template.Spec.Containers[0].Image != image {
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
	return r
}

// wantWaveByWave fails t unless each wave rolled out before the next one was applied.
func (r *rolloutEvents) wantWaveByWave(t *testing.T) {
	t.Helper()
	for _, step := range [][2]string{{"rolled out wave-0", "applied wave-1"}, {"rolled out wave-1", "applied wave-2"}} {
		before, after := r.index(step[0]), r.index(step[1])
		if before < 0 || after < 0 || before > after {
			t.Errorf("%q must come before %q; events: %s", step[0], step[1], r)
		}
	}
}

// waitUpgradeReady waits until the Release name is Ready with a lastSuccessful render
// other than first's; describe adds to the message of a timeout.
func (e *env) waitUpgradeReady(name string, first *v1.Release, describe func() string) {
	e.t.Helper()
	e.eventually("the upgrade applied and Ready", func() (bool, string) {
		r := e.release(name)
		ls := r.Status.LastSuccessful
		ready := conditionTrue(r, v1.ConditionReady)
		return ready && ls != nil && ls.RenderRef != first.Status.LastSuccessful.RenderRef,
			fmt.Sprintf("ready %t, lastSuccessful %+v, conditions %+v; %s", ready, ls, r.Status.Conditions, describe())
	})
}

func (r *rolloutEvents) add(what string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !slices.Contains(r.log, what) {
		r.log = append(r.log, what)
	}
}

func (r *rolloutEvents) index(what string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Index(r.log, what)
}

func (r *rolloutEvents) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.log, ", ")
}

// SP-14 — seed: "The observer sends one when a sync wave completes" (it carries the
// waves of an upgrade as of a first install). Decision 0073: an upgrade that changes the Deployments of waves 0, 1 and 2
// rolls them out wave by wave. The inventory still lists the old, Healthy objects of
// waves 1 and 2 while wave 0 rolls out; they must not count for the new render. Wave 2
// changes only once wave 1 (slow: minReadySeconds 8) rolled out the new render.
func TestSP14_UpgradeRollsOutWaveByWave(t *testing.T) {
	e := newEnv(t)
	e.startController()
	e.startObserver(observerOptions{})
	rel := upgradeRelease(e.ns, "app", `{"slowWave1": 8}`)
	rel.Spec.SyncPolicy.Automatic = ptr.To(true)
	e.create(rel)
	first := e.waitCondition("app", v1.ConditionReady, metav1.ConditionTrue, policy.ReasonReady)

	rollouts := e.watchRollouts(imageNew)
	e.setValues("app", fmt.Sprintf(`{"slowWave1": 8, "image": %q}`, imageNew))
	e.waitUpgradeReady("app", first, rollouts.String)
	rollouts.wantWaveByWave(t)
	t.Logf("Deployments: %s", rollouts)
}

// SP-14 — seed: "The observer sends one when a sync wave completes"; decision 0116 (found
// by the chaos harness, after restarts of kube-apiserver and SIGKILLs of the
// controller): an upgrade whose Release status write fails after its first wave is
// applied still rolls out wave by wave. The ReleaseInventory then names the new render
// with one wave applied, while the Release's status.syncWave still says nothing is
// held; the observer assesses the new render with the old, Healthy Deployments of
// waves 1 and 2. The next reconcile must count the waves applied from the inventory,
// not from the status it could not write, or it takes waves 1 and 2 for applied and
// Healthy and applies wave 2 at once.
func TestSP14_AnUpgradeWhoseStatusWriteFailedStillRollsOutWaveByWave(t *testing.T) {
	e := newEnv(t)
	fail := &testenv.FailWrites{Path: "/namespaces/" + e.ns + "/releases/app/status"}
	e.startControllerWith(controllerOptions{transport: fail.Wrap})
	e.startObserver(observerOptions{})
	rel := upgradeRelease(e.ns, "app", `{"slowWave1": 10}`)
	rel.Spec.SyncPolicy.Automatic = ptr.To(true)
	e.create(rel)
	first := e.waitCondition("app", v1.ConditionReady, metav1.ConditionTrue, policy.ReasonReady)

	rollouts := e.watchRollouts(imageNew)
	fail.Armed.Store(true)
	e.setValues("app", fmt.Sprintf(`{"slowWave1": 10, "image": %q}`, imageNew))
	// The status writes fail until the observer has assessed the new render with its
	// first wave rolled out.
	e.eventually("the new render assessed with wave 0 Healthy while the status writes fail", func() (bool, string) {
		inv := e.inventory("app")
		st := inv.Status
		assessed := inv.RenderRef != first.Status.LastSuccessful.RenderRef && st.RenderRef == inv.RenderRef &&
			len(st.Waves) > 0 && st.Waves[0].Health == v1.HealthHealthy
		return assessed && fail.Failed.Load() > 0, fmt.Sprintf("inventory %s (syncWave %+v), health of %s: %+v; %d status writes failed",
			inv.RenderRef, inv.SyncWave, st.RenderRef, st.Waves, fail.Failed.Load())
	})
	fail.Armed.Store(false)

	e.waitUpgradeReady("app", first, rollouts.String)
	rollouts.wantWaveByWave(t)
	t.Logf("Deployments: %s; %d status writes failed", rollouts, fail.Failed.Load())
}

// SP-14 — seed: "The observer sends one when a sync wave completes" (a render goes out
// wave by wave). Decision 0117 (found by the chaos harness: a good render rolled back the
// second its first wave was applied): a rollout is judged on its render's objects. The wave-1
// Deployment is left Degraded by hand (a nodeSelector no node matches and a 2 s
// progress deadline, fields convoy does not own); an upgrade with a failurePolicy
// starts its rollout at wave 0, and the old, Degraded wave-1 Deployment is not yet the
// new render's, so the rollout waits for its wave 1 to be applied. Here the applied
// wave 1 is Degraded too (the hand-set fields stay), so the rollout fails and rolls
// back, but only after wave 1 of the new render was applied.
func TestSP14_ARolloutIsNotFailedByAnObjectOfAWaveNotYetApplied(t *testing.T) {
	e := newEnv(t)
	e.startController()
	e.startObserver(observerOptions{})
	rel := upgradeRelease(e.ns, "app", `{}`)
	rel.Spec.SyncPolicy.Automatic = ptr.To(true)
	rel.Spec.FailurePolicy = &v1.FailurePolicy{HealthTimeout: &metav1.Duration{Duration: 2 * time.Minute}}
	e.create(rel)
	good := e.waitRender("app", "")
	e.waitRollout("app", good, v1.RolloutSucceeded, time.Time{})

	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		d := &appsv1.Deployment{}
		if err := e.client.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: "wave-1"}, d); err != nil {
			return err
		}
		d.Spec.Template.Spec.NodeSelector = map[string]string{"convoy.test/no-such-node": "true"}
		d.Spec.ProgressDeadlineSeconds = ptr.To[int32](2)
		return e.client.Update(e.ctx, d, client.FieldOwner("kubectl-edit"))
	})
	if err != nil {
		t.Fatal(err)
	}
	e.eventually("wave-1 Degraded", func() (bool, string) {
		st := e.inventory("app").Status
		i := slices.IndexFunc(st.Objects, func(o v1.ObjectHealth) bool { return o.Name == "wave-1" })
		return i >= 0 && st.Objects[i].Health == v1.HealthDegraded, fmt.Sprintf("objects %+v", st.Objects)
	})

	rollouts := e.watchRollouts(imageNew)
	e.setValues("app", fmt.Sprintf(`{"image": %q}`, imageNew))
	upgrade := e.waitRender("app", good)
	failed := e.waitRollout("app", upgrade, v1.RolloutRolledBack, time.Time{})
	if rollouts.index("applied wave-1") < 0 {
		t.Errorf("the rollout of %s failed (%q) before its wave 1 was applied; Deployments: %s",
			upgrade, failed.Status.Rollout.Message, rollouts)
	}
	t.Logf("rollout: %s; Deployments: %s", failed.Status.Rollout.Message, rollouts)
}

// SP-14, decision 0073: an object that the new render drops never gates its waves.
// In manual mode "dropped" (wave 1) is deleted by hand, so the inventory lists it
// Missing; a /sync of an upgrade without it goes through every wave and prunes it.
func TestSP14_DroppedMissingObjectDoesNotBlockUpgrade(t *testing.T) {
	e := newEnv(t)
	e.startController()
	e.startObserver(observerOptions{})
	e.create(upgradeRelease(e.ns, "app", `{"dropped": true}`))
	e.waitCondition("app", v1.ConditionApplied, metav1.ConditionFalse, v1.ReasonWaitingForSync)
	e.sync("app")
	first := e.waitCondition("app", v1.ConditionReady, metav1.ConditionTrue, policy.ReasonReady)

	// Deleted until the observer reports it Missing: a late /sync of the install
	// (the observer's) may apply the render again and bring it back.
	e.eventually("dropped deleted by hand and Missing", func() (bool, string) {
		dropped := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "dropped"}}
		if err := e.client.Delete(e.ctx, dropped); err != nil && !apierrors.IsNotFound(err) {
			return false, err.Error()
		}
		st := e.inventory("app").Status
		i := slices.IndexFunc(st.Objects, func(o v1.ObjectHealth) bool { return o.Name == "dropped" })
		return i >= 0 && st.Objects[i].Health == v1.HealthMissing, fmt.Sprintf("objects %+v", st.Objects)
	})

	e.setValues("app", fmt.Sprintf(`{"image": %q}`, imageNew))
	e.waitCondition("app", v1.ConditionApplied, metav1.ConditionFalse, v1.ReasonWaitingForSync)
	e.sync("app")
	e.eventually("the upgrade applied, the dropped object pruned", func() (bool, string) {
		r := e.release("app")
		ls := r.Status.LastSuccessful
		applied := conditionTrue(r, v1.ConditionApplied)
		inv := e.inventory("app")
		listed := slices.ContainsFunc(inv.Objects, func(o v1.InventoryObject) bool { return o.Name == "dropped" })
		return applied && ls != nil && ls.RenderRef != first.Status.LastSuccessful.RenderRef && !listed,
			fmt.Sprintf("applied %t, lastSuccessful %+v, dropped listed %t, waves %+v, syncWave %+v",
				applied, ls, listed, inv.Status.Waves, r.Status.SyncWave)
	})
	e.waitCondition("app", v1.ConditionHealthy, metav1.ConditionTrue, v1.ReasonHealthy)
}

// conditionTrue says whether the condition typ of rel is True.
func conditionTrue(rel *v1.Release, typ string) bool {
	return apimeta.IsStatusConditionTrue(rel.Status.Conditions, typ)
}

// SP-03 — seed: "In automatic mode, convoy applies the full render at each reconcile,
// also when nothing changed. This also corrects drift at each periodic reconcile."
// SP-03: automatic mode applies the render it already applied in full
// at each reconcile, also while a lower wave is unhealthy: a hand edit of wave 2 is
// put back by the periodic reconcile while wave 0 cannot become Healthy (a hand-set
// nodeSelector that no node matches keeps its new pod Pending).
func TestSP03_AutomaticReappliesEveryWaveWhileALowerWaveIsUnhealthy(t *testing.T) {
	e := newEnv(t)
	e.startController()
	e.startObserver(observerOptions{})
	rel := upgradeRelease(e.ns, "app", `{}`)
	rel.Spec.SyncPolicy.Automatic = ptr.To(true)
	rel.Spec.SyncPolicy.Interval = &metav1.Duration{Duration: 3 * time.Second}
	e.create(rel)
	e.waitCondition("app", v1.ConditionReady, metav1.ConditionTrue, policy.ReasonReady)

	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		d := &appsv1.Deployment{}
		if err := e.client.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: "wave-0"}, d); err != nil {
			return err
		}
		d.Spec.Template.Spec.NodeSelector = map[string]string{"convoy.test/no-such-node": "true"}
		return e.client.Update(e.ctx, d, client.FieldOwner("kubectl-edit"))
	})
	if err != nil {
		t.Fatal(err)
	}
	e.eventually("wave 0 not Healthy", func() (bool, string) {
		st := e.inventory("app").Status
		i := slices.IndexFunc(st.Waves, func(w v1.WaveHealth) bool { return w.Wave == 0 })
		return i >= 0 && st.Waves[i].Health != v1.HealthHealthy, fmt.Sprintf("waves %+v", st.Waves)
	})
	e.scale("wave-2", 3)
	e.eventually("the periodic reconcile puts wave-2's replicas back", func() (bool, string) {
		r := e.replicas("wave-2")
		return r == 1, fmt.Sprintf("replicas %d, Applied %+v", r, apimeta.FindStatusCondition(e.release("app").Status.Conditions, v1.ConditionApplied))
	})
}

// SP-03 — seed: "In automatic mode, convoy applies the full render at each reconcile,
// also when nothing changed. This also corrects drift". A Deployment that an upgrade
// changed (its inventory entry records generation 2) and that is then deleted by hand
// is created again by the reconcile that the observer's Missing starts, at generation
// 1: the inventory must record that generation, or the observer takes its view of the
// new object for one from before the apply and never assesses it again (the Release
// stays Missing for ever).
func TestSP03_ADeploymentDeletedByHandIsAssessedAgainOnceCreatedAgain(t *testing.T) {
	e := newEnv(t)
	e.startController()
	e.startObserver(observerOptions{})
	rel := upgradeRelease(e.ns, "app", `{}`)
	rel.Spec.SyncPolicy.Automatic = ptr.To(true)
	e.create(rel)
	first := e.waitCondition("app", v1.ConditionReady, metav1.ConditionTrue, policy.ReasonReady)
	e.setValues("app", fmt.Sprintf(`{"image": %q}`, imageNew))
	e.waitUpgradeReady("app", first, func() string { return "" })
	entry := func() v1.InventoryObject {
		inv := e.inventory("app")
		i := slices.IndexFunc(inv.Objects, func(o v1.InventoryObject) bool { return o.Name == "wave-0" })
		if i < 0 {
			t.Fatalf("wave-0 not in the inventory: %+v", inv.Objects)
		}
		return inv.Objects[i]
	}
	if g := entry().Generation; g < 2 {
		t.Fatalf("the upgrade recorded generation %d for wave-0, want 2 or more: the test needs an entry newer than a created object", g)
	}

	old := &appsv1.Deployment{}
	if err := e.client.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: "wave-0"}, old); err != nil {
		t.Fatal(err)
	}
	if err := e.client.Delete(e.ctx, old); err != nil {
		t.Fatal(err)
	}
	e.eventually("wave-0 created again and assessed Healthy", func() (bool, string) {
		d := &appsv1.Deployment{}
		err := e.client.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: "wave-0"}, d)
		again := err == nil && d.UID != old.UID
		r := e.release("app")
		st := e.inventory("app").Status
		i := slices.IndexFunc(st.Objects, func(o v1.ObjectHealth) bool { return o.Name == "wave-0" })
		healthy := i >= 0 && st.Objects[i].Health == v1.HealthHealthy
		return again && healthy && conditionTrue(r, v1.ConditionReady),
			fmt.Sprintf("created again %t (generation %d), wave-0 in the health data %+v, entry %+v, Ready %+v",
				again, d.Generation, st.Objects, entry(), apimeta.FindStatusCondition(r.Status.Conditions, v1.ConditionReady))
	})
}

// SP-14 — seed: "The observer sends one when a sync wave completes". Decision 0089:
// a pinned render is applied wave by wave in manual mode as well; its waves complete
// although status.render.ref names the current render, not the pinned one. Render A
// (image 1) is installed, render B (image 2) applied; the pin to A (a /sync) applies
// wave 0 of A, and only the observer's wave /syncs carry it through waves 1 and 2.
func TestSP14_PinnedRenderRollsOutWaveByWaveInManualMode(t *testing.T) {
	e := newEnv(t)
	e.startController()
	obs := e.startObserver(observerOptions{})
	e.create(upgradeRelease(e.ns, "app", `{}`))
	e.waitCondition("app", v1.ConditionApplied, metav1.ConditionFalse, v1.ReasonWaitingForSync)
	e.sync("app")
	renderA := e.waitCondition("app", v1.ConditionReady, metav1.ConditionTrue, policy.ReasonReady).Status.LastSuccessful.RenderRef

	// A late /sync of the observer's may apply render B before the person's does.
	e.setValues("app", fmt.Sprintf(`{"image": %q}`, imageNew))
	e.sync("app")
	e.eventually("render B applied and Ready", func() (bool, string) {
		r := e.release("app")
		ls := r.Status.LastSuccessful
		return conditionTrue(r, v1.ConditionReady) && ls != nil && ls.RenderRef != renderA, fmt.Sprintf("lastSuccessful %+v", ls)
	})

	rollouts := e.watchRollouts(imageOld)
	waveSyncs, renderSyncs := obs.triggers(health.TriggerSyncWave), obs.triggers(health.TriggerNewRender)
	e.pin("app", renderA)
	e.eventually("pinned render A applied in full", func() (bool, string) {
		r := e.release("app")
		ls := r.Status.LastSuccessful
		c := apimeta.FindStatusCondition(r.Status.Conditions, v1.ConditionApplied)
		return c != nil && c.Reason == v1.ReasonPinned && ls != nil && ls.RenderRef == renderA,
			fmt.Sprintf("Applied %+v, lastSuccessful %+v, syncWave %+v; Deployments: %s", c, ls, r.Status.SyncWave, rollouts)
	})
	for _, step := range [][2]string{{"rolled out wave-0", "applied wave-1"}, {"rolled out wave-1", "applied wave-2"}} {
		before, after := rollouts.index(step[0]), rollouts.index(step[1])
		if before < 0 || after < 0 || before > after {
			t.Errorf("%q must come before %q; events: %s", step[0], step[1], rollouts)
		}
	}
	// The observer signalled waves 0 and 1 of render A (each before the next wave was
	// applied: it sends /sync before it writes the status that reconciles the
	// Release), and announced render A once, when its last wave was in.
	if got := obs.triggers(health.TriggerSyncWave) - waveSyncs; got != 2 {
		t.Errorf("the observer signalled %d completed sync waves of the pinned render, want 2", got)
	}
	e.eventually("render A announced once", func() (bool, string) {
		got := obs.triggers(health.TriggerNewRender) - renderSyncs
		return got == 1, fmt.Sprintf("%d new-render /syncs", got)
	})
}

// pin writes releases/<name>/pin at renderRef, as kubectl convoy release pin does.
func (e *env) pin(name, renderRef string) {
	e.t.Helper()
	rel := e.release(name)
	body := fmt.Sprintf(`{"pin":{"renderRef":%q}}`, renderRef)
	if err := e.client.SubResource(v1.SubresourcePin).Patch(e.ctx, rel, client.RawPatch(types.MergePatchType, []byte(body))); err != nil {
		e.t.Fatalf("patch releases/%s/pin with %s: %v", name, body, err)
	}
}
