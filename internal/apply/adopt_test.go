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

func TestAppliedFor(t *testing.T) {
	owner := Owner{Name: "web", Namespace: "team"}
	labels := v1alpha1.ReleaseSelector("web", "team")
	applied := []metav1.ManagedFieldsEntry{{Manager: v1alpha1.FieldManager, Operation: metav1.ManagedFieldsOperationApply}}
	now := metav1.Now()
	cases := map[string]struct {
		meta metav1.ObjectMeta
		want bool
	}{
		"applied by convoy for the Release": {meta: metav1.ObjectMeta{Labels: labels, ManagedFields: applied}, want: true},
		"another Release's":                 {meta: metav1.ObjectMeta{Labels: v1alpha1.ReleaseSelector("api", "team"), ManagedFields: applied}},
		"the Release's labels copied by a controller (an EndpointSlice)": {meta: metav1.ObjectMeta{Labels: labels,
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "endpointslice-controller.k8s.io", Operation: metav1.ManagedFieldsOperationUpdate}}}},
		"updated, not applied, by convoy": {meta: metav1.ObjectMeta{Labels: labels,
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: v1alpha1.FieldManager, Operation: metav1.ManagedFieldsOperationUpdate}}}},
		"a hook's": {meta: metav1.ObjectMeta{Labels: map[string]string{
			v1alpha1.LabelReleaseName: "web", v1alpha1.LabelReleaseNamespace: "team", v1alpha1.LabelHook: "migrate"}, ManagedFields: applied}},
		"being deleted": {meta: metav1.ObjectMeta{Labels: labels, ManagedFields: applied, DeletionTimestamp: &now}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := appliedFor(&tc.meta, owner); got != tc.want {
				t.Errorf("appliedFor = %v, want %v", got, tc.want)
			}
		})
	}
}
