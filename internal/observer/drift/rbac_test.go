package drift

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/testenv"
)

// An identity with get and patch (no create, update or delete) can check drift,
// also of a missing object; one without patch on a kind gets an error that
// names the object it could not check, and the drift of the others.
func TestCheckNeedsGetAndPatchOnly(t *testing.T) {
	e := integration(t)
	cm, gone, dep := configMap(e.ns, "web", map[string]any{"k": "v"}), configMap(e.ns, "gone", map[string]any{"k": "v"}), deployment(e.ns, "web")
	e.applyAsConvoy(t, cm, dep)
	e.editAs(t, "kubectl-edit", cm, func(live *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(live.Object, "changed", "data", "k")
	})

	const user = "drift-observer"
	testenv.Grant(t, e.ctx, e.client, e.ns, user,
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "patch"}},
		rbacv1.PolicyRule{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"get"}},
	)
	cfg, err := cluster.UserConfig(user)
	if err != nil {
		t.Fatal(err)
	}
	observer := newClient(t, cfg)

	want := []v1alpha1.DriftedObject{
		{ObjectReference: ref(gone), Fields: []string{Missing}},
		{ObjectReference: ref(cm), Fields: []string{"data.k"}},
	}
	// The RoleBinding reaches the authorizer through an informer: poll until the
	// ConfigMaps can be checked.
	var got []v1alpha1.DriftedObject
	eventually(t, func() error {
		got, err = New(Options{}).Check(e.ctx, observer, []*unstructured.Unstructured{cm, gone})
		return err
	})
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("drift checked with get and patch (-want +got):\n%s", diff)
	}

	got, err = New(Options{}).Check(e.ctx, observer, []*unstructured.Unstructured{dep, cm, gone})
	if err == nil || !strings.Contains(err.Error(), "Deployment "+e.ns+"/web (apps)") || !strings.Contains(err.Error(), "forbidden") {
		t.Errorf("Check without patch on Deployments: error %v, want a forbidden dry run of the Deployment", err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("drift of the objects that could be checked (-want +got):\n%s", diff)
	}
}
