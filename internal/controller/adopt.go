package controller

import (
	"context"
	"slices"

	"github.com/go-logr/logr"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/apply"
)

// adoptLabelled makes inv list every object of the target that convoy applied for
// the Release (its labels and convoy's field manager: apply.Labelled), before the
// Release's first prune since this controller started and before any prune of an
// inventory made anew (none existed: convoy's storage lost, or the Release re-applied
// after a fresh etcd). After a restore from an older backup the inventory misses what
// later applies added; pruning from it would orphan those objects. The controller is
// restarted after a restore (docs/operations/backup.md), so its first prune of each Release
// looks. It returns the inventory with the adopted objects (written), or inv
// unchanged when there was nothing to adopt.
//
// What is listed: every kind the target serves that can be listed and deleted
// (discovery, cached per target), namespaced kinds in the namespaces that the render,
// the inventory and the Release name, cluster-scoped kinds across the cluster; one
// LIST of metadata with the Release's label selector each. That is about sixty LISTs
// once per Release and controller start, none after it. A Release new to its target
// (its inventory made in this reconcile, every object of the render created by the
// apply) has nothing to adopt and lists nothing; a new multi-wave Release, whose
// first prune comes after its first apply, lists once.
func (r *Reconciler) adoptLabelled(ctx context.Context, st *state, applier *apply.Applier, inv *v1.ReleaseInventory, renderRef string, render []v1.InventoryObject, created bool, changes []apply.Change) (*v1.ReleaseInventory, error) {
	key := releaseKey(st.rel)
	if _, done := r.adopted.get(key, st.rel.UID); done && !created {
		return inv, nil
	}
	if created && len(changes) == len(render) && !slices.ContainsFunc(changes, func(c apply.Change) bool { return c.Action != apply.Created }) {
		r.adopted.put(key, st.rel.UID, struct{}{})
		return inv, nil
	}
	d, err := st.target.Discovery()
	if err != nil {
		return inv, err
	}
	namespaces := []string{st.rel.Namespace}
	if st.rel.Spec.TargetNamespace != "" {
		namespaces = append(namespaces, st.rel.Spec.TargetNamespace)
	}
	for _, list := range [][]v1.InventoryObject{render, inv.Objects} {
		for _, e := range list {
			if e.Namespace != "" {
				namespaces = append(namespaces, e.Namespace)
			}
		}
	}
	slices.Sort(namespaces)
	namespaces = slices.Compact(namespaces)
	owner := apply.Owner{Name: st.rel.Name, Namespace: st.rel.Namespace}
	labelled, err := applier.Labelled(ctx, owner, apply.ListableKinds(d.Resources), namespaces)
	if err != nil {
		return inv, err
	}
	adopted := apply.Adoptions(inv.Objects, labelled)
	if len(adopted) > 0 {
		refs := make([]string, 0, len(adopted))
		for _, e := range adopted {
			refs = append(refs, apply.Describe(e.ObjectReference))
		}
		logr.FromContextOrDiscard(ctx).Info("Adopting the Release's labelled objects that its inventory misses", "objects", refs)
		if inv, err = r.writeInventory(ctx, st.rel, inv, renderRef, nil, apply.Merge(inv.Objects, adopted)); err != nil {
			return inv, err
		}
	}
	r.adopted.put(key, st.rel.UID, struct{}{})
	return inv, nil
}
