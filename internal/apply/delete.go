package apply

import (
	"context"
	"fmt"

	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"kumodo.io/convoy/api/v1alpha1"
)

// Owner names the Release on whose behalf objects are pruned or deleted. An
// object whose labels convoy.kumodo.io/release-name and
// convoy.kumodo.io/release-namespace do not both name it is left alone.
type Owner struct {
	Name      string
	Namespace string
}

// outcome is what deleteOne found or did.
type outcome int

const (
	// gone: the object is not on the target (or its kind is no longer served).
	gone outcome = iota
	// terminating: the object is being deleted (a finalizer holds it).
	terminating
	// skipped: the object is left alone on purpose.
	skipped
	// kept: the object says helm.sh/resource-policy: keep, live or as rendered;
	// it is left in place and let go of.
	kept
)

// deleteOne deletes one object unless it must be left alone: a CRD, an
// object annotated convoy.kumodo.io/prune: disabled, one that another
// Release has taken over, or one to keep (annotated helm.sh/resource-policy:
// keep on the target, or listed in keep because a render annotates it so). It
// reads the object first, deletes it by UID (so a replacement made meanwhile
// is not deleted), and reads it again to see whether it went at once.
func (a *Applier) deleteOne(ctx context.Context, owner Owner, ref v1alpha1.ObjectReference, keep map[identity]bool) (outcome, error) {
	if isCRD(ref.Group, ref.Kind) {
		return skipped, nil
	}
	live, err := a.get(ctx, ref)
	switch {
	case meta.IsNoMatchError(err), apierrors.IsNotFound(err):
		return gone, nil
	case err != nil:
		return 0, fmt.Errorf("read %s: %w", Describe(ref), err)
	}
	if live.GetAnnotations()[v1alpha1.AnnotationPrune] == v1alpha1.PruneDisabled {
		return skipped, nil
	}
	if !v1alpha1.HasReleaseLabels(live.GetLabels(), live.GetAnnotations(), owner.Name, owner.Namespace) {
		return skipped, nil
	}
	if keep[identityOf(ref)] || saysKeep(live) {
		return kept, nil
	}
	if live.GetDeletionTimestamp() != nil {
		return terminating, nil
	}
	uid := live.GetUID()
	err = a.client.Delete(ctx, live, client.PropagationPolicy(metav1.DeletePropagationBackground),
		client.Preconditions{UID: &uid})
	switch {
	case apierrors.IsNotFound(err):
		return gone, nil
	case err != nil:
		return 0, fmt.Errorf("delete %s: %w", Describe(ref), err)
	}
	if err := a.client.Get(ctx, client.ObjectKeyFromObject(live), live); apierrors.IsNotFound(err) {
		return gone, nil
	}
	return terminating, nil
}

// get reads the object ref names, at its inventory version or, when the
// target no longer serves that version, at any version it serves.
func (a *Applier) get(ctx context.Context, ref v1alpha1.ObjectReference) (*unstructured.Unstructured, error) {
	u := objectFor(ref)
	err := a.client.Get(ctx, client.ObjectKeyFromObject(u), u)
	if !meta.IsNoMatchError(err) {
		return u, err
	}
	mapping, err := a.client.RESTMapper().RESTMapping(gvkOf(ref).GroupKind())
	if err != nil {
		return nil, err
	}
	u = objectFor(ref)
	u.SetGroupVersionKind(mapping.GroupVersionKind)
	return u, a.client.Get(ctx, client.ObjectKeyFromObject(u), u)
}

type deleted struct {
	ref     v1alpha1.InventoryObject
	outcome outcome
	err     error
}

// deleteWave deletes the objects of one wave concurrently.
func (a *Applier) deleteWave(ctx context.Context, owner Owner, wave []v1alpha1.InventoryObject, keep map[identity]bool) []deleted {
	out := make([]deleted, len(wave))
	var g errgroup.Group
	g.SetLimit(a.opts.Concurrency)
	for i, ref := range wave {
		g.Go(func() error {
			o, err := a.deleteOne(ctx, owner, ref.ObjectReference, keep)
			out[i] = deleted{ref: ref, outcome: o, err: err}
			return nil
		})
	}
	_ = g.Wait()
	return out
}

// PruneInput is what a prune works on.
type PruneInput struct {
	// Release owns the objects.
	Release Owner
	// Inventory is the ReleaseInventory's object list.
	Inventory []v1alpha1.InventoryObject
	// Render is the render just applied (Entries or Plan.Entries).
	Render []v1alpha1.InventoryObject
	// Disabled is spec.prune false: delete nothing, and stop tracking what the
	// render dropped.
	Disabled bool
	// Keep are objects to keep whatever the target says: those that the
	// render which applied them annotates helm.sh/resource-policy: keep (Kept).
	// An object annotated so on the target is kept without being listed.
	Keep []v1alpha1.ObjectReference
}

// PruneResult is the outcome of a prune.
type PruneResult struct {
	// Deleted were deleted now (possibly still terminating) or found gone.
	Deleted []v1alpha1.InventoryObject
	// Skipped were left alone on purpose: prune disabled on the object, taken
	// over by another Release, CRDs; or every stale object when prune is disabled.
	Skipped []v1alpha1.InventoryObject
	// Kept were left in place because they say helm.sh/resource-policy: keep
	// (on the target or in PruneInput.Keep), and are no longer tracked.
	Kept []v1alpha1.InventoryObject
	// Failed could not be deleted; they stay in the inventory.
	Failed []v1alpha1.InventoryObject
	// Pending are in waves below a failure and were not tried; they stay in
	// the inventory.
	Pending []v1alpha1.InventoryObject
	// Inventory is what the ReleaseInventory lists after the prune: exactly
	// the render when the prune succeeded, plus Failed and Pending otherwise.
	Inventory []v1alpha1.InventoryObject
}

// Prune deletes what the inventory lists and the render lacks, highest wave
// first (deletes of one wave run concurrently; a wave is not waited for until
// its objects are gone). Objects annotated convoy.kumodo.io/prune: disabled,
// objects whose convoy labels name another Release, CRDs, and objects that say
// helm.sh/resource-policy: keep (Kept) are left alone and no longer tracked;
// objects already gone are fine. When a delete fails,
// the lower waves are not tried, so nothing is deleted before what depends
// on it. The error is an *Error with ReasonPruneFailed.
func (a *Applier) Prune(ctx context.Context, in PruneInput) (*PruneResult, error) {
	stale := Stale(in.Inventory, in.Render)
	res := &PruneResult{}
	if in.Disabled {
		res.Skipped = stale
		res.Inventory = AfterPrune(in.Inventory, in.Render, nil)
		return res, nil
	}
	keep := keepSet(in.Keep)
	var failures []objectError
	for _, wave := range byWaveDescending(stale) {
		if len(failures) > 0 {
			res.Pending = append(res.Pending, wave...)
			continue
		}
		for _, d := range a.deleteWave(ctx, in.Release, wave, keep) {
			switch {
			case d.err != nil:
				res.Failed = append(res.Failed, d.ref)
				failures = append(failures, objectError{ref: d.ref.ObjectReference, err: fmt.Errorf("prune: %w", d.err)})
			case d.outcome == skipped:
				res.Skipped = append(res.Skipped, d.ref)
			case d.outcome == kept:
				res.Kept = append(res.Kept, d.ref)
			default:
				res.Deleted = append(res.Deleted, d.ref)
			}
		}
	}
	res.Inventory = AfterPrune(in.Inventory, in.Render, append(append([]v1alpha1.InventoryObject(nil), res.Failed...), res.Pending...))
	return res, newError(v1alpha1.ReasonPruneFailed, failures)
}

// DeleteResult is the outcome of one step of a Release's deletion.
type DeleteResult struct {
	// Gone is true when nothing the deletion must remove is left on the
	// target: drop the finalizer. False: come back later (the caller bounds
	// the wait and warns when it is long).
	Gone bool
	// Deleted are gone (deleted now or before).
	Deleted []v1alpha1.InventoryObject
	// Skipped were left alone on purpose (same rules as Prune), or every
	// object with deletionPolicy Orphan.
	Skipped []v1alpha1.InventoryObject
	// Kept were left in place because they say helm.sh/resource-policy: keep
	// (on the target or in DeleteInput.Keep).
	Kept []v1alpha1.InventoryObject
	// Remaining are still there: terminating, failed, or in a lower wave
	// waiting for a higher one to be gone.
	Remaining []v1alpha1.InventoryObject
}

// DeleteInput is what the deletion of a Release works on.
type DeleteInput struct {
	// Release owns the objects.
	Release Owner
	// Inventory is the ReleaseInventory's object list.
	Inventory []v1alpha1.InventoryObject
	// Policy is the Release's deletionPolicy.
	Policy v1alpha1.DeletionPolicy
	// Keep are objects to keep whatever the target says: those that the
	// Release's renders annotate helm.sh/resource-policy: keep (Kept). An
	// object annotated so on the target is kept without being listed.
	Keep []v1alpha1.ObjectReference
}

// Delete deletes what a deleted Release applied, for deletionPolicy Delete:
// the inventory's objects, highest wave first, with the skips of Prune
// (objects that say helm.sh/resource-policy: keep stay, and are reported as
// Kept). A wave is deleted only once every higher wave is gone, so one call
// does as much as it can without waiting and Gone says whether the caller
// may drop the finalizer. With deletionPolicy Orphan it deletes nothing and
// reports Gone. The error is an *Error with ReasonPruneFailed.
func (a *Applier) Delete(ctx context.Context, in DeleteInput) (*DeleteResult, error) {
	res := &DeleteResult{}
	if in.Policy == v1alpha1.DeletionPolicyOrphan {
		res.Skipped = ReverseWaveOrder(in.Inventory)
		res.Gone = true
		return res, nil
	}
	keep := keepSet(in.Keep)
	var failures []objectError
	blocked := false
	for _, wave := range byWaveDescending(in.Inventory) {
		if blocked {
			res.Remaining = append(res.Remaining, wave...)
			continue
		}
		for _, d := range a.deleteWave(ctx, in.Release, wave, keep) {
			switch {
			case d.err != nil:
				failures = append(failures, objectError{ref: d.ref.ObjectReference, err: d.err})
				res.Remaining = append(res.Remaining, d.ref)
				blocked = true
			case d.outcome == skipped:
				res.Skipped = append(res.Skipped, d.ref)
			case d.outcome == kept:
				res.Kept = append(res.Kept, d.ref)
			case d.outcome == terminating:
				res.Remaining = append(res.Remaining, d.ref)
				blocked = true
			default:
				res.Deleted = append(res.Deleted, d.ref)
			}
		}
	}
	res.Gone = len(res.Remaining) == 0
	return res, newError(v1alpha1.ReasonPruneFailed, failures)
}
