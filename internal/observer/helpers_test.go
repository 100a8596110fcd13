package observer

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// The unit tests of the observer's small decisions; they need no control plane.

func TestEarliest(t *testing.T) {
	cases := map[string]struct {
		a, b, want time.Duration
	}{
		"none":            {0, 0, 0},
		"only the first":  {time.Second, 0, time.Second},
		"only the second": {0, time.Minute, time.Minute},
		"the shorter":     {time.Minute, time.Second, time.Second},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := earliest(tc.a, tc.b); got != tc.want {
				t.Errorf("earliest(%s, %s) = %s, want %s", tc.a, tc.b, got, tc.want)
			}
		})
	}
}

// The inventory's objects live where the inventory says, also while the Release moves.
func TestOnClusterIsTheInventorysCluster(t *testing.T) {
	rel := testRelease("team-a", "web")
	rel.Spec.Cluster = "new"
	got := onCluster(rel, "old")
	if got.Spec.Cluster != "old" || rel.Spec.Cluster != "new" {
		t.Errorf("onCluster: got cluster %q (Release left with %q), want old (and new unchanged)", got.Spec.Cluster, rel.Spec.Cluster)
	}
	if onCluster(rel, "new") != rel {
		t.Error("onCluster of the Release's own cluster should return the Release itself")
	}
}

func TestHookTimeout(t *testing.T) {
	rel := testRelease("team-a", "web")
	if got := hookTimeout(rel, "migrate"); got != 0 {
		t.Errorf("no lifecycle: timeout %s, want 0 (the default)", got)
	}
	rel.Lifecycle = &v1.Lifecycle{Hooks: []v1.Hook{
		{Name: "migrate", Timeout: &metav1.Duration{Duration: time.Minute}},
		{Name: "notify"},
	}}
	for name, want := range map[string]time.Duration{"migrate": time.Minute, "notify": 0, "other": 0} {
		if got := hookTimeout(rel, name); got != want {
			t.Errorf("hook %s: timeout %s, want %s", name, got, want)
		}
	}
}

// An object's event enqueues the inventory its convoy labels name; an object without
// them enqueues nothing.
func TestEventsEnqueueTheInventoryOfTheLabels(t *testing.T) {
	var got []types.NamespacedName
	w := &watches{enqueue: func(k types.NamespacedName) { got = append(got, k) }}
	labelled := &unstructured.Unstructured{}
	labelled.SetLabels(convoyLabels("team-a", "web"))
	unlabelled := &unstructured.Unstructured{}
	unlabelled.SetLabels(map[string]string{v1.LabelReleaseName: "web"})
	w.onEvent(labelled)
	w.onEvent(cache.DeletedFinalStateUnknown{Key: "team-a/web", Obj: labelled})
	w.onEvent(unlabelled)
	want := []types.NamespacedName{{Namespace: "team-a", Name: "web"}, {Namespace: "team-a", Name: "web"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("enqueued (-want +got):\n%s", diff)
	}
}

// A view of an object older than the generation convoy's apply gave it is not
// assessed; a missing object or an unknown generation is.
func TestBehind(t *testing.T) {
	withGeneration := func(g int64) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetGeneration(g)
		return u
	}
	cases := map[string]struct {
		live    *unstructured.Unstructured
		applied int64
		want    bool
	}{
		"the view is older than the apply":  {withGeneration(1), 2, true},
		"the view has reached the apply":    {withGeneration(2), 2, false},
		"the view is newer (a later edit)":  {withGeneration(3), 2, false},
		"generation unknown (0)":            {withGeneration(1), 0, false},
		"the object is missing: not behind": {nil, 2, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			obj := v1.InventoryObject{Generation: tc.applied}
			if got := behind(tc.live, obj); got != tc.want {
				t.Errorf("behind = %v, want %v", got, tc.want)
			}
		})
	}
}
