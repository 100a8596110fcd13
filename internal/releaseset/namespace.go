package releaseset

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/hostmanager"
	"kumodo.io/convoy/internal/policy"
)

// checkNamespace says whether set has outlived the namespace it was created in
// (policy.OutlivedNamespace, as for a Release: the namespace controller finalized the
// namespace on a discovery without convoy's API and left the set in storage) and, on a
// set created before convoy recorded its namespace's UID, records it when the set
// provably belongs to its namespace (policy.NamespaceUIDToRecord), once. Left alone,
// a set that outlived its namespace would create its Releases again in the next
// namespace of its name, each recording that namespace's UID. The namespace is read
// from the cache; either action is taken only on what the API server says (the cache
// may still hold an earlier namespace of that name, or not yet one just created).
func (r *Reconciler) checkNamespace(ctx context.Context, set *v1.ReleaseSet) (bool, error) {
	stored := policy.Stored{NamespaceUID: types.UID(set.Annotations[v1.AnnotationNamespaceUID]), Created: set.CreationTimestamp.Time}
	acts := func(ns policy.Namespace) bool {
		return policy.OutlivedNamespace(stored, ns) || policy.NamespaceUIDToRecord(stored, ns) != ""
	}
	now, err := hostmanager.Namespace(ctx, r.client, set.Namespace)
	if err == nil && acts(now) {
		now, err = hostmanager.Namespace(ctx, r.apiReader, set.Namespace)
	}
	if err != nil {
		return false, fmt.Errorf("read namespace %s of ReleaseSet %s/%s: %w", set.Namespace, set.Namespace, set.Name, err)
	}
	if policy.OutlivedNamespace(stored, now) {
		return true, r.deleteOutlived(ctx, set, stored, now)
	}
	if uid := policy.NamespaceUIDToRecord(stored, now); uid != "" {
		ctrllog.FromContext(ctx).Info("Recording the UID of the ReleaseSet's namespace", "namespaceUID", uid)
		orig := set.DeepCopy()
		metav1.SetMetaDataAnnotation(&set.ObjectMeta, v1.AnnotationNamespaceUID, string(uid))
		if err := r.client.Patch(ctx, set, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
			return false, fmt.Errorf("record the UID of namespace %s on ReleaseSet %s/%s: %w", set.Namespace, set.Namespace, set.Name, err)
		}
	}
	return false, nil
}

// deleteOutlived deletes set, which outlived its namespace: the garbage collector then
// deletes its Releases (which outlived it too, and which the Release controller deletes
// in any case) with what they applied. The precondition keeps a set created since, of
// the same name, from being deleted.
func (r *Reconciler) deleteOutlived(ctx context.Context, set *v1.ReleaseSet, stored policy.Stored, ns policy.Namespace) error {
	msg := fmt.Sprintf("Deleting the ReleaseSet: %s, and its namespace %s has been deleted since "+
		"(the namespace controller did not delete it, most likely because convoy's API was not in discovery then).",
		policy.HowOutlived(stored, ns), set.Namespace)
	ctrllog.FromContext(ctx).Info(msg)
	r.events.Eventf(set, nil, corev1.EventTypeWarning, v1.EventOutlivedNamespace, "Delete", "%s", msg)
	err := r.client.Delete(ctx, set, client.Preconditions{UID: &set.UID})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete ReleaseSet %s/%s, which outlived its namespace: %w", set.Namespace, set.Name, err)
	}
	return nil
}
