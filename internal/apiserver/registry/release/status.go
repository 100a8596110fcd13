package release

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/apiserver/registry"
	"kumodo.io/convoy/internal/apiserver/validation"
)

// statusStrategy is the /status subresource's: a write changes only status, never the
// generation, spec, mutations, lifecycle, pin, labels or annotations.
type statusStrategy struct {
	strategy
}

func (statusStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return registry.ResetFields("spec", "mutations", "lifecycle", "pin", "metadata.labels", "metadata.annotations")
}

func (statusStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	r, oldR := obj.(*convoyv1alpha1.Release), old.(*convoyv1alpha1.Release)
	status := r.Status
	meta := r.ObjectMeta
	*r = *oldR.DeepCopy()
	r.Status = status
	r.ObjectMeta = meta
	metav1.ResetObjectMetaForStatus(&r.ObjectMeta, &oldR.ObjectMeta)
}

func (statusStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	r := obj.(*convoyv1alpha1.Release)
	errs := validation.ObjectMetaUpdate(&r.ObjectMeta, &old.(*convoyv1alpha1.Release).ObjectMeta)
	return append(errs, metav1validation.ValidateConditions(r.Status.Conditions, field.NewPath("status", "conditions"))...)
}
