package integration_test

import (
	"net/http"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/testenv"
)

// grant gives user the rules in namespace ns and returns a convoy client as user.
func grant(t *testing.T, ns, user string, rules ...rbacv1.PolicyRule) *rest.RESTClient {
	t.Helper()
	kube := kubernetes.NewForConfigOrDie(env.admin)
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: user}, Rules: rules}
	if _, err := kube.RbacV1().Roles(ns).Create(ctx(t), role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: user},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: user},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
	}
	if _, err := kube.RbacV1().RoleBindings(ns).Create(ctx(t), binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Before the binding is in force convoy apiserver would be told no, and cache it.
	admin, err := client.New(env.admin, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	testenv.WaitAllowed(t, ctx(t), admin, ns, user, rules...)
	cfg, err := env.cluster.UserConfig(user)
	if err != nil {
		t.Fatal(err)
	}
	return convoyClient(t, cfg)
}

func rule(resource string, verbs ...string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{APIGroups: []string{convoyv1alpha1.GroupName}, Resources: []string{resource}, Verbs: verbs}
}

// A user allowed to update releases but not to create releases/sync gets 403 from /sync.
func TestRBAC_UpdateWithoutSyncIsForbidden(t *testing.T) {
	ns := testNamespace(t)
	create(t, release(ns, "podinfo"))
	editor := grant(t, ns, "editor-"+testenv.RandomSuffix(), rule("releases", "get", "list", "update", "patch"))

	if _, err := mergePatch(editor, ctx(t), ns, "podinfo", "", map[string]interface{}{"spec": map[string]interface{}{"clusterWave": 2}}); err != nil {
		t.Fatalf("the editor cannot patch the spec: %v", err)
	}
	_, err := postSync(editor, ctx(t), ns, "podinfo", "")
	if statusCode(err) != http.StatusForbidden {
		t.Fatalf("POST /sync as the editor: %v, want 403", err)
	}
	for _, sub := range []string{"pin", "mutations", "lifecycle", "status"} {
		_, err := mergePatch(editor, ctx(t), ns, "podinfo", sub, map[string]interface{}{"metadata": map[string]interface{}{}})
		if statusCode(err) != http.StatusForbidden {
			t.Errorf("PATCH /%s as the editor: %v, want 403", sub, err)
		}
	}
}

// A user allowed only releases/sync can sync but cannot change spec (or read it).
func TestRBAC_SyncOnlyCannotChangeSpec(t *testing.T) {
	ns := testNamespace(t)
	create(t, release(ns, "podinfo"))
	oncall := grant(t, ns, "oncall-"+testenv.RandomSuffix(), rule("releases/sync", "create"))

	got, err := postSync(oncall, ctx(t), ns, "podinfo", "true")
	if err != nil {
		t.Fatalf("POST /sync?force=true as on-call: %v", err)
	}
	if got.Annotations[convoyv1alpha1.AnnotationSyncForceRequestedAt] == "" {
		t.Errorf("the force was not written")
	}
	_, err = mergePatch(oncall, ctx(t), ns, "podinfo", "", map[string]interface{}{"spec": map[string]interface{}{"clusterWave": 2}})
	if statusCode(err) != http.StatusForbidden {
		t.Errorf("PATCH spec as on-call: %v, want 403", err)
	}
	if stored := get(t, ns, "podinfo"); stored.Spec.ClusterWave != 0 || stored.Generation != 1 {
		t.Errorf("spec changed: clusterWave %d, generation %d", stored.Spec.ClusterWave, stored.Generation)
	}
}
