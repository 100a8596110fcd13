package release

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clocktesting "k8s.io/utils/clock/testing"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
)

const ref = "sha256:4f1c"

func stored() *convoyv1alpha1.Release {
	return &convoyv1alpha1.Release{
		ObjectMeta: metav1.ObjectMeta{Name: "podinfo", Namespace: "team-a", Generation: 3,
			Labels: map[string]string{"l": "1"}, Annotations: map[string]string{"a": "1"}},
		Spec: convoyv1alpha1.ReleaseSpec{Chart: convoyv1alpha1.ChartSource{Repository: "https://c", Name: "podinfo"},
			Values: &runtime.RawExtension{Raw: []byte(`{"a":1,"b":2}`)}},
		Mutations: []convoyv1alpha1.Mutation{{Patch: "x: y"}},
		Lifecycle: &convoyv1alpha1.Lifecycle{},
		Pin:       &convoyv1alpha1.Pin{RenderRef: ref},
		Status:    convoyv1alpha1.ReleaseStatus{ObservedGeneration: 3, LastSuccessful: &convoyv1alpha1.LastSuccessful{RenderRef: ref}},
	}
}

func TestMainStrategyUpdate(t *testing.T) {
	cases := map[string]struct {
		change         func(*convoyv1alpha1.Release)
		wantGeneration int64
		want           func(*convoyv1alpha1.Release) // the stored result, from stored()
	}{
		"spec change bumps the generation": {
			change: func(r *convoyv1alpha1.Release) { r.Spec.ClusterWave = 2 }, wantGeneration: 4,
			want: func(r *convoyv1alpha1.Release) { r.Spec.ClusterWave = 2 },
		},
		"equal values in another order do not": {
			change: func(r *convoyv1alpha1.Release) {
				r.Spec.Values = &runtime.RawExtension{Raw: []byte(`{ "b": 2, "a": 1 }`)}
			},
			wantGeneration: 3,
			want: func(r *convoyv1alpha1.Release) {
				r.Spec.Values = &runtime.RawExtension{Raw: []byte(`{ "b": 2, "a": 1 }`)}
			},
		},
		"mutations, lifecycle, labels and annotations do not": {
			change: func(r *convoyv1alpha1.Release) {
				r.Mutations, r.Lifecycle = nil, nil
				r.Labels, r.Annotations = nil, map[string]string{convoyv1alpha1.AnnotationSyncRequestedAt: "2026-12-02T10:04:05Z"}
			},
			wantGeneration: 3,
			want: func(r *convoyv1alpha1.Release) {
				r.Mutations, r.Lifecycle = nil, nil
				r.Labels, r.Annotations = nil, map[string]string{convoyv1alpha1.AnnotationSyncRequestedAt: "2026-12-02T10:04:05Z"}
			},
		},
		"status and pin are kept from storage": {
			change: func(r *convoyv1alpha1.Release) {
				r.Pin = nil
				r.Status = convoyv1alpha1.ReleaseStatus{ObservedGeneration: 99}
			},
			wantGeneration: 3,
			want:           func(*convoyv1alpha1.Release) {},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			old := stored()
			obj := stored()
			tc.change(obj)
			s := newStrategy(runtime.NewScheme())
			s.PrepareForUpdate(context.Background(), obj, old)
			want := stored()
			tc.want(want)
			want.Generation = tc.wantGeneration
			if diff := cmp.Diff(want, obj); diff != "" {
				t.Errorf("stored object (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMainStrategyCreateDropsStatusAndPin(t *testing.T) {
	r := stored()
	newStrategy(runtime.NewScheme()).PrepareForCreate(context.Background(), r)
	if r.Pin != nil || r.Status.ObservedGeneration != 0 || r.Generation != 1 {
		t.Errorf("after create: pin %+v, status %+v, generation %d", r.Pin, r.Status, r.Generation)
	}
}

func TestStatusStrategyChangesOnlyStatus(t *testing.T) {
	obj := stored()
	obj.Spec.ClusterWave = 5
	obj.Annotations = map[string]string{"b": "2"}
	obj.Labels = nil
	obj.Mutations = nil
	obj.Pin = nil
	obj.Generation = 9
	obj.Status.ObservedGeneration = 4
	statusStrategy{newStrategy(runtime.NewScheme())}.PrepareForUpdate(context.Background(), obj, stored())
	want := stored()
	want.Status.ObservedGeneration = 4
	if diff := cmp.Diff(want, obj); diff != "" {
		t.Errorf("stored object (-want +got):\n%s", diff)
	}
}

func TestFieldStrategies(t *testing.T) {
	now := time.Date(2026, 12, 2, 10, 4, 5, 0, time.UTC)
	clock := clocktesting.NewFakePassiveClock(now)
	base := newStrategy(runtime.NewScheme())
	pinnedAt := metav1.NewTime(now)
	cases := map[string]struct {
		strategy fieldStrategy
		change   func(*convoyv1alpha1.Release)
		want     func(*convoyv1alpha1.Release)
	}{
		"/mutations writes only mutations": {
			strategy: newFieldStrategy(base, clock, "mutations", takeMutations),
			change: func(r *convoyv1alpha1.Release) {
				r.Mutations = []convoyv1alpha1.Mutation{{Patch: "new: 1"}}
				r.Spec.ClusterWave, r.Pin, r.Lifecycle, r.Labels = 7, nil, nil, nil
			},
			want: func(r *convoyv1alpha1.Release) { r.Mutations = []convoyv1alpha1.Mutation{{Patch: "new: 1"}} },
		},
		"/lifecycle writes only lifecycle": {
			strategy: newFieldStrategy(base, clock, "lifecycle", takeLifecycle),
			change:   func(r *convoyv1alpha1.Release) { r.Lifecycle, r.Mutations = nil, nil },
			want:     func(r *convoyv1alpha1.Release) { r.Lifecycle = nil },
		},
		"/pin with a new render sets pinnedAt": {
			strategy: newFieldStrategy(base, clock, "pin", takePin),
			change:   func(r *convoyv1alpha1.Release) { r.Pin = &convoyv1alpha1.Pin{RenderRef: "sha256:9a2b", Reason: "r"} },
			want: func(r *convoyv1alpha1.Release) {
				r.Pin = &convoyv1alpha1.Pin{RenderRef: "sha256:9a2b", Reason: "r", PinnedAt: &pinnedAt}
			},
		},
		"/pin without render pins the last successful": {
			strategy: newFieldStrategy(base, clock, "pin", takePin),
			change:   func(r *convoyv1alpha1.Release) { r.Pin = &convoyv1alpha1.Pin{Reason: "freeze"} },
			want: func(r *convoyv1alpha1.Release) {
				r.Pin = &convoyv1alpha1.Pin{RenderRef: ref, Reason: "freeze", PinnedAt: &pinnedAt}
			},
		},
		"/pin null unpins": {
			strategy: newFieldStrategy(base, clock, "pin", takePin),
			change:   func(r *convoyv1alpha1.Release) { r.Pin = nil },
			want:     func(r *convoyv1alpha1.Release) { r.Pin = nil },
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			obj := stored()
			tc.change(obj)
			tc.strategy.PrepareForUpdate(context.Background(), obj, stored())
			want := stored()
			tc.want(want)
			want.Annotations = map[string]string{"a": "1", convoyv1alpha1.AnnotationSyncRequestedAt: "2026-12-02T10:04:05Z"}
			if diff := cmp.Diff(want, obj); diff != "" {
				t.Errorf("stored object (-want +got):\n%s", diff)
			}
		})
	}
}
