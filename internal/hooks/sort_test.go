package hooks

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

func objectHook(kind, name string, batch int32) Hook {
	u := &unstructured.Unstructured{}
	u.SetKind(kind)
	u.SetName(name)
	return Hook{Name: name, Phase: v1.HookPreApply, Batch: batch, Object: u}
}

func jobHook(name string, batch int32) Hook {
	h := objectHook("Job", name, batch)
	h.Job = name
	return h
}

// TestSortOrdersABatchAsHelm: within one weight, Helm creates the hook objects in its
// kind order (ServiceAccount, ClusterRole, ClusterRoleBinding, Role, RoleBinding, …),
// whatever their names; convoy's Jobs of the batch come after its objects.
func TestSortOrdersABatchAsHelm(t *testing.T) {
	tests := map[string]struct {
		in   []Hook
		want []string
	}{
		"gatekeeper-like upgrade-crds batch, names sorting the other way": {
			in: []Hook{
				jobHook("a-update-crds", 1),
				objectHook("ClusterRoleBinding", "a-admin-upgrade-crds", 1),
				objectHook("ClusterRole", "a-admin-upgrade-crds", 1),
				objectHook("ServiceAccount", "z-update-crds", 1),
			},
			want: []string{"ServiceAccount/z-update-crds", "ClusterRole/a-admin-upgrade-crds",
				"ClusterRoleBinding/a-admin-upgrade-crds", "Job/a-update-crds"},
		},
		"weight before kind": {
			in: []Hook{
				objectHook("ServiceAccount", "sa", 1),
				objectHook("RoleBinding", "rb", -5),
				objectHook("Role", "r", -5),
			},
			want: []string{"Role/r", "RoleBinding/rb", "ServiceAccount/sa"},
		},
		"unknown kinds after Helm's, by kind then name": {
			in: []Hook{
				objectHook("Widget", "b", 0),
				objectHook("Gadget", "a", 0),
				objectHook("ConfigMap", "z", 0),
				objectHook("Widget", "a", 0),
			},
			want: []string{"ConfigMap/z", "Gadget/a", "Widget/a", "Widget/b"},
		},
		"same kind by name": {
			in:   []Hook{objectHook("Secret", "b", 0), objectHook("Secret", "a", 0)},
			want: []string{"Secret/a", "Secret/b"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			Sort(tc.in)
			var got []string
			for _, h := range tc.in {
				got = append(got, h.Object.GetKind()+"/"+h.Name)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("order (-want +got):\n%s", diff)
			}
		})
	}
}
