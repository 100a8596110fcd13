package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/localcluster"
	"kumodo.io/convoy/internal/testenv"
)

// A user bound only to the convoy-sync ClusterRole of deploy/rbac can request a
// sync (also forced) and read the Release with the plugin, but cannot pin, unpin,
// write mutations or read the Renders, and each refusal names the RBAC rule that
// is missing.
func TestConvoySyncRoleWithThePlugin(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	createRenderedRelease(t, ns, "podinfo")
	kubeconfig := bindToClusterRole(t, ns, "oncall-"+testenv.RandomSuffix(), deployClusterRole(t, "convoy-sync.yaml"))
	as := func(args ...string) result {
		return plugin(t, nil, append([]string{"--kubeconfig", kubeconfig, "-n", ns}, args...)...)
	}

	for _, args := range [][]string{
		{"release", "sync", "podinfo"},
		{"release", "sync", "podinfo", "--force"},
		{"release", "status", "podinfo"},
		{"release", "list"},
	} {
		if res := as(args...); res.code != ExitOK {
			t.Errorf("%v with convoy-sync: exit %d, stderr %s", args, res.code, res.stderr)
		}
	}
	if a := getRelease(t, ns, "podinfo").Annotations; a[v1.AnnotationSyncForceRequestedAt] == "" {
		t.Errorf("no %s after sync --force with convoy-sync", v1.AnnotationSyncForceRequestedAt)
	}

	mutations := filepath.Join(t.TempDir(), "mutations.yaml")
	if err := os.WriteFile(mutations, []byte("- target: {kind: ConfigMap, name: podinfo}\n  patch: |\n    data: {a: c}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		rule string
	}{
		{[]string{"release", "pin", "podinfo", "--render", refA}, "resources: [releases/pin], verbs: [patch]"},
		{[]string{"release", "unpin", "podinfo"}, "resources: [releases/pin], verbs: [patch]"},
		{[]string{"release", "mutate", "podinfo", "-f", mutations}, "resources: [releases/mutations], verbs: [patch]"},
		{[]string{"release", "history", "podinfo"}, "resources: [renders], verbs: [list]"},
	} {
		res := as(tc.args...)
		if res.code != ExitFailure {
			t.Errorf("%v with convoy-sync: exit %d, want 1", tc.args, res.code)
		}
		if !strings.Contains(res.stderr, "missing RBAC rule apiGroups: [convoy.kumodo.io], "+tc.rule) {
			t.Errorf("%v with convoy-sync: stderr %q does not name the rule %q", tc.args, res.stderr, tc.rule)
		}
	}
	r := getRelease(t, ns, "podinfo")
	if r.Pin != nil || len(r.Mutations) != 0 || r.Generation != 1 {
		t.Errorf("convoy-sync changed the Release: pin %+v, mutations %+v, generation %d", r.Pin, r.Mutations, r.Generation)
	}
}

// deployClusterRole reads a ClusterRole of deploy/rbac/ and creates it on the local
// control plane unless it is there.
func deployClusterRole(t *testing.T, file string) string {
	t.Helper()
	root, err := localcluster.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "deploy", "rbac", file))
	if err != nil {
		t.Fatal(err)
	}
	role := &rbacv1.ClusterRole{}
	if err := yaml.UnmarshalStrict(data, role); err != nil {
		t.Fatalf("deploy/rbac/%s: %v", file, err)
	}
	kube := kubernetes.NewForConfigOrDie(env.admin)
	if _, err := kube.RbacV1().ClusterRoles().Create(testCtx(t), role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	return role.Name
}

// bindToClusterRole binds user to the ClusterRole role in ns, waits until the
// authorizer allows what the role grants, and returns a kubeconfig of user.
func bindToClusterRole(t *testing.T, ns, user, role string) string {
	t.Helper()
	kube := kubernetes.NewForConfigOrDie(env.admin)
	rb := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: user},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
	}
	if _, err := kube.RbacV1().RoleBindings(ns).Create(testCtx(t), rb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// convoy apiserver asks the host's authorizer, which learns of the binding
	// through an informer, and caches a denial for a while: wait for an allow first.
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: user,
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Group: v1.GroupName, Resource: v1.ResourceReleases, Verb: "get", Namespace: ns},
	}}
	err := wait.PollUntilContextTimeout(testCtx(t), 50*time.Millisecond, 15*time.Second, true, func(ctx context.Context) (bool, error) {
		got, err := kube.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
		return err == nil && got.Status.Allowed, nil
	})
	if err != nil {
		t.Fatalf("%s bound to %s cannot get releases: %v", user, role, err)
	}
	cfg, err := env.cluster.UserConfig(user)
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(t.TempDir(), user+".kubeconfig")
	if err := writeKubeconfig(kubeconfig, cfg); err != nil {
		t.Fatal(err)
	}
	return kubeconfig
}
