package release

import (
	"context"
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/apiserver/registry"
	"kumodo.io/convoy/internal/apiserver/validation"
)

// strategy is the main resource's: writes keep status and pin from storage, and only a
// spec change bumps the generation. mutations, lifecycle, labels and annotations
// (including the two sync annotations) change freely.
type strategy struct {
	registry.Strategy
	validation validation.ReleaseOptions
}

func newStrategy(typer runtime.ObjectTyper) strategy {
	return strategy{Strategy: registry.NewStrategy(typer)}
}

func (strategy) NamespaceScoped() bool { return true }

// GetResetFields names the fields a main-resource write never sets, for server-side apply.
func (strategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return registry.ResetFields("status", "pin")
}

func (strategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	r := obj.(*convoyv1alpha1.Release)
	r.Status = convoyv1alpha1.ReleaseStatus{}
	r.Pin = nil // written only through /pin
	r.Generation = 1
	// Every Release carries convoy's finalizer from its creation, so that the
	// controller need not write the Release once more before its first apply
	// (it still adds the finalizer where someone removed it).
	if !slices.Contains(r.Finalizers, convoyv1alpha1.Finalizer) {
		r.Finalizers = append(r.Finalizers, convoyv1alpha1.Finalizer)
	}
}

// PrepareForUpdate keeps status and pin from storage and bumps the generation on a spec
// change. On a switch from automatic to manual (spec.syncPolicy.automatic true before,
// false or unset after) it also drops the sync requests made before the switch:
// sync-requested-at, sync-force-requested-at and sync-requested-render, each where the
// update leaves it equal to the stored value. In automatic mode a /sync is a
// reconcile now, not an approval; kept, such a request would be pending in manual
// mode and apply the next render nobody approved. A value the same update changes is
// a request made with the switch, and kept. No request is lost: a /sync after the
// switch writes sync-requested-at anew, later than status.lastHandledSyncAt
// (NextSyncRequest), so it is pending — the approval the manual mode waits for. The
// switch does not write status.lastHandledSyncAt, which convoy sets only after a
// successful apply. Every main-resource write comes here: PUT, the merge and JSON
// patches, server-side apply (kubectl apply included); /sync and the subresources,
// whose strategies have their own PrepareForUpdate and never change spec, do not.
func (strategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	r, oldR := obj.(*convoyv1alpha1.Release), old.(*convoyv1alpha1.Release)
	r.Status = oldR.Status
	r.Pin = oldR.Pin
	// BeforeUpdate has set the generation to the stored one.
	if !registry.Semantic.DeepEqual(r.Spec, oldR.Spec) {
		r.Generation = oldR.Generation + 1
	}
	if automatic(oldR) && !automatic(r) {
		dropRequestsBefore(r, oldR)
	}
}

// syncRequestAnnotations are the annotations of a sync request.
var syncRequestAnnotations = []string{
	convoyv1alpha1.AnnotationSyncRequestedAt, convoyv1alpha1.AnnotationSyncForceRequestedAt,
	convoyv1alpha1.AnnotationSyncRequestedRender,
}

// dropRequestsBefore removes from r each sync request annotation whose value is the
// one old holds. It copies the annotation map first: r may share it with old.
func dropRequestsBefore(r, old *convoyv1alpha1.Release) {
	var annotations map[string]string
	for _, key := range syncRequestAnnotations {
		value, ok := r.Annotations[key]
		if stored, was := old.Annotations[key]; !ok || !was || value != stored {
			continue
		}
		if annotations == nil {
			annotations = maps.Clone(r.Annotations)
		}
		delete(annotations, key)
	}
	if annotations != nil {
		r.Annotations = annotations
	}
}

func automatic(r *convoyv1alpha1.Release) bool {
	return r.Spec.SyncPolicy.Automatic != nil && *r.Spec.SyncPolicy.Automatic
}

func (s strategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return validation.Release(obj.(*convoyv1alpha1.Release), s.validation)
}

func (s strategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return validation.ReleaseUpdate(obj.(*convoyv1alpha1.Release), old.(*convoyv1alpha1.Release), s.validation)
}
