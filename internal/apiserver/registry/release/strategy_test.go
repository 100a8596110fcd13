package release

import (
	"context"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

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

// A switch from automatic to manual drops the sync requests made before it: each sync
// request annotation the update leaves at its stored value. A value the update
// changes is a request made with the switch and stays; other annotations stay.
func TestMainStrategySwitchToManualDropsOlderRequests(t *testing.T) {
	const (
		at      = convoyv1alpha1.AnnotationSyncRequestedAt
		forceAt = convoyv1alpha1.AnnotationSyncForceRequestedAt
		render  = convoyv1alpha1.AnnotationSyncRequestedRender
		before  = "2026-12-02T10:04:05Z"
		with    = "2026-12-02T10:09:00Z"
	)
	full := "sha256:" + strings.Repeat("ab", 32)
	requests := map[string]string{at: before, forceAt: before, render: full, "a": "1"}
	automatic, manual := ptr.To(true), ptr.To(false)
	cases := map[string]struct {
		from, to    *bool
		annotations map[string]string // of the update; the stored ones are requests
		want        map[string]string
	}{
		"automatic to manual drops them all": {from: automatic, to: manual,
			annotations: requests, want: map[string]string{"a": "1"}},
		"automatic to unset is manual too": {from: automatic, to: nil,
			annotations: requests, want: map[string]string{"a": "1"}},
		"a request written with the switch is kept": {from: automatic, to: manual,
			annotations: map[string]string{at: with, forceAt: before, render: full, "a": "1"},
			want:        map[string]string{at: with, "a": "1"}},
		"a render written with the switch is kept": {from: automatic, to: manual,
			annotations: map[string]string{at: with, forceAt: with, render: "sha256:" + strings.Repeat("cd", 32)},
			want:        map[string]string{at: with, forceAt: with, render: "sha256:" + strings.Repeat("cd", 32)}},
		"a request the update removes stays removed": {from: automatic, to: manual,
			annotations: map[string]string{"a": "1"}, want: map[string]string{"a": "1"}},
		"manual to manual keeps them": {from: manual, to: manual, annotations: requests, want: requests},
		"unset to manual keeps them":  {from: nil, to: manual, annotations: requests, want: requests},
		"manual to automatic keeps them": {from: manual, to: automatic,
			annotations: requests, want: requests},
		"automatic to automatic keeps them": {from: automatic, to: automatic,
			annotations: requests, want: requests},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			old := stored()
			old.Annotations = maps.Clone(requests)
			old.Spec.SyncPolicy.Automatic = tc.from
			obj := stored()
			obj.Annotations = maps.Clone(tc.annotations)
			obj.Spec.SyncPolicy.Automatic = tc.to
			newStrategy(runtime.NewScheme()).PrepareForUpdate(context.Background(), obj, old)
			if diff := cmp.Diff(tc.want, obj.Annotations); diff != "" {
				t.Errorf("annotations (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(requests, old.Annotations); diff != "" {
				t.Errorf("the stored annotations changed (-want +got):\n%s", diff)
			}
		})
	}
}

// The store /sync writes through keeps what the transform made, even across a
// switch: /sync never changes spec, and its PrepareForUpdate changes nothing.
func TestKeepStrategyKeepsTheRequest(t *testing.T) {
	old := stored()
	old.Spec.SyncPolicy.Automatic = ptr.To(true)
	obj := old.DeepCopy()
	requestSync(obj, time.Date(2026, 12, 2, 10, 4, 5, 0, time.UTC), true, "sha256:"+strings.Repeat("ab", 32))
	obj.Spec.SyncPolicy.Automatic = ptr.To(false)
	want := obj.DeepCopy()
	keepStrategy{newStrategy(runtime.NewScheme())}.PrepareForUpdate(context.Background(), obj, old)
	if diff := cmp.Diff(want, obj); diff != "" {
		t.Errorf("object (-want +got):\n%s", diff)
	}
}
