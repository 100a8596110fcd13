package releaseset

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/apiserver/registry"
	"kumodo.io/convoy/internal/apiserver/validation"
)

// strategy is the main resource's: writes keep status, approvals and the removal
// acknowledgement from storage, and
// only a spec change bumps the generation. Labels and annotations change freely.
type strategy struct {
	registry.Strategy
	validation validation.ReleaseOptions
}

func newStrategy(typer runtime.ObjectTyper, opts validation.ReleaseOptions) strategy {
	return strategy{Strategy: registry.NewStrategy(typer), validation: opts}
}

func (strategy) NamespaceScoped() bool { return true }

// GetResetFields names the fields a main-resource write never sets, for server-side apply.
func (strategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return registry.ResetFields("status", "approvals", "removalAcknowledgement")
}

func (strategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	s := obj.(*convoyv1alpha1.ReleaseSet)
	s.Status = convoyv1alpha1.ReleaseSetStatus{}
	s.Approvals = nil // written only through /promote
	s.RemovalAcknowledgement = nil
	s.Generation = 1
}

func (strategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	s, oldS := obj.(*convoyv1alpha1.ReleaseSet), old.(*convoyv1alpha1.ReleaseSet)
	s.Status = oldS.Status
	s.Approvals = oldS.Approvals
	s.RemovalAcknowledgement = oldS.RemovalAcknowledgement
	// BeforeUpdate has set the generation to the stored one.
	if !registry.Semantic.DeepEqual(s.Spec, oldS.Spec) {
		s.Generation = oldS.Generation + 1
	}
}

func (s strategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return validation.ReleaseSet(obj.(*convoyv1alpha1.ReleaseSet), s.validation)
}

func (s strategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return validation.ReleaseSetUpdate(obj.(*convoyv1alpha1.ReleaseSet), old.(*convoyv1alpha1.ReleaseSet), s.validation)
}

// statusStrategy is the /status subresource's: a write changes only status, never the
// generation, spec, approvals, the removal acknowledgement, labels or annotations.
type statusStrategy struct {
	strategy
}

func (statusStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return registry.ResetFields("spec", "approvals", "removalAcknowledgement", "metadata.labels", "metadata.annotations")
}

func (statusStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	s, oldS := obj.(*convoyv1alpha1.ReleaseSet), old.(*convoyv1alpha1.ReleaseSet)
	status := s.Status
	meta := s.ObjectMeta
	*s = *oldS.DeepCopy()
	s.Status = status
	s.ObjectMeta = meta
	metav1.ResetObjectMetaForStatus(&s.ObjectMeta, &oldS.ObjectMeta)
}

func (statusStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return validation.ReleaseSetStatusUpdate(obj.(*convoyv1alpha1.ReleaseSet), old.(*convoyv1alpha1.ReleaseSet))
}

// keepStrategy is the strategy of the store /promote writes through: its transform
// already made the new object from the stored one, so nothing else changes.
type keepStrategy struct {
	strategy
}

func (keepStrategy) PrepareForUpdate(context.Context, runtime.Object, runtime.Object) {}
