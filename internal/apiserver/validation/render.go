package validation

import (
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
)

// Render validates a new Render.
func Render(r *convoyv1alpha1.Render) field.ErrorList {
	errs := ObjectMeta(&r.ObjectMeta, true)
	refPath := field.NewPath("renderRef")
	if r.RenderRef == "" {
		errs = append(errs, field.Required(refPath, ""))
	} else {
		errs = append(errs, renderRef(r.RenderRef, refPath)...)
	}
	if r.Release == "" {
		errs = append(errs, field.Required(field.NewPath("release"), "the name of the Release rendered"))
	}
	if r.Chart.Name == "" {
		errs = append(errs, field.Required(field.NewPath("chart", "name"), ""))
	}
	if r.ObjectCount < 0 {
		errs = append(errs, field.Invalid(field.NewPath("objectCount"), r.ObjectCount, "must not be negative"))
	}
	return errs
}

// RenderUpdate rejects every change of a Render but its metadata: a Render is an
// immutable snapshot. Metadata stays writable (labels, owner references, finalizers)
// so that the garbage collector and tools that label objects keep working, as for a
// ControllerRevision.
func RenderUpdate(r, old *convoyv1alpha1.Render) field.ErrorList {
	errs := ObjectMetaUpdate(&r.ObjectMeta, &old.ObjectMeta)
	immutable := func(name string, a, b interface{}) {
		if !apiequality.Semantic.DeepEqual(a, b) {
			errs = append(errs, field.Forbidden(field.NewPath(name), "a Render is immutable"))
		}
	}
	immutable("renderRef", r.RenderRef, old.RenderRef)
	immutable("release", r.Release, old.Release)
	immutable("chart", r.Chart, old.Chart)
	immutable("valuesDigest", r.ValuesDigest, old.ValuesDigest)
	immutable("objectCount", r.ObjectCount, old.ObjectCount)
	immutable("waves", r.Waves, old.Waves)
	immutable("manifests", r.Manifests, old.Manifests)
	return errs
}
