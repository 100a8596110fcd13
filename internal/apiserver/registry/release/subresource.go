package release

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/clock"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/apiserver/registry"
)

// fieldStrategy is the strategy of a subresource that owns one top-level field of a
// Release (/pin, /mutations, /lifecycle): a write changes only that field and writes
// sync-requested-at, as a plain /sync does (it removes sync-requested-render: the
// request approves whatever render the change leads to); it never changes the generation. The storage runs
// PrepareForUpdate inside its read-modify-write loop, with old the object just read, so
// the field write and the annotation are one atomic update.
type fieldStrategy struct {
	strategy
	clock clock.PassiveClock
	// field is the JSON name of the field the subresource owns.
	field string
	// take moves the owned field from the request (from) into the stored copy (to).
	take func(to, from, old *convoyv1alpha1.Release, now metav1.Time)
}

func newFieldStrategy(base strategy, c clock.PassiveClock, field string,
	take func(to, from, old *convoyv1alpha1.Release, now metav1.Time)) fieldStrategy {
	return fieldStrategy{strategy: base, clock: c, field: field, take: take}
}

// GetResetFields: every field but the owned one keeps its stored value.
func (s fieldStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	reset := []string{"metadata.labels", "metadata.annotations"}
	for _, f := range []string{"spec", "status", "mutations", "lifecycle", "pin"} {
		if f != s.field {
			reset = append(reset, f)
		}
	}
	return registry.ResetFields(reset...)
}

func (s fieldStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	r, oldR := obj.(*convoyv1alpha1.Release), old.(*convoyv1alpha1.Release)
	request := r.DeepCopy()
	meta := r.ObjectMeta
	*r = *oldR.DeepCopy()
	// Keep the request's managedFields (computed by the field manager) and resource
	// version; reset the rest of the metadata, as a status write does.
	r.ObjectMeta = meta
	metav1.ResetObjectMetaForStatus(&r.ObjectMeta, &oldR.ObjectMeta)
	now := s.clock.Now()
	s.take(r, request, oldR, metav1.NewTime(now))
	requestSync(r, now, false, "")
}

func (fieldStrategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}

func takeMutations(to, from, _ *convoyv1alpha1.Release, _ metav1.Time) {
	to.Mutations = from.Mutations
}

func takeLifecycle(to, from, _ *convoyv1alpha1.Release, _ metav1.Time) {
	to.Lifecycle = from.Lifecycle
}

// takePin sets the pin of the request. A pin without renderRef pins
// status.lastSuccessful.renderRef; pinnedAt is the time of the write that set the pin
// to its render (kept while the render stays the same); pin: null unpins.
func takePin(to, from, old *convoyv1alpha1.Release, now metav1.Time) {
	pin := from.Pin
	if pin == nil {
		to.Pin = nil
		return
	}
	if pin.RenderRef == "" && old.Status.LastSuccessful != nil {
		pin.RenderRef = old.Status.LastSuccessful.RenderRef
	}
	pin.PinnedAt = &now
	if old.Pin != nil && old.Pin.RenderRef == pin.RenderRef && old.Pin.PinnedAt != nil {
		pin.PinnedAt = old.Pin.PinnedAt.DeepCopy()
	}
	to.Pin = pin
}
