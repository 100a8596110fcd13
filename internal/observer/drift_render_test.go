package observer

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/observer/drift"
	"kumodo.io/convoy/internal/policy"
	"kumodo.io/convoy/internal/testenv"
)

// Decision 0216: a drift check compares the live objects with the render of
// status.lastSuccessful, so none is made while the apply of another render is under
// way: the objects that apply changed already are not drift. Found by the chaos
// harness: an observer restarted while an upgrade rolled out checked at once against
// the previous render, reported the objects of the upgrade's first wave as drift, and
// kept that until its next check, an interval later, which wrote it away in steady
// state. Here an upgrade holds at sync wave 1 (its wave-1 Deployment never becomes
// available) when the observer restarts: the restarted observer makes no check and
// reports no drift while it holds, and checks the new render once it is applied.
//
// SP-36, the sync policy: "The observer uses the same interval for its drift checks."
func TestNoDriftCheckWhileAnotherRenderIsApplied(t *testing.T) {
	e := newEnv(t)
	e.startController()
	checker := &countingChecker{next: drift.New(drift.Options{})}
	obs := e.startObserver(observerOptions{drift: checker})
	rel := upgradeRelease(e.ns, "app", `{}`)
	rel.Spec.SyncPolicy.Automatic = ptr.To(true)
	rel.Spec.SyncPolicy.Interval = &metav1.Duration{Duration: time.Hour}
	e.create(rel)
	first := e.waitCondition("app", v1.ConditionReady, metav1.ConditionTrue, policy.ReasonReady)
	e.waitNoDrift("app", 2*time.Minute)
	drifts := e.watchDrift("app")

	// minReadySeconds of 500 s (under the progress deadline of 600 s): the new wave-1
	// pod is not available before the test ends.
	e.setValues("app", fmt.Sprintf(`{"slowWave1": 500, "image": %q}`, imageNew))
	e.eventually("the upgrade holds at sync wave 1, applied", func() (bool, string) {
		r, inv := e.release("app"), e.inventory("app")
		image := e.image("wave-1")
		held := inv.RenderRef != first.Status.LastSuccessful.RenderRef && inv.SyncWave != nil &&
			r.Status.LastSuccessful.RenderRef == first.Status.LastSuccessful.RenderRef && image == imageNew
		return held, fmt.Sprintf("inventory of %s (syncWave %+v), lastSuccessful %s, wave-1 image %s",
			inv.RenderRef, inv.SyncWave, r.Status.LastSuccessful.RenderRef, image)
	})

	obs.stop()
	checks := checker.calls.Load()
	restarted := e.startObserver(observerOptions{drift: checker})
	e.eventually("the restarted observer assessed the held upgrade", func() (bool, string) {
		n := restarted.assessments()
		return n > 0, fmt.Sprintf("%d assessments", n)
	})
	if r := e.release("app"); r.Status.LastSuccessful.RenderRef != first.Status.LastSuccessful.RenderRef {
		t.Fatalf("the upgrade went through (lastSuccessful %s) before the restarted observer assessed it held", r.Status.LastSuccessful.RenderRef)
	}
	if n := checker.calls.Load() - checks; n != 0 {
		t.Errorf("%d drift checks while the upgrade held at sync wave 1, want none", n)
	}

	e.setValues("app", fmt.Sprintf(`{"image": %q}`, imageNew))
	e.waitUpgradeReady("app", first, func() string { return "" })
	e.eventually("a drift check of the new render", func() (bool, string) {
		n := checker.calls.Load() - checks
		return n > 0, fmt.Sprintf("%d drift checks since the restart", n)
	})
	e.waitNoDrift("app", 2*time.Minute)
	drifts.wantNone(t)
}

// Decision 0216: a drift result is of the render it compared the live objects with.
// Once another render is status.lastSuccessful, the observer checks it at once, not an
// interval after its last check, so that a drift which the new render's apply put
// back does not stay reported (and is not written away in steady state). In manual
// mode wave-0 is scaled by hand and the drift reported; an upgrade applied by a
// /sync sets the replicas back; the drift goes within seconds, the interval being an
// hour.
//
// SP-36, the sync policy: "The observer uses the same interval for its drift checks."
func TestANewLastSuccessfulRenderIsCheckedForDriftAtOnce(t *testing.T) {
	e := newEnv(t)
	e.startController()
	checker := drift.New(drift.Options{})
	obs := e.startObserver(observerOptions{drift: checker})
	rel := upgradeRelease(e.ns, "app", `{}`)
	rel.Spec.SyncPolicy.Interval = &metav1.Duration{Duration: time.Hour}
	e.create(rel)
	e.waitCondition("app", v1.ConditionApplied, metav1.ConditionFalse, v1.ReasonWaitingForSync)
	e.sync("app")
	first := e.waitCondition("app", v1.ConditionReady, metav1.ConditionTrue, policy.ReasonReady)
	e.waitNoDrift("app", 2*time.Minute)

	e.scale("wave-0", 3)
	// A restarted observer checks at once: the interval is an hour.
	obs.stop()
	e.startObserver(observerOptions{drift: checker})
	e.eventually("drift at spec.replicas of wave-0", func() (bool, string) {
		d := e.inventory("app").Status.Drift
		return d != nil && len(d.Drifted) == 1 && d.Drifted[0].Name == "wave-0", fmt.Sprintf("drift %+v", d)
	})

	e.setValues("app", fmt.Sprintf(`{"image": %q}`, imageNew))
	e.waitCondition("app", v1.ConditionApplied, metav1.ConditionFalse, v1.ReasonWaitingForSync)
	e.sync("app")
	e.waitUpgradeReady("app", first, func() string { return "" })
	if r := e.replicas("wave-0"); r != 1 {
		t.Fatalf("wave-0 has %d replicas after the upgrade's apply, want 1", r)
	}
	e.waitNoDrift("app", 30*time.Second)
}

// waitNoDrift waits up to timeout until the inventory name reports a drift check that
// found no drift.
func (e *env) waitNoDrift(name string, timeout time.Duration) {
	e.t.Helper()
	testenv.Eventually(e.t, e.ctx, "a drift check without drift", timeout, func() (bool, string) {
		d := e.inventory(name).Status.Drift
		return d != nil && d.Since != nil && len(d.Drifted) == 0, fmt.Sprintf("drift %+v", d)
	})
}

// image is the image of the Deployment name.
func (e *env) image(name string) string {
	e.t.Helper()
	d := &appsv1.Deployment{}
	if err := e.client.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: name}, d); err != nil {
		e.t.Fatal(err)
	}
	return d.Spec.Template.Spec.Containers[0].Image
}

// assessments is the number of assessments it completed.
func (r *running) assessments() int {
	m := &dto.Metric{}
	if err := r.obs.metrics.assessment.Write(m); err != nil {
		panic(err)
	}
	return int(m.GetHistogram().GetSampleCount())
}

// driftWatch records every drift that the API server stored for one inventory.
type driftWatch struct {
	mu      sync.Mutex
	drifted []v1.DriftStatus
}

// watchDrift starts recording the drift of the inventory name. Cleanup stops it.
func (e *env) watchDrift(name string) *driftWatch {
	e.t.Helper()
	w, err := e.client.Watch(e.ctx, &v1.ReleaseInventoryList{}, client.InNamespace(e.ns))
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(w.Stop)
	d := &driftWatch{}
	go func() {
		for ev := range w.ResultChan() {
			inv, ok := ev.Object.(*v1.ReleaseInventory)
			if !ok || ev.Type == watch.Deleted || inv.Name != name || inv.Status.Drift == nil {
				continue
			}
			if len(inv.Status.Drift.Drifted) > 0 {
				d.mu.Lock()
				d.drifted = append(d.drifted, *inv.Status.Drift.DeepCopy())
				d.mu.Unlock()
			}
		}
	}()
	return d
}

// wantNone fails t when a drift was stored.
func (d *driftWatch) wantNone(t *testing.T) {
	t.Helper()
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.drifted) > 0 {
		t.Errorf("drift reported: %+v", slices.Clone(d.drifted))
	}
}
