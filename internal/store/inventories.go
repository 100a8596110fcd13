package store

import (
	"context"
	"fmt"
	"maps"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// GetInventory reads the ReleaseInventory key (a Release's namespace and name) from
// r; nil when there is none.
func GetInventory(ctx context.Context, r client.Reader, key client.ObjectKey) (*v1.ReleaseInventory, error) {
	inv := &v1.ReleaseInventory{}
	err := r.Get(ctx, key, inv)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("cannot read the ReleaseInventory %s: %w", key, err)
	}
	return inv, nil
}

// EmptyInventory is the ReleaseInventory of rel before it is created: no objects, no
// render. WriteInventory creates it.
func EmptyInventory(rel *v1.Release) *v1.ReleaseInventory {
	return &v1.ReleaseInventory{ObjectMeta: metav1.ObjectMeta{Namespace: rel.Namespace, Name: rel.Name}}
}

// WriteInventory records objects as the inventory's list of renderRef, with the
// progress of its apply (syncWave, nil once every wave is applied), creating the
// inventory (owned by the Release, with the finalizer that the Release's deletion
// removes) when it does not exist (inv has no resourceVersion). It carries the
// Release's shard label, if any (ShardLabels). Nothing is written when nothing
// changes. It returns the inventory as written (inv when nothing was, or on an
// error) and whether it wrote.
func WriteInventory(ctx context.Context, c client.Writer, rel *v1.Release, inv *v1.ReleaseInventory, renderRef string, syncWave *v1.SyncWaveStatus, objects []v1.InventoryObject) (*v1.ReleaseInventory, bool, error) {
	labels, relabel := ShardLabels(rel, inv)
	if inv.ResourceVersion == "" {
		if len(labels) == 0 {
			labels = nil
		}
		created := &v1.ReleaseInventory{
			ObjectMeta: metav1.ObjectMeta{
				Namespace:       rel.Namespace,
				Name:            rel.Name,
				Labels:          labels,
				OwnerReferences: []metav1.OwnerReference{OwnerReference(rel)},
				Finalizers:      []string{v1.Finalizer},
			},
			Cluster:   rel.Spec.Cluster,
			RenderRef: renderRef,
			Objects:   objects,
			SyncWave:  syncWave,
		}
		if err := c.Create(ctx, created); err != nil {
			return inv, false, fmt.Errorf("cannot create the ReleaseInventory %s/%s: %w", rel.Namespace, rel.Name, err)
		}
		return created, true, nil
	}
	// An inventory written before it carried the finalizer gets it now; one being
	// deleted cannot (the API server refuses new finalizers then), and keeps its own.
	addFinalizer := inv.DeletionTimestamp == nil && !controllerutil.ContainsFinalizer(inv, v1.Finalizer)
	if inv.Cluster == rel.Spec.Cluster && inv.RenderRef == renderRef && ptr.Equal(inv.SyncWave, syncWave) &&
		slices.Equal(inv.Objects, objects) && !addFinalizer && !relabel {
		return inv, false, nil
	}
	updated := inv.DeepCopy()
	updated.Cluster, updated.RenderRef, updated.SyncWave, updated.Objects = rel.Spec.Cluster, renderRef, syncWave, objects
	updated.Labels = labels
	if addFinalizer {
		controllerutil.AddFinalizer(updated, v1.Finalizer)
	}
	if err := c.Patch(ctx, updated, client.MergeFrom(inv)); err != nil {
		return inv, false, fmt.Errorf("cannot write the ReleaseInventory %s/%s: %w", rel.Namespace, rel.Name, err)
	}
	return updated, true, nil
}

// OwnerReference is the controller owner reference of rel, on its Renders and its
// ReleaseInventory.
func OwnerReference(rel *v1.Release) metav1.OwnerReference {
	yes := true
	return metav1.OwnerReference{
		APIVersion:         v1.SchemeGroupVersion.String(),
		Kind:               "Release",
		Name:               rel.Name,
		UID:                rel.UID,
		Controller:         &yes,
		BlockOwnerDeletion: &yes,
	}
}

// ShardLabels are inv's labels with the Release's shard label (convoy.kumodo.io/shard,
// or none when the Release has none), and whether that changes them: the label lets
// a shard's caches select its own inventories.
func ShardLabels(rel *v1.Release, inv *v1.ReleaseInventory) (map[string]string, bool) {
	want, has := rel.Labels[v1.LabelShard]
	got, had := inv.Labels[v1.LabelShard]
	if want == got && has == had {
		return inv.Labels, false
	}
	labels := maps.Clone(inv.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	if has {
		labels[v1.LabelShard] = want
	} else {
		delete(labels, v1.LabelShard)
	}
	return labels, true
}

// LabelInventory gives inv the Release's shard label (ShardLabels) and returns it as
// written; inv itself when its label is the Release's already.
func LabelInventory(ctx context.Context, c client.Writer, rel *v1.Release, inv *v1.ReleaseInventory) (*v1.ReleaseInventory, error) {
	labels, changed := ShardLabels(rel, inv)
	if !changed {
		return inv, nil
	}
	updated := inv.DeepCopy()
	updated.Labels = labels
	if err := c.Patch(ctx, updated, client.MergeFrom(inv)); err != nil {
		return nil, fmt.Errorf("label the ReleaseInventory %s/%s with shard %q: %w", inv.Namespace, inv.Name, rel.Labels[v1.LabelShard], err)
	}
	return updated, nil
}

// DeleteInventory deletes inv unless it is being deleted already; one that is gone is
// no error. Its finalizer is the caller's to remove.
func DeleteInventory(ctx context.Context, c client.Writer, inv *v1.ReleaseInventory) error {
	if inv.DeletionTimestamp != nil {
		return nil
	}
	if err := c.Delete(ctx, inv); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete the ReleaseInventory %s/%s: %w", inv.Namespace, inv.Name, err)
	}
	return nil
}

// PatchInventoryStatus writes the status of patched, inv with the status the observer
// assessed, if inv is still the inventory's last version: a conflict error (see
// apierrors.IsConflict) says a newer one exists.
func PatchInventoryStatus(ctx context.Context, c client.Client, patched, inv *v1.ReleaseInventory) error {
	if err := c.Status().Patch(ctx, patched, client.MergeFromWithOptions(inv, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("write the status of ReleaseInventory %s/%s: %w", inv.Namespace, inv.Name, err)
	}
	return nil
}

// RemoveInventoryFinalizer removes convoy's finalizer from inv, if it has it, in a
// patch that fails on a newer version of it.
func RemoveInventoryFinalizer(ctx context.Context, c client.Writer, inv *v1.ReleaseInventory) error {
	orig := inv.DeepCopy()
	if !controllerutil.RemoveFinalizer(inv, v1.Finalizer) {
		return nil
	}
	return c.Patch(ctx, inv, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}))
}
