package controller

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/apply"
	"kumodo.io/convoy/internal/policy"
	"kumodo.io/convoy/internal/render"
	"kumodo.io/convoy/internal/store"
)

// deletionPoll is how soon a deletion looks again while objects are terminating or
// delete hooks run.
const deletionPoll = 2 * time.Second

// deletionProgress is where a deletion stands after a reconcile.
type deletionProgress int

const (
	// deletionDone: nothing the Release applied is left.
	deletionDone deletionProgress = iota
	// deletionWaiting: objects are terminating, or delete hooks run.
	deletionWaiting
	// deletionHeld: a delete hook failed; only a forced /sync or deletionPolicy
	// Orphan lets the deletion go on.
	deletionHeld
)

// progressOf is the progress of a deletion that a delete hook stopped (WaitingForHooks
// or HookFailed).
func progressOf(stop *policy.Result) deletionProgress {
	if stop.Reason == v1.ReasonHookFailed {
		return deletionHeld
	}
	return deletionWaiting
}

// deletionRequeue says when a deletion that is not done looks again. One that waits
// for objects or hooks looks again after deletionPoll. One held by a failed delete
// hook is a failure that is not transient: nothing changes until a forced /sync or an
// edit to deletionPolicy Orphan, both events that start a reconcile, so it is checked
// again at the next periodic reconcile, as HookFailed is outside a deletion
// (docs/sync-policy.md): after spec.syncPolicy.interval, else at the informer resync
// (decision 0173: it was every deletionPoll).
func deletionRequeue(p deletionProgress, interval time.Duration) reconcile.Result {
	switch p {
	case deletionWaiting:
		return reconcile.Result{RequeueAfter: deletionPoll}
	case deletionHeld:
		return reconcile.Result{RequeueAfter: interval}
	}
	return reconcile.Result{}
}

// reconcileDelete is step 1: with deletionPolicy Delete, delete what the inventory
// lists (highest sync wave first) and wait until it is gone; then delete the Renders and
// the ReleaseInventory and drop the finalizers. With Orphan, the objects stay.
//
// The ReleaseInventory carries the finalizer too, so that it outlives the Release's
// deletion even when something else deletes it first: the namespace controller, when
// the Release's namespace is deleted, deletes every object in it at once, and without
// its inventory the Release would not know what it applied elsewhere.
func (r *Reconciler) reconcileDelete(ctx context.Context, rel *v1.Release) (reconcile.Result, error) {
	key := policy.Key{Namespace: rel.Namespace, Name: rel.Name}
	if !controllerutil.ContainsFinalizer(rel, v1.Finalizer) {
		r.forget(key)
		return reconcile.Result{}, nil
	}
	logger := logr.FromContextOrDiscard(ctx)
	if rel.Spec.DeletionPolicy != v1.DeletionPolicyOrphan {
		progress, err := r.deleteApplied(ctx, rel)
		if err != nil {
			return r.deletionFailed(ctx, rel, err)
		}
		if progress == deletionWaiting {
			// Objects terminating or delete hooks running: a wait, not a failure;
			// it resets the count, as a hold does.
			r.failures.Reset(key)
		}
		if progress != deletionDone {
			return deletionRequeue(progress, syncPolicy(rel.Spec.SyncPolicy).Interval), nil
		}
	}

	logger.Info("Deleting the Renders and the ReleaseInventory, then removing the finalizer")
	if err := store.DeleteRenders(ctx, r.client, rel.Namespace, rel.Name); err != nil {
		return r.deletionFailed(ctx, rel, err)
	}
	if err := r.deleteInventory(ctx, client.ObjectKeyFromObject(rel)); err != nil {
		return r.deletionFailed(ctx, rel, err)
	}
	if err := r.patchFinalizer(ctx, rel, controllerutil.RemoveFinalizer); err != nil && !apierrors.IsNotFound(err) {
		return r.deletionFailed(ctx, rel, fmt.Errorf("remove the finalizer of Release %s/%s: %w", rel.Namespace, rel.Name, err))
	}
	r.forget(key)
	return reconcile.Result{}, nil
}

// deletionFailed reports a deletion that err stopped (deletionFailure: ClusterNotReady
// or DeleteFailed) in the Release's conditions, counts it and retries it with the
// Release's retryBackoff. A cancelled context (the controller stops) is no failure.
func (r *Reconciler) deletionFailed(ctx context.Context, rel *v1.Release, err error) (reconcile.Result, error) {
	if ctx.Err() != nil {
		return reconcile.Result{}, err
	}
	res := deletionFailure(rel, err)
	logr.FromContextOrDiscard(ctx).Error(err, "The deletion cannot go on", "reason", res.Reason)
	return r.reportFailure(ctx, rel, res)
}

// deleteApplied deletes what the Release applied, and its hook Jobs, and says where
// the deletion stands: deletionDone once none of the applied objects is left (the hook Jobs are not waited for: a Job deleted
// with background propagation is gone at once, and the garbage collector removes its
// pods).
func (r *Reconciler) deleteApplied(ctx context.Context, rel *v1.Release) (deletionProgress, error) {
	inv, err := r.currentInventory(ctx, rel)
	if err != nil {
		return deletionWaiting, err
	}
	if inv.ResourceVersion == "" {
		// No inventory: nothing was applied, and no hook ran (the first hook Job of a
		// Release creates its inventory).
		return deletionDone, nil
	}
	target, err := r.clusters.Resolve(ctx, rel)
	if err != nil {
		nr := notReady(err)
		if nr.Reason == v1.ReasonServiceAccountNotFound {
			// Nobody may act for the Release any more (its namespace is being deleted,
			// say): convoy does not delete with its own rights what the Release applied
			// with the ServiceAccount's. The objects stay, as with deletionPolicy Orphan.
			r.events.Eventf(rel, nil, corev1.EventTypeWarning, v1.ReasonServiceAccountNotFound, "Delete",
				"Leaving what the Release applied in place: %s", nr.Message)
			return deletionDone, nil
		}
		r.events.Eventf(rel, nil, corev1.EventTypeWarning, nr.Reason, "Delete",
			"Cannot delete what the Release applied: %s", nr.Message)
		return deletionWaiting, err
	}
	dh, err := r.newDeletionHooks(ctx, rel, target, inv)
	if err != nil {
		return deletionWaiting, err
	}
	if dh != nil {
		if stop, err := dh.step(ctx, v1.HookPreApply); err != nil {
			return deletionWaiting, err
		} else if stop != nil {
			return progressOf(stop), nil
		}
	}
	applier := apply.New(target.Client, r.applyOpts)
	if err := applier.DeleteHookJobs(ctx, apply.Owner{Name: rel.Name, Namespace: rel.Namespace}, render.TargetNamespace(rel), dh.jobs()); err != nil {
		r.events.Eventf(rel, nil, corev1.EventTypeWarning, v1.ReasonDeleteFailed, "Delete",
			"Cannot delete the hook Jobs of the Release: %v", err)
		return deletionWaiting, err
	}
	// What the renders the Release applied or was applying say to keep stays, also
	// when the object on the target lost the annotation.
	refs := []string{inv.RenderRef}
	if ls := rel.Status.LastSuccessful; ls != nil {
		refs = append(refs, ls.RenderRef)
	}
	if rs := rel.Status.Render; rs != nil {
		refs = append(refs, rs.Ref)
	}
	keep, err := r.renderedKeeps(ctx, rel, refs...)
	if err != nil {
		return deletionWaiting, err
	}
	// The chart's hook objects go too, but those a post-delete hook still needs.
	hookObjects, err := r.hookObjects(ctx, rel, refs...)
	if err != nil {
		return deletionWaiting, err
	}
	for _, h := range dh.postDeleteObjects() {
		hookObjects = slices.DeleteFunc(hookObjects, func(o v1.InventoryObject) bool {
			return o.Kind == h.Object.GetKind() && o.Namespace == h.Object.GetNamespace() && o.Name == h.Object.GetName()
		})
	}
	objects := append(slices.Clip(inv.Objects), hookObjects...)
	res := &apply.DeleteResult{Gone: true}
	if len(objects) > 0 {
		logr.FromContextOrDiscard(ctx).Info("Deleting what the Release applied", "objects", len(objects))
		res, err = applier.Delete(ctx, apply.DeleteInput{
			Release:   apply.Owner{Name: rel.Name, Namespace: rel.Namespace},
			Inventory: objects,
			Policy:    rel.Spec.DeletionPolicy,
			Keep:      keep,
		})
		if err != nil {
			r.events.Eventf(rel, nil, corev1.EventTypeWarning, v1.ReasonDeleteFailed, "Delete",
				"Cannot delete what the Release applied: %v", err)
			return deletionWaiting, err
		}
	}
	if res.Gone && dh != nil {
		if stop, err := dh.step(ctx, v1.HookPostApply); err != nil {
			return deletionWaiting, err
		} else if stop != nil {
			return progressOf(stop), nil
		}
		if err := dh.deleteLeftovers(ctx); err != nil {
			return deletionWaiting, err
		}
	}
	if res.Gone {
		r.reportKept(ctx, rel, "Delete", res.Kept)
		return deletionDone, nil
	}
	if waited := r.clock.Since(rel.DeletionTimestamp.Time); waited > r.deletionWarnAfter {
		r.events.Eventf(rel, nil, corev1.EventTypeWarning, "DeletionWaiting", "Delete",
			"%d objects the Release applied are still being deleted; the finalizer stays until they are gone.",
			len(res.Remaining))
	}
	return deletionWaiting, nil
}

// deleteInventory removes the finalizer of the ReleaseInventory key and deletes it.
func (r *Reconciler) deleteInventory(ctx context.Context, key client.ObjectKey) error {
	inv, err := store.GetInventory(ctx, r.apiReader, key)
	if inv == nil || err != nil {
		return err
	}
	if err := store.RemoveInventoryFinalizer(ctx, r.client, inv); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("remove the finalizer of ReleaseInventory %s: %w", key, err)
	}
	return store.DeleteInventory(ctx, r.client, inv)
}

// releaseOrphanedInventory lets go of the ReleaseInventory of a Release that is gone
// without the controller's deletion (its finalizer was removed by hand): the garbage
// collector deletes it then, as its owner is gone. The Release is read from the API
// server first, so that a Release the cache has not seen yet keeps its inventory.
func (r *Reconciler) releaseOrphanedInventory(ctx context.Context, key client.ObjectKey) error {
	inv, err := store.GetInventory(ctx, r.apiReader, key)
	if inv == nil || err != nil || !controllerutil.ContainsFinalizer(inv, v1.Finalizer) {
		return err
	}
	err = r.apiReader.Get(ctx, key, &v1.Release{})
	if err == nil {
		return nil
	}
	if !apierrors.IsNotFound(err) {
		return fmt.Errorf("read the Release %s: %w", key, err)
	}
	logr.FromContextOrDiscard(ctx).Info("The Release is gone without its deletion: removing the finalizer of its ReleaseInventory", "release", key)
	if err := store.RemoveInventoryFinalizer(ctx, r.client, inv); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("remove the finalizer of ReleaseInventory %s: %w", key, err)
	}
	return nil
}
