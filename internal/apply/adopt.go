package apply

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"kumodo.io/convoy/api/v1alpha1"
)

// Recovery after convoy's storage was lost or restored from an older backup: the
// ReleaseInventory may be missing, or miss what later applies added. Every object
// convoy applies carries its Release's labels (SetReleaseLabels), so the objects the
// target holds for a Release are found by those labels and adopted into the
// inventory before the prune: what the render lacks is then pruned as the chart's
// leftovers, and nothing is orphaned.

// ListKind is a kind the target serves that can be listed and deleted.
type ListKind struct {
	GVK        schema.GroupVersionKind
	Namespaced bool
}

// ListableKinds returns the kinds of resources (one version per group and kind, the
// first discovery names) that support list and delete: those an apply may have
// made and a prune may remove. Subresources are left out.
func ListableKinds(resources []*metav1.APIResourceList) []ListKind {
	seen := map[schema.GroupKind]bool{}
	var out []ListKind
	for _, list := range resources {
		gv, err := schema.ParseGroupVersion(list.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range list.APIResources {
			if strings.Contains(r.Name, "/") || !slices.Contains(r.Verbs, "list") || !slices.Contains(r.Verbs, "delete") {
				continue
			}
			gk := schema.GroupKind{Group: gv.Group, Kind: r.Kind}
			if seen[gk] {
				continue
			}
			seen[gk] = true
			out = append(out, ListKind{GVK: gv.WithKind(r.Kind), Namespaced: r.Namespaced})
		}
	}
	return out
}

// Adoptions returns the labelled objects that inventory does not list (by group,
// kind, namespace and name), to be merged into it (Merge) before a prune.
func Adoptions(inventory, labelled []v1alpha1.InventoryObject) []v1alpha1.InventoryObject {
	listed := make(map[identity]bool, len(inventory))
	for _, e := range inventory {
		listed[identityOf(e.ObjectReference)] = true
	}
	var out []v1alpha1.InventoryObject
	for _, e := range labelled {
		if !listed[identityOf(e.ObjectReference)] {
			out = append(out, e)
		}
	}
	return out
}

// Labelled lists the target's objects of kinds that convoy applied for owner
// (appliedFor): namespaced kinds in each of namespaces, cluster-scoped kinds across
// the cluster (one LIST of object metadata with the Release's label selector each). A kind
// the caller may not list (Forbidden), or no longer served, is skipped: what cannot
// be listed could not have been applied with the same identity.
func (a *Applier) Labelled(ctx context.Context, owner Owner, kinds []ListKind, namespaces []string) ([]v1alpha1.InventoryObject, error) {
	var lists []kindIn
	for _, k := range kinds {
		if !k.Namespaced {
			lists = append(lists, kindIn{kind: k})
			continue
		}
		for _, ns := range namespaces {
			lists = append(lists, kindIn{kind: k, namespace: ns})
		}
	}
	selector := labels.SelectorFromSet(v1alpha1.ReleaseSelector(owner.Name, owner.Namespace))
	var out []v1alpha1.InventoryObject
	err := a.listMetadata(ctx, lists, selector, fmt.Sprintf("of Release %s/%s", owner.Namespace, owner.Name), func(k ListKind, o *metav1.PartialObjectMetadata) {
		if appliedFor(&o.ObjectMeta, owner) {
			out = append(out, v1alpha1.InventoryObject{ObjectReference: objectRef(k, o)})
		}
	})
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(out, compareEntries)
	return out, nil
}

// kindIn is one LIST of listMetadata: a kind, in a namespace ("": across the cluster).
type kindIn struct {
	kind      ListKind
	namespace string
}

// listMetadata runs one LIST of object metadata with selector for each of lists,
// a.opts.Concurrency at a time, and calls keep for every object listed, one call at a
// time. A kind the caller may not list (Forbidden), or no longer served, is skipped:
// what cannot be listed could not have been applied with the same identity. what
// says, in an error, whose objects were listed ("of Release ns/name").
func (a *Applier) listMetadata(ctx context.Context, lists []kindIn, selector labels.Selector, what string, keep func(ListKind, *metav1.PartialObjectMetadata)) error {
	var mu sync.Mutex
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(a.opts.Concurrency)
	for _, in := range lists {
		g.Go(func() error {
			var l metav1.PartialObjectMetadataList
			l.SetGroupVersionKind(in.kind.GVK.GroupVersion().WithKind(in.kind.GVK.Kind + "List"))
			opts := []client.ListOption{client.MatchingLabelsSelector{Selector: selector}}
			if in.namespace != "" {
				opts = append(opts, client.InNamespace(in.namespace))
			}
			err := a.client.List(ctx, &l, opts...)
			switch {
			case apierrors.IsForbidden(err), apierrors.IsNotFound(err), apierrors.IsMethodNotSupported(err):
				return nil
			case err != nil:
				return fmt.Errorf("list the %s objects %s: %w", in.kind.GVK.Kind, what, err)
			}
			mu.Lock()
			defer mu.Unlock()
			for i := range l.Items {
				keep(in.kind, &l.Items[i])
			}
			return nil
		})
	}
	return g.Wait()
}

// objectRef is the reference of o, an object of kind k.
func objectRef(k ListKind, o *metav1.PartialObjectMetadata) v1alpha1.ObjectReference {
	return v1alpha1.ObjectReference{Group: k.GVK.Group, Version: k.GVK.Version, Kind: k.GVK.Kind, Namespace: o.Namespace, Name: o.Name}
}

// appliedFor says whether convoy applied the object for owner: it carries owner's
// Release labels, convoy's field manager applied it, it is no hook object (LabelHook:
// the hook runs own those) and it is not being deleted. The field manager tells
// convoy's objects from those that copy the labels of one of them: the EndpointSlices
// and Endpoints of a Service carry the Service's labels.
func appliedFor(o *metav1.ObjectMeta, owner Owner) bool {
	if o.DeletionTimestamp != nil || o.Labels[v1alpha1.LabelHook] != "" ||
		!v1alpha1.HasReleaseLabels(o.Labels, o.Annotations, owner.Name, owner.Namespace) {
		return false
	}
	return slices.ContainsFunc(o.ManagedFields, func(f metav1.ManagedFieldsEntry) bool {
		return f.Manager == v1alpha1.FieldManager && f.Operation == metav1.ManagedFieldsOperationApply
	})
}
