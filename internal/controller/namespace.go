package controller

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/hostmanager"
	"kumodo.io/convoy/internal/policy"
)

// checkNamespace says whether rel has outlived the namespace it was created in
// (policy.OutlivedNamespace) and, on a Release created before convoy recorded its
// namespace's UID, records it when the Release provably belongs to its namespace
// (policy.NamespaceUIDToRecord), once. The namespace is read from the cache; either
// action is taken only on what the API server says (the cache may still hold an
// earlier namespace of that name, after a watch broke, or not yet one just created).
func (r *Reconciler) checkNamespace(ctx context.Context, rel *v1.Release) (outlived bool, ns policy.Namespace, err error) {
	stored := storedIn(rel)
	ns, err = readNamespace(ctx, r.client, r.apiReader, rel.Namespace, func(ns policy.Namespace) bool {
		return policy.OutlivedNamespace(stored, ns) || policy.NamespaceUIDToRecord(stored, ns) != ""
	})
	if err != nil {
		return false, ns, fmt.Errorf("read namespace %s of Release %s/%s: %w", rel.Namespace, rel.Namespace, rel.Name, err)
	}
	if policy.OutlivedNamespace(stored, ns) {
		return true, ns, nil
	}
	if uid := policy.NamespaceUIDToRecord(stored, ns); uid != "" {
		log.FromContext(ctx).Info("Recording the UID of the Release's namespace", "namespaceUID", uid)
		orig := rel.DeepCopy()
		metav1.SetMetaDataAnnotation(&rel.ObjectMeta, v1.AnnotationNamespaceUID, string(uid))
		if err := r.client.Patch(ctx, rel, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
			return false, ns, fmt.Errorf("record the UID of namespace %s on Release %s/%s: %w", rel.Namespace, rel.Namespace, rel.Name, err)
		}
		r.writes.record(policy.Key{Namespace: rel.Namespace, Name: rel.Name}, rel.ResourceVersion)
	}
	return false, ns, nil
}

// errOutlived ends a reconcile whose Release was found, just before its first write
// to the target, to have outlived its namespace, and was deleted (recheckGates).
var errOutlived = errors.New("the Release outlived its namespace and was deleted")

// recheckGates reads again, just before the first write of a reconcile to the target
// (a PreApply hook, or an apply the dry run found changes in), what let the apply
// through at the start of the reconcile and may have changed during its render, hooks
// and dry run, which can take seconds on a slow target:
//   - the namespace: a Release that outlived it (deleted and created again meanwhile)
//     applies nothing more, and is deleted (errOutlived);
//   - the cluster wave: a Release of a lower cluster wave that is no longer Applied
//     and Healthy holds the apply, as the decision would have held it at the start
//     (the Result to report).
//
// Both are read from the cache, as at the start: a write that remains possible is one
// that races a change the cache has not seen yet (milliseconds, not the length of a
// reconcile). Steady state does not call it (the dry run finds nothing to write).
func (r *Reconciler) recheckGates(ctx context.Context, st *state, in policy.Input) (*policy.Result, error) {
	rel := st.rel
	stored := storedIn(rel)
	ns, err := readNamespace(ctx, r.client, r.apiReader, rel.Namespace, func(ns policy.Namespace) bool {
		return policy.OutlivedNamespace(stored, ns)
	})
	if err != nil {
		return nil, fmt.Errorf("read namespace %s of Release %s/%s: %w", rel.Namespace, rel.Namespace, rel.Name, err)
	}
	if policy.OutlivedNamespace(stored, ns) {
		if err := r.deleteOutlived(ctx, rel, ns); err != nil {
			return nil, err
		}
		return nil, errOutlived
	}
	others, err := sameCluster(ctx, r.waves, rel)
	if err != nil {
		return nil, fmt.Errorf("list the Releases of the cluster of %s/%s: %w", rel.Namespace, rel.Name, err)
	}
	blocker := clusterWaveBlocker(rel, others)
	if blocker == in.ClusterWaveBlocker {
		return nil, nil
	}
	in.ClusterWaveBlocker = blocker
	if plan := policy.Decide(in); plan.Stop != nil && plan.Stop.Reason == v1.ReasonWaitingForClusterWave {
		log.FromContext(ctx).Info("Holding the apply: a Release of a lower cluster wave stopped being ready during the reconcile", "blocker", blocker)
		return plan.Stop, nil
	}
	return nil, nil
}

// readNamespace reads the namespace name from the cache c and, when acts says that
// what the cache holds would make the caller act, from the API server (apiReader).
func readNamespace(ctx context.Context, c, apiReader client.Reader, name string, acts func(policy.Namespace) bool) (policy.Namespace, error) {
	ns, err := hostmanager.Namespace(ctx, c, name)
	if err != nil || !acts(ns) {
		return ns, err
	}
	return hostmanager.Namespace(ctx, apiReader, name)
}

// storedIn is what obj (a Release or a ReleaseSet) says of the namespace it was created in.
func storedIn(obj metav1.Object) policy.Stored {
	return policy.Stored{
		NamespaceUID: types.UID(obj.GetAnnotations()[v1.AnnotationNamespaceUID]),
		Created:      obj.GetCreationTimestamp().Time,
	}
}

// deleteOutlived deletes rel, which has outlived its namespace (ns is what is there
// now), as the namespace's deletion meant: its finalizer then deletes its objects, as
// for any deletion. The precondition keeps a Release created since, of the same name,
// from being deleted.
func (r *Reconciler) deleteOutlived(ctx context.Context, rel *v1.Release, ns policy.Namespace) error {
	msg := fmt.Sprintf("Deleting the Release: %s, and its namespace %s has been deleted since "+
		"(the namespace controller did not delete it, most likely because convoy's API was not in discovery then).",
		policy.HowOutlived(storedIn(rel), ns), rel.Namespace)
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
