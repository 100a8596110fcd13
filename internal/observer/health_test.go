package observer

import (
	"fmt"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// A Deployment whose pods cannot run yet is Progressing; once they run on kwok's nodes
// and it is Available, the inventory says Healthy, per object, per wave and for the
// render.
func TestHealthProgressingToHealthy(t *testing.T) {
	e := newEnv(t)
	ref := renderRef("a")
	e.createUnschedulableRender("web", ref)
	e.startObserver(observerOptions{})

	inv := e.waitHealth("web", ref, v1.HealthProgressing)
	if got := inv.Status.Waves; len(got) != 1 || got[0].Health != v1.HealthProgressing {
		t.Errorf("waves = %v, want wave 0 Progressing", got)
	}

	// Let the pods run: a new rollout without the node selector becomes Available.
	e.letPodsRun("web")
	inv = e.waitHealth("web", ref, v1.HealthHealthy)
	if got := inv.Status.Objects; len(got) != 1 || got[0].Health != v1.HealthHealthy || got[0].Name != "web" {
		t.Errorf("objects = %v, want Deployment web Healthy", got)
	}
	if inv.Status.AssessedAt == nil {
		t.Error("assessedAt is not set")
	}
}

// A Deployment that passes its progressDeadlineSeconds (its pods can never be
// scheduled) is Degraded, and so are its wave and the render.
func TestHealthDegradedPastProgressDeadline(t *testing.T) {
	e := newEnv(t)
	ref := renderRef("b")
	e.create(testRelease(e.ns, "web"))
	e.create(testConfigMap(e.ns, "web", "config"))
	e.create(testDeployment(e.ns, "web", "web", unschedulable(), progressDeadline(2)))
	e.create(testInventory(e.ns, "web", ref, entry("ConfigMap", e.ns, "config", 0), entry("Deployment", e.ns, "web", 1)))
	e.startObserver(observerOptions{})

	inv := e.waitHealth("web", ref, v1.HealthDegraded)
	want := []v1.WaveHealth{{Wave: 0, Health: v1.HealthHealthy}, {Wave: 1, Health: v1.HealthDegraded}}
	if fmt.Sprint(inv.Status.Waves) != fmt.Sprint(want) {
		t.Errorf("waves = %v, want %v", inv.Status.Waves, want)
	}
}

// An applied object deleted by hand is Missing; an inventory object that was never
// created is Missing too.
func TestHealthMissingWhenDeletedByHand(t *testing.T) {
	e := newEnv(t)
	ref := renderRef("c")
	e.create(testRelease(e.ns, "web"))
	cm := testConfigMap(e.ns, "web", "config")
	e.create(cm)
	e.create(testInventory(e.ns, "web", ref, entry("ConfigMap", e.ns, "config", 0)))
	e.startObserver(observerOptions{})
	e.waitHealth("web", ref, v1.HealthHealthy)

	if err := e.client.Delete(e.ctx, cm); err != nil {
		t.Fatal(err)
	}
	inv := e.waitHealth("web", ref, v1.HealthMissing)
	if got := inv.Status.Objects; len(got) != 1 || got[0].Health != v1.HealthMissing {
		t.Errorf("objects = %v, want ConfigMap config Missing", got)
	}

	// A kind no informer watched before, and an object that never existed.
	e.create(testRelease(e.ns, "other"))
	e.create(testInventory(e.ns, "other", ref, entry("Deployment", e.ns, "never-created", 0)))
	e.waitHealth("other", ref, v1.HealthMissing)
}

// The first health data of a render whose objects are still progressing waits for the
// settle (health.SettleWait): a render that turns Healthy within it is reported once,
// Healthy, and never as Progressing — one status write and so one reconcile of the
// Release instead of two of each.
func TestFirstHealthDataOfAProgressingRenderWaitsForTheSettle(t *testing.T) {
	e := newEnv(t)
	ref := renderRef("5e")
	e.createUnschedulableRender("web", ref)

	reported := e.watchHealthOf(ref)

	// A settle long enough for the rollout below on a loaded machine.
	r := e.startObserver(observerOptions{settle: time.Minute})
	e.waitSighting(r, "web", ref)
	if got := e.inventory("web").Status; got.RenderRef != "" || r.writes() != 0 {
		t.Fatalf("within the settle the status was written: renderRef %q, health %q, %d writes", got.RenderRef, got.Health, r.writes())
	}

	// The rollout completes: a new template without the node selector.
	e.letPodsRun("web")
	e.waitHealth("web", ref, v1.HealthHealthy)
	if got := r.writes(); got != 1 {
		t.Errorf("status writes = %d, want 1 (Healthy only)", got)
	}
	if reported(v1.HealthProgressing) {
		t.Error("the render was reported Progressing within the settle")
	}
}

// On an upgrade the settle applies to the new render: while it progresses, the status
// keeps naming the old render, Healthy; once the new one is Available its data is
// written once, Healthy, never Progressing.
func TestAnUpgradesProgressingRenderWaitsForTheSettle(t *testing.T) {
	e := newEnv(t)
	oldRef, newRef := renderRef("7"), renderRef("8")
	e.create(testRelease(e.ns, "web"))
	e.create(testConfigMap(e.ns, "web", "config"))
	e.create(testInventory(e.ns, "web", oldRef, entry("ConfigMap", e.ns, "config", 0)))
	r := e.startObserver(observerOptions{settle: time.Minute})
	e.waitHealth("web", oldRef, v1.HealthHealthy)
	before := r.writes()

	reported := e.watchHealthOf(newRef)

	// The upgrade: the new render adds a Deployment whose pods cannot run yet.
	e.create(testDeployment(e.ns, "web", "web", unschedulable()))
	inv := e.inventory("web")
	upgraded := inv.DeepCopy()
	upgraded.RenderRef = newRef
	upgraded.Objects = append(upgraded.Objects, entry("Deployment", e.ns, "web", 0))
	if err := e.client.Patch(e.ctx, upgraded, client.MergeFrom(inv)); err != nil {
		t.Fatal(err)
	}
	e.waitSighting(r, "web", newRef)
	if got := e.inventory("web").Status; got.RenderRef != oldRef || got.Health != v1.HealthHealthy || r.writes() != before {
		t.Fatalf("within the settle the status changed: renderRef %q, health %q, %d writes after %d", got.RenderRef, got.Health, r.writes(), before)
	}

	e.letPodsRun("web")
	e.waitHealth("web", newRef, v1.HealthHealthy)
	if got := r.writes() - before; got != 1 {
		t.Errorf("status writes for the new render = %d, want 1 (Healthy only)", got)
	}
	if reported(v1.HealthProgressing) {
		t.Error("the new render was reported Progressing within the settle")
	}
}

// A render that keeps progressing is reported Progressing once the settle has passed.
func TestARenderThatKeepsProgressingIsReportedAfterTheSettle(t *testing.T) {
	e := newEnv(t)
	ref := renderRef("5f")
	e.createUnschedulableRender("web", ref)
	start := time.Now()
	e.startObserver(observerOptions{settle: 3 * time.Second})
	e.waitHealth("web", ref, v1.HealthProgressing)
	if took := time.Since(start); took < 3*time.Second {
		t.Errorf("Progressing was reported after %s, within the settle of 3s", took)
	}
}

// waitSighting waits until observer r has assessed render ref of the Release name, and
// so holds its first data back for the settle.
func (e *env) waitSighting(r *running, name, ref string) {
	e.t.Helper()
	key := types.NamespacedName{Namespace: e.ns, Name: name}
	e.eventually("the observer assessed render "+ref+" and held its data back", func() (bool, string) {
		r.obs.sightings.mu.Lock()
		defer r.obs.sightings.mu.Unlock()
		s, ok := r.obs.sightings.byKey[key]
		return ok && s.renderRef == ref, fmt.Sprintf("sighting %+v", s)
	})
}

// createUnschedulableRender creates the Release name, its Deployment name whose pods
// cannot be scheduled (Progressing until letPodsRun), and its inventory of render ref
// listing that Deployment.
func (e *env) createUnschedulableRender(name, ref string) {
	e.t.Helper()
	e.create(testRelease(e.ns, name))
	e.create(testDeployment(e.ns, name, name, unschedulable()))
	e.create(testInventory(e.ns, name, ref, entry("Deployment", e.ns, name, 0)))
}

// letPodsRun removes the node selector of Deployment name: a new rollout whose pods run
// on kwok's nodes, so that it becomes Available.
func (e *env) letPodsRun(name string) {
	e.t.Helper()
	d := &appsv1.Deployment{}
	if err := e.client.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: name}, d); err != nil {
		e.t.Fatal(err)
	}
	// A merge patch without a resourceVersion: kube-controller-manager writes the
	// Deployment's status at any moment, and an update would conflict with it.
	base := d.DeepCopy()
	d.Spec.Template.Spec.NodeSelector = nil
	if err := e.client.Patch(e.ctx, d, client.MergeFrom(base)); err != nil {
		e.t.Fatal(err)
	}
}

// watchHealthOf watches the test's ReleaseInventories from now on and returns whether
// a status naming render ref with a health has been seen so far.
func (e *env) watchHealthOf(ref string) func(v1.HealthStatus) bool {
	e.t.Helper()
	var mu sync.Mutex
	seen := map[v1.HealthStatus]bool{}
	w, err := e.client.Watch(e.ctx, &v1.ReleaseInventoryList{}, client.InNamespace(e.ns))
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(w.Stop)
	go func() {
		for ev := range w.ResultChan() {
			if inv, ok := ev.Object.(*v1.ReleaseInventory); ok && inv.Status.RenderRef == ref {
				mu.Lock()
				seen[inv.Status.Health] = true
				mu.Unlock()
			}
		}
	}()
	return func(h v1.HealthStatus) bool {
		mu.Lock()
		defer mu.Unlock()
		return seen[h]
	}
}
