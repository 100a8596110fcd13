package controller

import (
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// After convoy's storage is restored from an older backup, a Release and its
// ReleaseInventory are as they were then, while the target holds what later applies
// made. The restarted controller adopts the objects with the Release's labels that
// the inventory misses before its first prune: the Secret an upgrade added after the
// backup is pruned (the restored Release does not render it), the ConfigMap is as the
// restored Release says, the inventory lists exactly the render, and the objects of
// another live Release are left alone. Without the adoption the Secret would stay,
// orphaned: no inventory lists it. The forced /sync recorded after the backup is not
// replayed.
func TestARestoredReleaseAdoptsWhatItsInventoryMisses(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.createRelease("web", automatic(), values(`{"greeting":"one"}`))
	e.createRelease("live", automatic(), values(`{"greeting":"live","secret":"keep-me"}`))
	e.waitApplied("web", "True", v1.ReasonApplied)
	e.waitApplied("live", "True", v1.ReasonApplied)

	// A forced /sync before the backup, handled.
	e.sync("web", true)
	e.eventually("the forced sync before the backup handled", func() (bool, string) {
		rel := e.release("web")
		at := rel.Annotations[v1.AnnotationSyncForceRequestedAt]
		h := rel.Status.LastHandledForceSyncAt
		return h != nil && h.UTC().Format(time.RFC3339) == at, fmt.Sprintf("requested %s, handled %v", at, h)
	})

	// The backup: the Release (annotations, spec, status) and its inventory as they are now.
	backedUp := e.release("web").DeepCopy()
	inventory := slices.Clone(e.inventory("web").Objects)

	// After the backup an upgrade adds a Secret, and a forced /sync is recorded.
	e.update("web", values(`{"greeting":"two","secret":"s3cr3t"}`))
	e.sync("web", true)
	e.eventually("the upgrade after the backup applied", func() (bool, string) {
		got := e.inventoryNames("web")
		cm := e.configMap("web-config")
		return slices.Equal(got, []string{"ConfigMap/web-config", "Secret/web-secret"}) && cm != nil && cm.Data["greeting"] == "two",
			fmt.Sprint(got)
	})

	// The restore, with the controller stopped (docs/operations/backup.md): the Release's spec
	// and its inventory's list go back to the backup's.
	e.stopController()
	<-e.stopped
	rel := e.release("web")
	rel.Annotations, rel.Spec = backedUp.Annotations, backedUp.Spec
	if err := e.client.Update(e.ctx, rel); err != nil {
		t.Fatalf("restore Release web: %v", err)
	}
	rel.Status = backedUp.Status
	if err := e.client.Status().Update(e.ctx, rel); err != nil {
		t.Fatalf("restore the status of Release web: %v", err)
	}
	inv := e.inventory("web")
	inv.Objects = inventory
	if err := e.client.Update(e.ctx, inv); err != nil {
		t.Fatalf("restore ReleaseInventory web: %v", err)
	}
	e.startController()

	e.eventually("the target to be as the restored Release says", func() (bool, string) {
		got := e.inventoryNames("web")
		err := e.client.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: "web-secret"}, &corev1.Secret{})
		cm := e.configMap("web-config")
		return slices.Equal(got, []string{"ConfigMap/web-config"}) && apierrors.IsNotFound(err) && cm != nil && cm.Data["greeting"] == "one",
			fmt.Sprintf("inventory %v, Secret web-secret: %v, ConfigMap %v", got, err, cm)
	})
	// The /sync recorded after the backup is not replayed: the restored request is the
	// one the restored status handled.
	e.settle("web")
	if got := e.release("web"); got.Annotations[v1.AnnotationSyncForceRequestedAt] != backedUp.Annotations[v1.AnnotationSyncForceRequestedAt] ||
		!got.Status.LastHandledForceSyncAt.Equal(backedUp.Status.LastHandledForceSyncAt) {
		t.Errorf("forced sync requested %s, handled %v after the restore; want the backup's %s, %v",
			got.Annotations[v1.AnnotationSyncForceRequestedAt], got.Status.LastHandledForceSyncAt,
			backedUp.Annotations[v1.AnnotationSyncForceRequestedAt], backedUp.Status.LastHandledForceSyncAt)
	}
	if err := e.client.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: "live-secret"}, &corev1.Secret{}); err != nil {
		t.Errorf("Secret live-secret of the live Release: %v, want it kept", err)
	}
	if got := e.inventoryNames("live"); !slices.Equal(got, []string{"ConfigMap/live-config", "Secret/live-secret"}) {
		t.Errorf("inventory of the live Release %v, want its ConfigMap and Secret", got)
	}
}

// After convoy's storage is lost, the Releases are applied again from Git into a
// fresh etcd: a Release of a new uid, no ReleaseInventory, an older spec than what
// the target holds. Its first apply finds the render's object on the target (not
// created), so it adopts the labelled objects before its first prune: the Secret of
// the lost spec is pruned, not orphaned.
func TestAReleaseAppliedAgainIntoAnEmptyStorageAdoptsItsObjects(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.createRelease("web", automatic(), values(`{"greeting":"one","secret":"s3cr3t"}`))
	e.waitApplied("web", "True", v1.ReasonApplied)
	if got := e.inventoryNames("web"); !slices.Equal(got, []string{"ConfigMap/web-config", "Secret/web-secret"}) {
		t.Fatalf("inventory %v, want the ConfigMap and the Secret", got)
	}

	// The storage is lost with the controller stopped: the Release and its inventory
	// go without their finalizers running.
	e.stopController()
	<-e.stopped
	for _, obj := range []client.Object{e.release("web"), e.inventory("web")} {
		obj.SetFinalizers(nil)
		if err := e.client.Update(e.ctx, obj); err != nil {
			t.Fatal(err)
		}
		if err := e.client.Delete(e.ctx, obj); client.IgnoreNotFound(err) != nil {
			t.Fatal(err)
		}
	}
	e.eventually("the lost Release and inventory gone", func() (bool, string) {
		err := e.client.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: "web"}, &v1.Release{})
		return apierrors.IsNotFound(err) && e.inventory("web") == nil, fmt.Sprint(err)
	})
	// Applied again from Git, at a spec without the Secret.
	e.createRelease("web", automatic(), values(`{"greeting":"one"}`))
	e.startController()

	e.eventually("the target to be as the re-applied Release says", func() (bool, string) {
		got := e.inventoryNames("web")
		err := e.client.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: "web-secret"}, &corev1.Secret{})
		return slices.Equal(got, []string{"ConfigMap/web-config"}) && apierrors.IsNotFound(err),
			fmt.Sprintf("inventory %v, Secret web-secret: %v", got, err)
	})
}
