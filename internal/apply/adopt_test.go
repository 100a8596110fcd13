package apply

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"kumodo.io/convoy/api/v1alpha1"
)

func TestListableKinds(t *testing.T) {
	all := metav1.Verbs{"create", "delete", "get", "list", "patch", "update", "watch"}
	resources := []*metav1.APIResourceList{
		{GroupVersion: "v1", APIResources: []metav1.APIResource{
			{Name: "configmaps", Kind: "ConfigMap", Namespaced: true, Verbs: all},
			{Name: "pods/log", Kind: "Pod", Namespaced: true, Verbs: metav1.Verbs{"get"}},
			{Name: "namespaces", Kind: "Namespace", Verbs: all},
			{Name: "bindings", Kind: "Binding", Namespaced: true, Verbs: metav1.Verbs{"create"}},
		}},
		{GroupVersion: "autoscaling/v2", APIResources: []metav1.APIResource{
			{Name: "horizontalpodautoscalers", Kind: "HorizontalPodAutoscaler", Namespaced: true, Verbs: all},
		}},
		{GroupVersion: "autoscaling/v1", APIResources: []metav1.APIResource{
			{Name: "horizontalpodautoscalers", Kind: "HorizontalPodAutoscaler", Namespaced: true, Verbs: all},
		}},
		{GroupVersion: "authorization.k8s.io/v1", APIResources: []metav1.APIResource{
			{Name: "selfsubjectreviews", Kind: "SelfSubjectReview", Verbs: metav1.Verbs{"create"}},
		}},
	}
	want := []ListKind{
		{GVK: schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, Namespaced: true},
		{GVK: schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}},
		{GVK: schema.GroupVersionKind{Group: "autoscaling", Version: "v2", Kind: "HorizontalPodAutoscaler"}, Namespaced: true},
	}
	if d := cmp.Diff(want, ListableKinds(resources)); d != "" {
		t.Errorf("ListableKinds (-want +got):\n%s", d)
	}
}

func TestAdoptions(t *testing.T) {
	obj := func(kind, name string, wave int32) v1alpha1.InventoryObject {
		return v1alpha1.InventoryObject{ObjectReference: v1alpha1.ObjectReference{Version: "v1", Kind: kind, Namespace: "a", Name: name}, Wave: wave}
	}
	cases := map[string]struct {
		inventory, labelled, want []v1alpha1.InventoryObject
	}{
		"nothing labelled":                   {inventory: []v1alpha1.InventoryObject{obj("ConfigMap", "c", 0)}},
		"everything listed already":          {inventory: []v1alpha1.InventoryObject{obj("ConfigMap", "c", 2)}, labelled: []v1alpha1.InventoryObject{obj("ConfigMap", "c", 0)}},
		"an object applied after the backup": {inventory: []v1alpha1.InventoryObject{obj("ConfigMap", "c", 0)}, labelled: []v1alpha1.InventoryObject{obj("ConfigMap", "c", 0), obj("Secret", "s", 0)}, want: []v1alpha1.InventoryObject{obj("Secret", "s", 0)}},
		"no inventory":                       {labelled: []v1alpha1.InventoryObject{obj("Secret", "s", 0)}, want: []v1alpha1.InventoryObject{obj("Secret", "s", 0)}},
		"same name, another kind":            {inventory: []v1alpha1.InventoryObject{obj("ConfigMap", "x", 0)}, labelled: []v1alpha1.InventoryObject{obj("Secret", "x", 0)}, want: []v1alpha1.InventoryObject{obj("Secret", "x", 0)}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, Adoptions(tc.inventory, tc.labelled)); d != "" {
				t.Errorf("Adoptions (-want +got):\n%s", d)
			}
		})
	}
}
