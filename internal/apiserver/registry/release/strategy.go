package release

import (
	"context"
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

func (strategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	r, oldR := obj.(*convoyv1alpha1.Release), old.(*convoyv1alpha1.Release)
	r.Status = oldR.Status
	r.Pin = oldR.Pin
	// BeforeUpdate has set the generation to the stored one.
	if !registry.Semantic.DeepEqual(r.Spec, oldR.Spec) {
		r.Generation = oldR.Generation + 1
	}
}

func (s strategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return validation.Release(obj.(*convoyv1alpha1.Release), s.validation)
}

func (s strategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return validation.ReleaseUpdate(obj.(*convoyv1alpha1.Release), old.(*convoyv1alpha1.Release), s.validation)
}
