package observer

import (
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// A Deployment whose pods cannot run yet is Progressing; once they run on kwok's nodes
// and it is Available, the inventory says Healthy, per object, per wave and for the
// render.
func TestHealthProgressingToHealthy(t *testing.T) {
	e := newEnv(t)
	ref := renderRef("a")
	e.create(testRelease(e.ns, "web"))
	e.create(testDeployment(e.ns, "web", "web", unschedulable()))
	e.create(testInventory(e.ns, "web", ref, entry("Deployment", e.ns, "web", 0)))
	e.startObserver(observerOptions{})

	inv := e.waitHealth("web", ref, v1.HealthProgressing)
	if got := inv.Status.Waves; len(got) != 1 || got[0].Health != v1.HealthProgressing {
		t.Errorf("waves = %v, want wave 0 Progressing", got)
	}

	// Let the pods run: a new rollout without the node selector becomes Available.
	d := &appsv1.Deployment{}
	if err := e.client.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: "web"}, d); err != nil {
		t.Fatal(err)
	}
	d.Spec.Template.Spec.NodeSelector = nil
	if err := e.client.Update(e.ctx, d); err != nil {
		t.Fatal(err)
	}
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
