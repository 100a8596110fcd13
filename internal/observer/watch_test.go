package observer

import (
	"fmt"
	"testing"

	"k8s.io/client-go/util/retry"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// The informer of a kind that no inventory lists any more is stopped (here at once:
// IdleWatchTimeout negative), and the one of a kind still listed keeps running; an
// inventory that is deleted releases its informers too.
func TestInformersOfUnusedKindsStop(t *testing.T) {
	e := newEnv(t)
	obs := e.startObserver(observerOptions{idleWatchTimeout: -1})
	e.create(testRelease(e.ns, "app"))
	e.create(testConfigMap(e.ns, "app", "config"))
	e.create(testDeployment(e.ns, "app", "app"))
	first, second := renderRef("1"), renderRef("2")
	e.create(testInventory(e.ns, "app", first, entry("ConfigMap", e.ns, "config", 0), entry("Deployment", e.ns, "app", 0)))
	e.waitHealth("app", first, v1.HealthHealthy)
	e.waitWatchedKinds(obs, 2)

	// The next render has no Deployment: its informer stops.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		inv := e.inventory("app")
		inv.RenderRef, inv.Objects = second, []v1.InventoryObject{entry("ConfigMap", e.ns, "config", 0)}
		return e.client.Update(e.ctx, inv)
	})
	if err != nil {
		t.Fatal(err)
	}
	e.waitHealth("app", second, v1.HealthHealthy)
	e.waitWatchedKinds(obs, 1)

	// The ConfigMap's informer still works: a deleted ConfigMap is Missing.
	if err := e.client.Delete(e.ctx, testConfigMap(e.ns, "app", "config")); err != nil {
		t.Fatal(err)
	}
	e.waitHealth("app", second, v1.HealthMissing)

	// The inventory is deleted: no informer is left.
	if err := e.client.Delete(e.ctx, testInventory(e.ns, "app", second)); err != nil {
		t.Fatal(err)
	}
	e.waitWatchedKinds(obs, 0)
}

// waitWatchedKinds waits until the observer runs n informers on target clusters.
func (e *env) waitWatchedKinds(r *running, n int) {
	e.t.Helper()
	e.eventually(fmt.Sprintf("%d informers of target kinds", n), func() (bool, string) {
		got := int(r.obs.watchedKinds())
		return got == n, fmt.Sprintf("%d informers", got)
	})
}
