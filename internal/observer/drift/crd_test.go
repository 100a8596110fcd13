package drift

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Cluster-scoped objects and a CRD with a custom resource of it, applied as
// convoy applies them (the CRD first, then the resource), have not drifted: the
// defaults the API server gives a CRD (conversion strategy, ...), a Namespace
// (spec.finalizers) and a ClusterRole are not drift.
func TestNoDriftForCRDsAndClusterScopedObjects(t *testing.T) {
	e := integration(t)
	group := e.ns + ".example.com"
	render := []*unstructured.Unstructured{
		crd(group, "Widget"),
		with(obj(group+"/v1", "Widget", e.ns, "w"), func(u *unstructured.Unstructured) {
			u.Object["spec"] = map[string]any{"size": int64(3)}
		}),
		obj("v1", "Namespace", "", e.ns+"-extra"),
		with(obj("rbac.authorization.k8s.io/v1", "ClusterRole", "", e.ns+"-reader"), func(u *unstructured.Unstructured) {
			u.Object["rules"] = []any{map[string]any{"apiGroups": []any{""}, "resources": []any{"configmaps"}, "verbs": []any{"get"}}}
		}),
	}
	e.applyAsConvoy(t, render...)
	t.Cleanup(func() {
		for _, o := range render[2:] {
			_ = e.client.Delete(e.ctx, o.DeepCopy())
		}
		_ = e.client.Delete(e.ctx, render[0].DeepCopy())
	})

	if got := e.check(t, render...); len(got) != 0 {
		t.Errorf("drift right after the apply: %v", got)
	}
}

// crd builds a namespaced CRD of kind in group, served at v1, with a schema.
func crd(group, kind string) *unstructured.Unstructured {
	plural := strings.ToLower(kind) + "s"
	u := obj("apiextensions.k8s.io/v1", "CustomResourceDefinition", "", plural+"."+group)
	u.Object["spec"] = map[string]any{
		"group": group,
		"scope": "Namespaced",
		"names": map[string]any{"kind": kind, "plural": plural},
		"versions": []any{map[string]any{
			"name": "v1", "served": true, "storage": true,
			"schema": map[string]any{"openAPIV3Schema": map[string]any{
				"type": "object",
				"properties": map[string]any{"spec": map[string]any{
					"type":       "object",
					"properties": map[string]any{"size": map[string]any{"type": "integer", "default": int64(1)}, "color": map[string]any{"type": "string", "default": "blue"}},
				}},
			}},
		}},
	}
	return u
}

func with(u *unstructured.Unstructured, f func(u *unstructured.Unstructured)) *unstructured.Unstructured {
	f(u)
	return u
}
