package controller

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/release"
)

// outlivedNamespace says whether rel has outlived the namespace it was created in
// (release.OutlivedNamespace): the namespace is read from the cache, and a namespace
// missing there is looked for on the API server before it counts as gone (the cache
// may not have seen a namespace just created).
func (r *Reconciler) outlivedNamespace(ctx context.Context, rel *v1.Release) (bool, error) {
	ns := &corev1.Namespace{}
	key := client.ObjectKey{Name: rel.Namespace}
	err := r.client.Get(ctx, key, ns)
	if apierrors.IsNotFound(err) {
		err = r.apiReader.Get(ctx, key, ns)
	}
	switch {
	case apierrors.IsNotFound(err):
		return release.OutlivedNamespace(rel.CreationTimestamp.Time, release.Namespace{}), nil
	case err != nil:
		return false, fmt.Errorf("read namespace %s of Release %s/%s: %w", rel.Namespace, rel.Namespace, rel.Name, err)
	}
	return release.OutlivedNamespace(rel.CreationTimestamp.Time, release.Namespace{
		Found: true, Created: ns.CreationTimestamp.Time, Terminating: ns.DeletionTimestamp != nil,
	}), nil
}

// deleteOutlived deletes rel, which has outlived its namespace, as the namespace's
// deletion meant: its finalizer then deletes its objects, as for any deletion. The
// precondition keeps a Release created since, of the same name, from being deleted.
func (r *Reconciler) deleteOutlived(ctx context.Context, rel *v1.Release) error {
	msg := fmt.Sprintf("Deleting the Release: it was created at %s, and its namespace %s has been deleted since "+
		"(the namespace controller did not delete it, most likely because convoy's API was not in discovery then).",
		rel.CreationTimestamp.UTC().Format("2006-01-02T15:04:05Z07:00"), rel.Namespace)
	log.FromContext(ctx).Info(msg)
	r.events.Eventf(rel, nil, corev1.EventTypeWarning, v1.EventOutlivedNamespace, "Delete", "%s", msg)
	err := r.client.Delete(ctx, rel, client.Preconditions{UID: &rel.UID})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete Release %s/%s, which outlived its namespace: %w", rel.Namespace, rel.Name, err)
	}
	return nil
}

// namespaceHandler maps the creation or deletion of a namespace to the Releases
// stored in it, from the cache: a Release that outlived an earlier namespace of that
// name is deleted at once, not at its next reconcile.
func namespaceHandler(c client.Reader) handler.EventHandler {
	return handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, obj client.Object) []reconcile.Request {
		var list v1.ReleaseList
		if err := c.List(ctx, &list, client.InNamespace(obj.GetName()), client.UnsafeDisableDeepCopy); err != nil {
			log.FromContext(ctx).Error(err, "Cannot list the Releases of a namespace created or deleted", "namespace", obj.GetName())
			return nil
		}
		reqs := make([]reconcile.Request, 0, len(list.Items))
		for i := range list.Items {
			reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: obj.GetName(), Name: list.Items[i].Name}})
		}
		return reqs
	})
}

// namespacePredicate passes the creations and deletions of namespaces only.
func namespacePredicate() predicate.Predicate {
	return predicate.Funcs{
		CreateFunc:  func(event.CreateEvent) bool { return true },
		DeleteFunc:  func(event.DeleteEvent) bool { return true },
		UpdateFunc:  func(event.UpdateEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}
