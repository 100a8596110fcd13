package deploy_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
)

// The observer's identity as the API server sees it.
const observerSA = "system:serviceaccount:convoy-system:convoy-observer"

var observerGroups = []string{"system:serviceaccounts", "system:serviceaccounts:convoy-system", "system:authenticated"}

// The observer runs as its Deployment says: two replicas electing a leader under
// the ServiceAccount convoy-observer, metrics on :8082 behind a Service, probes on
// :8083, non-root with a read-only root file system.
func TestObserverDeployment(t *testing.T) {
	checkProcessDeployment(t, "observer", 8082, 8083)
}

// Each of the observer's roles is bound to its ServiceAccount, and to nothing else.
func TestObserverRolesAreBoundToItsServiceAccount(t *testing.T) {
	dir := filepath.Join(deployDir(t), "observer")
	objs := append(readObjects(t, filepath.Join(dir, "rbac.yaml")), readObjects(t, filepath.Join(dir, "target-rbac.yaml"))...)
	find(t, objs, "ServiceAccount", "convoy-observer")
	sa := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: "convoy-observer", Namespace: "convoy-system"}
	for _, b := range []struct{ kind, name, roleKind string }{
		{"ClusterRoleBinding", "convoy-observer", "ClusterRole"},
		{"ClusterRoleBinding", "convoy-observer-read", "ClusterRole"},
		{"ClusterRoleBinding", "convoy-observer-drift", "ClusterRole"},
		{"RoleBinding", "convoy-observer-leader-election", "Role"},
	} {
		ref, subjects := binding(t, objs, b.kind, b.name)
		if ref.Kind != b.roleKind || ref.Name != b.name {
			t.Errorf("%s %s refers to %s %s, want %s %s", b.kind, b.name, ref.Kind, ref.Name, b.roleKind, b.name)
		}
		find(t, objs, b.roleKind, b.name)
		if !slices.Equal(subjects, []rbacv1.Subject{sa}) {
			t.Errorf("%s %s binds %v, want only the ServiceAccount convoy-system/convoy-observer", b.kind, b.name, subjects)
		}
	}
}

// access is one request an identity may or may not make.
type access struct {
	group, resource, verb, namespace string
}

func (a access) String() string {
	where := "cluster-wide"
	if a.namespace != "" {
		where = "in " + a.namespace
	}
	return a.verb + " " + strings.TrimPrefix(a.resource+"."+a.group, ".") + " " + where
}

func (a access) review() *authorizationv1.SubjectAccessReview {
	resource, sub, _ := strings.Cut(a.resource, "/")
	return &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: observerSA, Groups: observerGroups,
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Group: a.group, Resource: resource, Subresource: sub, Verb: a.verb, Namespace: a.namespace,
		},
	}}
}

func accesses(group, namespace string, resources, verbs []string) []access {
	var out []access
	for _, r := range resources {
		for _, v := range verbs {
			out = append(out, access{group, r, v, namespace})
		}
	}
	return out
}

// applyObserverRBAC applies deploy/observer's RBAC and admission policy for real.
func applyObserverRBAC(t *testing.T) {
	t.Helper()
	ensureNamespace(t, "convoy-system")
	dir := filepath.Join(deployDir(t), "observer")
	runKubectl(t, "apply", "--server-side", "--field-manager=convoy-deploy-test",
		"-f", filepath.Join(dir, "rbac.yaml"), "-f", filepath.Join(dir, "target-rbac.yaml"))
}

// Applied for real, the observer's RBAC lets its ServiceAccount read Releases,
// Renders, ReleaseInventories and Clusters, write ReleaseInventory status, request
// /sync, read Cluster kubeconfig Secrets, elect a leader in convoy-system, record
// Events, and read and patch (for drift dry runs) any object on the host; and
// nothing else of what matters: no Release edits, no Release status, /pin,
// /mutations or /lifecycle, no ReleaseInventory or Render writes, no create, update
// or delete of the host's objects.
func TestObserverServiceAccountRights(t *testing.T) {
	needCluster(t)
	applyObserverRBAC(t)
	kube := kubernetes.NewForConfigOrDie(env.admin)
	const convoy, ns = convoyv1alpha1.GroupName, "shop"
	read := []string{"get", "list", "watch"}

	var allowed []access
	allowed = append(allowed, accesses(convoy, ns, []string{"releases", "renders", "releaseinventories"}, read)...)
	allowed = append(allowed, accesses(convoy, "", []string{"clusters"}, read)...)
	allowed = append(allowed, accesses(convoy, ns, []string{"releaseinventories/status"}, []string{"update", "patch"})...)
	allowed = append(allowed, access{convoy, "releases/sync", "create", ns})
	allowed = append(allowed, access{"", "secrets", "get", "clusters-kubeconfigs"})
	allowed = append(allowed, accesses("", "", []string{"namespaces"}, read)...)
	allowed = append(allowed, accesses("", ns, []string{"events"}, []string{"create"})...)
	allowed = append(allowed, accesses("coordination.k8s.io", "convoy-system", []string{"leases"}, []string{"get", "create", "update"})...)
	// The host as a target: any kind, read and patch (drift dry runs).
	allowed = append(allowed, accesses("apps", ns, []string{"deployments"}, append(read, "patch"))...)
	allowed = append(allowed, accesses("", "", []string{"configmaps", "secrets"}, read)...)
	allowed = append(allowed, accesses("widgets.example.com", ns, []string{"widgets"}, append(read, "patch"))...)
	allowed = append(allowed, accesses("rbac.authorization.k8s.io", "", []string{"clusterroles"}, read)...)

	// patch is not among these: convoy-observer-drift grants it on everything, and
	// the policy convoy-observer-dry-run-only denies it unless it is a dry run (see
	// TestObserverWritesOnlyDryRunsToTheHost).
	var forbidden []access
	forbidden = append(forbidden, accesses(convoy, ns, []string{"releases"}, []string{"create", "update", "delete"})...)
	forbidden = append(forbidden, accesses(convoy, ns, []string{"releases/status", "releases/pin", "releases/mutations", "releases/lifecycle"}, []string{"create", "update"})...)
	forbidden = append(forbidden, accesses(convoy, ns, []string{"releaseinventories", "renders"}, []string{"create", "update", "delete", "deletecollection"})...)
	forbidden = append(forbidden, accesses(convoy, "", []string{"clusters", "clusters/status"}, []string{"create", "update", "delete"})...)
	forbidden = append(forbidden, accesses("apps", ns, []string{"deployments"}, []string{"create", "update", "delete", "deletecollection"})...)
	forbidden = append(forbidden, accesses("apps", ns, []string{"deployments/scale"}, []string{"update"})...)
	forbidden = append(forbidden, accesses("", ns, []string{"configmaps", "secrets", "pods"}, []string{"create", "update", "delete"})...)
	forbidden = append(forbidden, accesses("", "", []string{"namespaces"}, []string{"create", "delete"})...)
	forbidden = append(forbidden, access{"coordination.k8s.io", "leases", "update", "kube-system"})
	forbidden = append(forbidden, access{"", "users", "impersonate", ""})
	forbidden = append(forbidden, accesses("rbac.authorization.k8s.io", "", []string{"clusterroles", "clusterrolebindings"}, []string{"create", "bind", "escalate"})...)

	for _, a := range allowed {
		// RBAC objects just written reach the authorizer through an informer.
		if reason := waitAllowed(t, kube, a.review()); reason != "" {
			t.Errorf("%s cannot %s: %s", observerSA, a, reason)
		}
	}
	for _, a := range forbidden {
		got, err := kube.AuthorizationV1().SubjectAccessReviews().Create(ctx(t), a.review(), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Status.Allowed {
			t.Errorf("%s may %s, want forbidden", observerSA, a)
		}
	}
}

// Acting as its ServiceAccount, the observer can dry-run a server-side apply of an
// object on the host (the drift check) but the admission policy
// convoy-observer-dry-run-only denies the same patch for real, and RBAC denies
// create, update and delete; on the convoy API the policy denies patches of
// Releases, Release status and ReleaseInventories; its own writes, a /sync
// request and a ReleaseInventory status update, go through.
func TestObserverWritesOnlyDryRunsToTheHost(t *testing.T) {
	needCluster(t)
	applyObserverRBAC(t)
	ns := testNamespace(t)
	admin := kubernetes.NewForConfigOrDie(env.admin)
	for _, name := range []string{"web", "canary"} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: map[string]string{"k": "v"}}
		if _, err := admin.CoreV1().ConfigMaps(ns).Create(ctx(t), cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := env.cluster.UserConfig(observerSA, observerGroups...)
	if err != nil {
		t.Fatal(err)
	}
	observer := kubernetes.NewForConfigOrDie(cfg)
	applyPatch := func(name, value string) []byte {
		b, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": name, "namespace": ns}, "data": map[string]any{"k": value}})
		return b
	}
	force := true
	patch := func(name, value string, dryRun bool) error {
		opts := metav1.PatchOptions{FieldManager: convoyv1alpha1.FieldManager, Force: &force}
		if dryRun {
			opts.DryRun = []string{metav1.DryRunAll}
		}
		_, err := observer.CoreV1().ConfigMaps(ns).Patch(ctx(t), name, types.ApplyPatchType, applyPatch(name, value), opts)
		return err
	}

	// The policy reaches admission through an informer: wait until it denies a real
	// patch of the canary (which may change it meanwhile; the test does not read it).
	var denial error
	err = wait.PollUntilContextTimeout(ctx(t), 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		denial = patch("canary", "changed", false)
		return denial != nil && strings.Contains(denial.Error(), "convoy-observer-dry-run-only"), nil
	})
	if err != nil {
		t.Fatalf("a real patch as the observer: %v, want a denial by convoy-observer-dry-run-only (%v)", denial, err)
	}

	if err := patch("web", "changed", true); err != nil {
		t.Errorf("server-side apply dry run as the observer: %v", err)
	}
	wantDeniedByPolicy(t, patch("web", "changed", false), "real server-side apply as the observer")
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "new"}}
	if _, err := observer.CoreV1().ConfigMaps(ns).Create(ctx(t), cm, metav1.CreateOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("create a ConfigMap as the observer: %v, want 403", err)
	}
	if err := observer.CoreV1().ConfigMaps(ns).Delete(ctx(t), "web", metav1.DeleteOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("delete a ConfigMap as the observer: %v, want 403", err)
	}
	live, err := admin.CoreV1().ConfigMaps(ns).Get(ctx(t), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if live.Data["k"] != "v" {
		t.Errorf("the observer changed the ConfigMap: data %v", live.Data)
	}

	// The convoy API: its own writes (POST /sync, ReleaseInventory status) but no patches.
	convoyAdmin, convoyObserver := convoyClient(t, env.admin), convoyClient(t, cfg)
	rel := &convoyv1alpha1.Release{
		TypeMeta:   metav1.TypeMeta{APIVersion: convoyv1alpha1.SchemeGroupVersion.String(), Kind: "Release"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "podinfo"},
		Spec: convoyv1alpha1.ReleaseSpec{
			Chart: convoyv1alpha1.ChartSource{Repository: "https://charts.example.com", Name: "podinfo", Version: "6.7.1"},
		},
	}
	if err := convoyAdmin.Post().Namespace(ns).Resource(convoyv1alpha1.ResourceReleases).Body(rel).Do(ctx(t)).Error(); err != nil {
		t.Fatalf("creating the Release: %v", err)
	}
	// convoy apiserver admits with the same policy, which it learns of through its
	// own informer: wait until it denies a patch of a canary Release as the observer.
	spec := map[string]any{"spec": map[string]any{"clusterWave": 2}}
	canary := rel.DeepCopy()
	canary.Name = "canary"
	if err := convoyAdmin.Post().Namespace(ns).Resource(convoyv1alpha1.ResourceReleases).Body(canary).Do(ctx(t)).Error(); err != nil {
		t.Fatalf("creating the canary Release: %v", err)
	}
	err = wait.PollUntilContextTimeout(ctx(t), 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		denial = mergePatch(convoyObserver, ctx, ns, "canary", "", spec)
		return denial != nil && strings.Contains(denial.Error(), "convoy-observer-dry-run-only"), nil
	})
	if err != nil {
		t.Fatalf("a patch of a Release as the observer: %v, want a denial by convoy-observer-dry-run-only (%v)", denial, err)
	}
	// Its own writes go through, once its RBAC (applied above) reaches the authorizer.
	kube := kubernetes.NewForConfigOrDie(env.admin)
	for _, a := range []access{
		{convoyv1alpha1.GroupName, "releases/sync", "create", ns},
		{convoyv1alpha1.GroupName, "releaseinventories/status", "update", ns},
	} {
		if reason := waitAllowed(t, kube, a.review()); reason != "" {
			t.Fatalf("%s cannot %s: %s", observerSA, a, reason)
		}
	}
	synced := &convoyv1alpha1.Release{}
	if err := convoyObserver.Post().Namespace(ns).Resource(convoyv1alpha1.ResourceReleases).Name("podinfo").
		SubResource(convoyv1alpha1.SubresourceSync).Do(ctx(t)).Into(synced); err != nil {
		t.Errorf("POST /sync as the observer: %v", err)
	} else if synced.Annotations[convoyv1alpha1.AnnotationSyncRequestedAt] == "" {
		t.Errorf("the observer's /sync wrote no %s", convoyv1alpha1.AnnotationSyncRequestedAt)
	}
	inv := &convoyv1alpha1.ReleaseInventory{
		TypeMeta:   metav1.TypeMeta{APIVersion: convoyv1alpha1.SchemeGroupVersion.String(), Kind: "ReleaseInventory"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "podinfo"},
	}
	if err := convoyAdmin.Post().Namespace(ns).Resource(convoyv1alpha1.ResourceReleaseInventories).Body(inv).Do(ctx(t)).Into(inv); err != nil {
		t.Fatalf("creating the ReleaseInventory: %v", err)
	}
	inv.Status.RenderRef = "sha256:" + strings.Repeat("0", 64)
	if err := convoyObserver.Put().Namespace(ns).Resource(convoyv1alpha1.ResourceReleaseInventories).Name("podinfo").
		SubResource(convoyv1alpha1.SubresourceStatus).Body(inv).Do(ctx(t)).Error(); err != nil {
		t.Errorf("update ReleaseInventory status as the observer: %v", err)
	}
	err = convoyObserver.Put().Namespace(ns).Resource(convoyv1alpha1.ResourceReleaseInventories).Name("podinfo").Body(inv).Do(ctx(t)).Error()
	wantForbidden(t, err, "update the ReleaseInventory as the observer", convoyv1alpha1.ResourceReleaseInventories)

	// Patches, which RBAC allows, are denied by the policy.
	for _, sub := range []string{"", convoyv1alpha1.SubresourceStatus} {
		err := mergePatch(convoyObserver, ctx(t), ns, "podinfo", sub, spec)
		wantDeniedByPolicy(t, err, "PATCH the Release /"+sub+" as the observer")
	}
	err = convoyObserver.Patch(types.MergePatchType).Namespace(ns).Resource(convoyv1alpha1.ResourceReleaseInventories).Name("podinfo").
		Body([]byte(`{"renderRef":"sha256:` + strings.Repeat("1", 64) + `"}`)).Do(ctx(t)).Error()
	wantDeniedByPolicy(t, err, "PATCH the ReleaseInventory as the observer")
	stored := &convoyv1alpha1.Release{}
	if err := convoyAdmin.Get().Namespace(ns).Resource(convoyv1alpha1.ResourceReleases).Name("podinfo").Do(ctx(t)).Into(stored); err != nil {
		t.Fatal(err)
	}
	if stored.Spec.ClusterWave != 0 {
		t.Errorf("the observer changed the Release: clusterWave %d", stored.Spec.ClusterWave)
	}
	// The policy leaves everyone else alone.
	if err := mergePatch(convoyAdmin, ctx(t), ns, "podinfo", "", spec); err != nil {
		t.Errorf("PATCH the Release as the admin, with the policy in place: %v", err)
	}
}

// wantDeniedByPolicy fails unless err is a 403 from convoy-observer-dry-run-only.
func wantDeniedByPolicy(t *testing.T, err error, what string) {
	t.Helper()
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "convoy-observer-dry-run-only") {
		t.Errorf("%s: %v, want a denial by convoy-observer-dry-run-only", what, err)
	}
}
