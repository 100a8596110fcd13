package controller

import (
	"context"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// A reconcile that gets a Release from the cache older than the controller's last
// write to it (the informer has not caught up yet) reads the Release from the API
// server: deciding on the old spec and status would undo what the write recorded, here
// apply the render before the last one again (after a rollback, the failed render).
func TestACachedReleaseOlderThanTheLastWriteIsReadFromTheAPIServer(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.createRelease("web", automatic(), values(`{"greeting":"one"}`))
	old := e.waitApplied("web", "True", v1.ReasonApplied)
	e.waitGreeting("one")
	e.update("web", values(`{"greeting":"two"}`))
	e.waitGreeting("two")
	latest := e.waitApplied("web", "True", v1.ReasonApplied)
	if latest.Status.Render == nil || old.Status.Render == nil || latest.Status.Render.Ref == old.Status.Render.Ref {
		t.Fatalf("render %+v after the change of values, %+v before: want a new render", latest.Status.Render, old.Status.Render)
	}

	stale := *e.reconciler
	stale.client = cacheAt{Client: stale.client, rel: old}
	if _, err := stale.Reconcile(e.ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(old)}); err != nil {
		t.Fatalf("reconcile on the stale cache: %v", err)
	}
	if cm := e.configMap("web-config"); cm == nil || cm.Data["greeting"] != "two" {
		t.Errorf("ConfigMap %+v after a reconcile that got the Release before its change from the cache, want greeting two", cm)
	}
	if got := e.release("web").Status.Render; got == nil || got.Ref != latest.Status.Render.Ref {
		t.Errorf("status.render %+v after the stale reconcile, want %s", got, latest.Status.Render.Ref)
	}
}

// cacheAt is a client whose cache has not caught up: it returns rel for rel's key.
type cacheAt struct {
	client.Client
	rel *v1.Release
}

func (c cacheAt) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if rel, ok := obj.(*v1.Release); ok && key == client.ObjectKeyFromObject(c.rel) {
		c.rel.DeepCopyInto(rel)
		return nil
	}
	return c.Client.Get(ctx, key, obj, opts...)
}
