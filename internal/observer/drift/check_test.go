package drift

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"kumodo.io/convoy/api/v1alpha1"
)

// Right after convoy applied a render, nothing has drifted, although the API
// server filled in defaults that the render does not set: a Deployment's
// strategy, revisionHistoryLimit and container defaults, a Service's clusterIP,
// ipFamilies, protocol and targetPort, a Secret's data from stringData.
func TestNoDriftRightAfterApply(t *testing.T) {
	e := integration(t)
	render := []*unstructured.Unstructured{
		configMap(e.ns, "web", map[string]any{"app.conf": "a=1"}),
		deployment(e.ns, "web"),
		service(e.ns, "web"),
		secret(e.ns, "web"),
	}
	e.applyAsConvoy(t, render...)

	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(render[2].GroupVersionKind())
	if err := e.client.Get(e.ctx, client.ObjectKeyFromObject(render[2]), live); err != nil {
		t.Fatal(err)
	}
	if ip, _, _ := unstructured.NestedString(live.Object, "spec", "clusterIP"); ip == "" {
		t.Fatalf("the Service got no clusterIP: the test would not test defaulting")
	}

	if got := e.check(t, render...); len(got) != 0 {
		t.Errorf("drift right after the apply: %v", got)
	}
}

// A field convoy set, changed by someone else (an Update by another field
// manager, as kubectl edit or scale make), is drift at that field's path.
func TestHandEditIsDriftAtItsPath(t *testing.T) {
	cases := map[string]struct {
		object func(ns string) *unstructured.Unstructured
		edit   func(live *unstructured.Unstructured)
		want   []string
	}{
		"Deployment replicas scaled by hand": {
			object: func(ns string) *unstructured.Unstructured { return deployment(ns, "web") },
			edit: func(live *unstructured.Unstructured) {
				_ = unstructured.SetNestedField(live.Object, int64(5), "spec", "replicas")
			},
			want: []string{"spec.replicas"},
		},
		"Deployment image changed by hand": {
			object: func(ns string) *unstructured.Unstructured { return deployment(ns, "web") },
			edit: func(live *unstructured.Unstructured) {
				containers, _, _ := unstructured.NestedSlice(live.Object, "spec", "template", "spec", "containers")
				containers[0].(map[string]any)["image"] = "example.com/web:debug"
				_ = unstructured.SetNestedSlice(live.Object, containers, "spec", "template", "spec", "containers")
			},
			want: []string{"spec.template.spec.containers[0].image"},
		},
		"ConfigMap data key changed by hand": {
			object: func(ns string) *unstructured.Unstructured {
				return configMap(ns, "web", map[string]any{"app.conf": "a=1", "mode": "prod"})
			},
			edit: func(live *unstructured.Unstructured) {
				_ = unstructured.SetNestedField(live.Object, "a=2", "data", "app.conf")
			},
			want: []string{"data[app.conf]"},
		},
		"ConfigMap data key convoy set, deleted by hand": {
			object: func(ns string) *unstructured.Unstructured {
				return configMap(ns, "web", map[string]any{"app.conf": "a=1", "mode": "prod"})
			},
			edit: func(live *unstructured.Unstructured) { unstructured.RemoveNestedField(live.Object, "data", "mode") },
			want: []string{"data.mode"},
		},
		"a label convoy set, removed by hand": {
			object: func(ns string) *unstructured.Unstructured { return configMap(ns, "web", map[string]any{"k": "v"}) },
			edit: func(live *unstructured.Unstructured) {
				l := live.GetLabels()
				delete(l, v1alpha1.LabelReleaseName)
				live.SetLabels(l)
			},
			want: []string{"metadata.labels[" + v1alpha1.LabelReleaseName + "]"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			e := integration(t)
			o := tc.object(e.ns)
			e.applyAsConvoy(t, o)
			e.editAs(t, "kubectl-edit", o, tc.edit)

			want := []v1alpha1.DriftedObject{{ObjectReference: ref(o), Fields: tc.want}}
			if diff := cmp.Diff(want, e.check(t, o)); diff != "" {
				t.Errorf("drift (-want +got):\n%s", diff)
			}
		})
	}
}

// Fields convoy does not set, set or changed by someone else, are not drift:
// convoy's apply would keep them.
func TestFieldsConvoyDoesNotManageAreNotDrift(t *testing.T) {
	cases := map[string]struct {
		object func(ns string) *unstructured.Unstructured
		edit   func(live *unstructured.Unstructured)
	}{
		"a label and an annotation added": {
			object: func(ns string) *unstructured.Unstructured { return configMap(ns, "web", map[string]any{"k": "v"}) },
			edit: func(live *unstructured.Unstructured) {
				l := live.GetLabels()
				l["team"] = "payments"
				live.SetLabels(l)
				live.SetAnnotations(map[string]string{"example.com/owner": "alice"})
			},
		},
		"a ConfigMap data key added": {
			object: func(ns string) *unstructured.Unstructured { return configMap(ns, "web", map[string]any{"k": "v"}) },
			edit: func(live *unstructured.Unstructured) {
				_ = unstructured.SetNestedField(live.Object, "added", "data", "extra")
			},
		},
		"Deployment defaults changed: minReadySeconds, imagePullPolicy, revisionHistoryLimit": {
			object: func(ns string) *unstructured.Unstructured { return deployment(ns, "web") },
			edit: func(live *unstructured.Unstructured) {
				_ = unstructured.SetNestedField(live.Object, int64(7), "spec", "minReadySeconds")
				_ = unstructured.SetNestedField(live.Object, int64(3), "spec", "revisionHistoryLimit")
				containers, _, _ := unstructured.NestedSlice(live.Object, "spec", "template", "spec", "containers")
				containers[0].(map[string]any)["imagePullPolicy"] = "Always"
				_ = unstructured.SetNestedSlice(live.Object, containers, "spec", "template", "spec", "containers")
			},
		},
		"Service sessionAffinity changed": {
			object: func(ns string) *unstructured.Unstructured { return service(ns, "web") },
			edit: func(live *unstructured.Unstructured) {
				_ = unstructured.SetNestedField(live.Object, "ClientIP", "spec", "sessionAffinity")
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			e := integration(t)
			o := tc.object(e.ns)
			e.applyAsConvoy(t, o)
			e.editAs(t, "kubectl-edit", o, tc.edit)

			if got := e.check(t, o); len(got) != 0 {
				t.Errorf("drift after someone else changed fields convoy does not set: %v", got)
			}
		})
	}
}

// A render object that is not on the target is drift, with the path Missing:
// deleted by hand, or of a kind the target no longer serves.
func TestMissingObjectIsDrift(t *testing.T) {
	e := integration(t)
	kept, deleted := configMap(e.ns, "kept", map[string]any{"k": "v"}), configMap(e.ns, "deleted", map[string]any{"k": "v"})
	e.applyAsConvoy(t, kept, deleted)
	if err := e.client.Delete(e.ctx, deleted.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	unserved := obj("widgets.example.com/v1", "Widget", e.ns, "gone")

	want := []v1alpha1.DriftedObject{
		{ObjectReference: ref(deleted), Fields: []string{Missing}},
		{ObjectReference: ref(unserved), Fields: []string{Missing}},
	}
	if diff := cmp.Diff(want, e.check(t, kept, deleted, unserved)); diff != "" {
		t.Errorf("drift (-want +got):\n%s", diff)
	}
}

// The result is sorted by group, kind, namespace and name whatever the order
// of the render, and the same on every check.
func TestResultIsSorted(t *testing.T) {
	e := integration(t)
	render := []*unstructured.Unstructured{
		deployment(e.ns, "b"), configMap(e.ns, "b", map[string]any{"k": "v"}),
		deployment(e.ns, "a"), configMap(e.ns, "a", map[string]any{"k": "v"}),
	}
	e.applyAsConvoy(t, render...)
	for _, o := range render {
		if o.GetKind() == "Deployment" {
			e.editAs(t, "kubectl-edit", o, func(live *unstructured.Unstructured) {
				_ = unstructured.SetNestedField(live.Object, int64(0), "spec", "replicas")
			})
		} else {
			e.editAs(t, "kubectl-edit", o, func(live *unstructured.Unstructured) {
				_ = unstructured.SetNestedField(live.Object, "changed", "data", "k")
			})
		}
	}
	want := []v1alpha1.DriftedObject{
		{ObjectReference: ref(render[3]), Fields: []string{"data.k"}},
		{ObjectReference: ref(render[1]), Fields: []string{"data.k"}},
		{ObjectReference: ref(render[2]), Fields: []string{"spec.replicas"}},
		{ObjectReference: ref(render[0]), Fields: []string{"spec.replicas"}},
	}
	for range 3 {
		if diff := cmp.Diff(want, e.check(t, render...)); diff != "" {
			t.Fatalf("drift (-want +got):\n%s", diff)
		}
	}
}

// A check costs one GET and one dry run per existing object, one GET per
// missing object, and writes nothing: the live objects keep their
// resourceVersion.
func TestCheckRequestsAndNoWrites(t *testing.T) {
	e := integration(t)
	render := []*unstructured.Unstructured{
		configMap(e.ns, "web", map[string]any{"k": "v"}), deployment(e.ns, "web"), service(e.ns, "web"),
	}
	e.applyAsConvoy(t, render...)
	e.editAs(t, "kubectl-edit", render[1], func(live *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(live.Object, int64(9), "spec", "replicas")
	})
	missing := configMap(e.ns, "missing", map[string]any{"k": "v"})
	render = append(render, missing)
	e.warm(t, render...)
	versions := map[string]string{}
	for _, o := range render[:3] {
		live := &unstructured.Unstructured{}
		live.SetGroupVersionKind(o.GroupVersionKind())
		if err := e.client.Get(e.ctx, client.ObjectKeyFromObject(o), live); err != nil {
			t.Fatal(err)
		}
		versions[o.GetKind()] = live.GetResourceVersion()
	}
	e.counter.Take()

	got := e.check(t, render...)
	if diff := cmp.Diff(map[string]int{"read": 4, "dry-run": 3}, e.counter.Take()); diff != "" {
		t.Errorf("requests of a check of 3 objects and a missing one (-want +got):\n%s", diff)
	}
	if len(got) != 2 {
		t.Errorf("drift %v, want the Deployment and the missing ConfigMap", got)
	}
	for _, o := range render[:3] {
		live := &unstructured.Unstructured{}
		live.SetGroupVersionKind(o.GroupVersionKind())
		if err := e.client.Get(e.ctx, client.ObjectKeyFromObject(o), live); err != nil {
			t.Fatal(err)
		}
		if live.GetResourceVersion() != versions[o.GetKind()] {
			t.Errorf("%s changed (resourceVersion %s, was %s): the check wrote", o.GetKind(), live.GetResourceVersion(), versions[o.GetKind()])
		}
	}
}

// Options.Concurrency bounds the requests in flight of one check.
func TestConcurrencyIsBounded(t *testing.T) {
	e := integration(t)
	var render []*unstructured.Unstructured
	for i := range 12 {
		render = append(render, configMap(e.ns, fmt.Sprintf("cm-%d", i), map[string]any{"k": "v"}))
	}
	e.applyAsConvoy(t, render...)
	e.warm(t, render...)
	for _, limit := range []int{1, 3} {
		e.counter.TakeMaxInFlight()
		if _, err := New(Options{Concurrency: limit}).Check(e.ctx, e.client, render); err != nil {
			t.Fatal(err)
		}
		if got := e.counter.TakeMaxInFlight(); got > limit || got < 1 {
			t.Errorf("Concurrency %d: %d requests in flight at most, want 1 to %d", limit, got, limit)
		}
	}
}
