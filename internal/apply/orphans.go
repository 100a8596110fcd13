package apply

import (
	"context"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"kumodo.io/convoy/api/v1alpha1"
)

// Orphans: after a restore from an older backup, the Releases created after the
// backup are gone, and so are their inventories; what they applied stays on the
// targets with their labels and nobody prunes it. AppliedObjects finds every object
// convoy applied on a target, Orphans keeps those whose Release does not exist, and
// DeleteOrphan deletes one. Nothing here runs on its own: kubectl convoy orphans lists
// them for the operator, who deletes them with --delete.

// LabelledObject is an object on a target that convoy applied for a Release: it carries the
// Release's labels and convoy's field manager applied it (appliedFor).
type LabelledObject struct {
	v1alpha1.ObjectReference
	// Release is the Release its labels name.
	Release Owner
	// UID and ResourceVersion are the object's when it was listed: DeleteOrphan
	// deletes it only if it is still that object, unchanged.
	UID             types.UID
	ResourceVersion string
	// LeftOnPurpose is set when the object says it is to be left alone:
	// convoy.kumodo.io/prune: disabled or helm.sh/resource-policy: keep.
	LeftOnPurpose bool
}

// AppliedObjects lists the objects of kinds that convoy applied for any Release,
// across the cluster (one LIST of object metadata per kind, selecting the objects
// labelled convoy.kumodo.io/release-name). Hook objects, objects being deleted and
// objects that only copy a Release's labels (not applied by convoy's field manager)
// are left out. A kind the caller may not list, or no longer served, is skipped.
func (a *Applier) AppliedObjects(ctx context.Context, kinds []ListKind) ([]LabelledObject, error) {
	selector := labels.NewSelector()
	for _, key := range []string{v1alpha1.LabelReleaseName, v1alpha1.LabelReleaseNamespace} {
		r, err := labels.NewRequirement(key, selection.Exists, nil)
		if err != nil {
			return nil, err
		}
		selector = selector.Add(*r)
	}
	lists := make([]kindIn, len(kinds))
	for i, k := range kinds {
		lists[i] = kindIn{kind: k}
	}
	var out []LabelledObject
	err := a.listMetadata(ctx, lists, selector, "that convoy applied", func(k ListKind, o *metav1.PartialObjectMetadata) {
		owner := Owner{
			Name:      v1alpha1.NameOfLabel(o.Labels, o.Annotations, v1alpha1.LabelReleaseName),
			Namespace: v1alpha1.NameOfLabel(o.Labels, o.Annotations, v1alpha1.LabelReleaseNamespace),
		}
		if !appliedFor(&o.ObjectMeta, owner) {
			return
		}
		out = append(out, LabelledObject{
			ObjectReference: objectRef(k, o),
			Release:         owner,
			UID:             o.UID,
			ResourceVersion: o.ResourceVersion,
			LeftOnPurpose:   leftOnPurpose(o.Annotations),
		})
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(x, y LabelledObject) int {
		return compareEntries(v1alpha1.InventoryObject{ObjectReference: x.ObjectReference}, v1alpha1.InventoryObject{ObjectReference: y.ObjectReference})
	})
	return out, nil
}

// leftOnPurpose says whether annotations ask that the object be left alone when its
// Release no longer wants it: convoy.kumodo.io/prune: disabled, or Helm's
// helm.sh/resource-policy: keep (compared as Helm does).
func leftOnPurpose(annotations map[string]string) bool {
	if annotations[v1alpha1.AnnotationPrune] == v1alpha1.PruneDisabled {
		return true
	}
	v, ok := annotations[resourcePolicyAnnotation]
	return ok && strings.EqualFold(strings.TrimSpace(v), keepPolicy)
}

// Orphans returns the objects of applied whose Release does not exist (exists says
// whether it does) and that are not left on purpose: nobody will prune them.
func Orphans(applied []LabelledObject, exists func(Owner) bool) []LabelledObject {
	var out []LabelledObject
	for _, o := range applied {
		if !o.LeftOnPurpose && !exists(o.Release) {
			out = append(out, o)
		}
	}
	return out
}

// DeleteOrphan deletes o if it is still the object that was listed, unchanged (its
// UID and resourceVersion as preconditions), with background propagation. It
// returns false, and no error, when the object is gone or changed in between (a
// Release applied it again, say): a changed object is left alone.
func (a *Applier) DeleteOrphan(ctx context.Context, o LabelledObject) (bool, error) {
	obj := &metav1.PartialObjectMetadata{}
	obj.SetGroupVersionKind(gvkOf(o.ObjectReference))
	obj.SetNamespace(o.Namespace)
	obj.SetName(o.Name)
	err := a.client.Delete(ctx, obj, client.PropagationPolicy(metav1.DeletePropagationBackground),
		client.Preconditions{UID: &o.UID, ResourceVersion: &o.ResourceVersion})
	switch {
	case apierrors.IsNotFound(err), apierrors.IsConflict(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("delete %s: %w", Describe(o.ObjectReference), err)
	}
	return true, nil
}
