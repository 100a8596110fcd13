package controller

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/apply"
	"kumodo.io/convoy/internal/render"
	"kumodo.io/convoy/internal/store"
)

// eventKept reports the objects that a prune or a deletion left in place and let go
// of, as helm.sh/resource-policy: keep asks.
const eventKept = "Kept"

// renderedKeeps returns the objects that the renders refs annotate
// helm.sh/resource-policy: keep, so that a prune or a deletion keeps them even when
// the object on the target lost the annotation (Helm's uninstall judges by the last
// release's manifests). A render whose Render object is gone or unreadable adds
// nothing: the target's annotation still counts.
func (r *Reconciler) renderedKeeps(ctx context.Context, rel *v1.Release, refs ...string) ([]v1.ObjectReference, error) {
	var out []v1.ObjectReference
	var seen []string
	for _, ref := range refs {
		if ref == "" || slices.Contains(seen, ref) {
			continue
		}
		seen = append(seen, ref)
		obj, err := store.GetRender(ctx, r.apiReader, rel.Namespace, rel.Name, ref)
		if err != nil {
			return nil, fmt.Errorf("cannot read the render %s to find the objects it keeps: %w", ref, err)
		}
		if obj == nil {
			continue
		}
		objs, _, err := render.DecodeManifests(obj.Manifests)
		if err != nil {
			logr.FromContextOrDiscard(ctx).Error(err, "Cannot read a Render to find the objects it keeps", "render", obj.Name)
			continue
		}
		out = append(out, apply.Kept(applyObjects(objs))...)
	}
	return out, nil
}

// reportKept records a Normal event naming the objects that action (Prune, Delete)
// left in place and let go of.
func (r *Reconciler) reportKept(ctx context.Context, rel *v1.Release, action string, kept []v1.InventoryObject) {
	if len(kept) == 0 {
		return
	}
	names := make([]string, 0, len(kept))
	for _, k := range kept {
		names = append(names, apply.Describe(k.ObjectReference))
	}
	logr.FromContextOrDiscard(ctx).Info("Leaving objects in place, as helm.sh/resource-policy: keep asks", "objects", names)
	r.events.Eventf(rel, nil, corev1.EventTypeNormal, eventKept, action,
		"Left in place, as helm.sh/resource-policy: keep asks, and no longer tracked: %s.", strings.Join(names, ", "))
}
