package deploy_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
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
	"k8s.io/client-go/rest"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/dev"
	"kumodo.io/convoy/internal/testenv"
)

// runKubectl runs kubectl as the cluster's admin and fails the test on an error.
func runKubectl(t *testing.T, args ...string) string {
	t.Helper()
	args = append([]string{"--kubeconfig", env.cluster.KubeconfigPath()}, args...)
	out, err := exec.CommandContext(ctx(t), kubectl(t), args...).CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args[2:], " "), err, out)
	}
	return string(out)
}

// ensureNamespace creates ns unless it exists (a dry run creates no namespace, so
// the namespaced objects of a dry run need it for real).
func ensureNamespace(t *testing.T, ns string) {
	t.Helper()
	kube := kubernetes.NewForConfigOrDie(env.admin)
	_, err := kube.CoreV1().Namespaces().Create(ctx(t), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

// The install command of deploy/README.md, kubectl apply -k deploy/, passes a
// server-side dry run on a cluster without convoy (run in TestMain before the
// in-process convoy apiserver is registered); and, with the convoy API registered
// as when upgrading, each object passes a server-side apply dry run.
func TestInstallPassesServerSideDryRun(t *testing.T) {
	needCluster(t)
	fresh := env.freshInstall
	if fresh.err != nil {
		t.Fatalf("kubectl apply --dry-run=server -k deploy/: %v\n%s", fresh.err, fresh.out)
	}
	out := string(fresh.out)
	for _, want := range []string{
		"deployment.apps/convoy-apiserver", "deployment.apps/convoy-controller", "statefulset.apps/convoy-etcd",
		"apiservice.apiregistration.k8s.io/v1alpha1.convoy.kumodo.io",
		"clusterrole.rbac.authorization.k8s.io/convoy-sync", "clusterrole.rbac.authorization.k8s.io/convoy-controller-apply",
		"service/convoy-controller-metrics",
		"deployment.apps/convoy-observer", "service/convoy-observer-metrics",
		"clusterrole.rbac.authorization.k8s.io/convoy-observer-read",
		"validatingadmissionpolicy.admissionregistration.k8s.io/convoy-observer-dry-run-only",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the dry run does not mention %s:\n%s", want, out)
		}
	}
	ensureNamespace(t, "convoy-system")
	// Upgrade: server-side apply (kubectl apply --server-side -k deploy/) of each
	// object but the APIService: that one is registered to the in-process server with
	// a caBundle, which a merge with insecureSkipTLSVerify makes invalid; check it as
	// a whole object instead.
	rendered := decodeObjects(t, kustomize(t, "."))
	var rest []interface{}
	for _, o := range rendered {
		if o.GetKind() == "APIService" {
			data, err := json.Marshal(o.Object)
			if err != nil {
				t.Fatal(err)
			}
			replace := exec.CommandContext(ctx(t), kubectl(t), "--kubeconfig", env.cluster.KubeconfigPath(), "replace", "--dry-run=server", "-f", "-")
			replace.Stdin = strings.NewReader(string(data))
			if out, err := replace.CombinedOutput(); err != nil {
				t.Errorf("kubectl replace --dry-run=server the APIService: %v\n%s", err, out)
			}
			continue
		}
		rest = append(rest, o.Object)
	}
	data, err := json.Marshal(map[string]interface{}{"apiVersion": "v1", "kind": "List", "items": rest})
	if err != nil {
		t.Fatal(err)
	}
	ssa := exec.CommandContext(ctx(t), kubectl(t), "--kubeconfig", env.cluster.KubeconfigPath(),
		"apply", "--dry-run=server", "--server-side", "--field-manager=convoy-deploy-test", "-f", "-")
	ssa.Stdin = strings.NewReader(string(data))
	if out, err := ssa.CombinedOutput(); err != nil {
		t.Errorf("kubectl apply --server-side --dry-run=server: %v\n%s", err, out)
	}
}

// Applied for real, the controller's RBAC lets its ServiceAccount do everything of
// dev.ControllerRules (the Lease in convoy-system).
func TestControllerServiceAccountCanDoControllerRules(t *testing.T) {
	needCluster(t)
	ensureNamespace(t, "convoy-system")
	dir := filepath.Join(deployDir(t), "controller")
	runKubectl(t, "apply", "--server-side", "--field-manager=convoy-deploy-test", "-f", filepath.Join(dir, "rbac.yaml"), "-f", filepath.Join(dir, "apply-rbac.yaml"),
		"-f", filepath.Join(dir, "impersonate-rbac.yaml"))
	kube := kubernetes.NewForConfigOrDie(env.admin)
	const user = "system:serviceaccount:convoy-system:convoy-controller"
	each(dev.ControllerRules(), func(g, res, verb string) {
		resource, sub, _ := strings.Cut(res, "/")
		attrs := &authorizationv1.ResourceAttributes{Group: g, Resource: resource, Subresource: sub, Verb: verb}
		if g == "coordination.k8s.io" {
			attrs.Namespace = "convoy-system"
		}
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: user, Groups: []string{"system:serviceaccounts", "system:serviceaccounts:convoy-system", "system:authenticated"},
			ResourceAttributes: attrs,
		}}
		if reason := waitAllowed(t, kube, sar); reason != "" {
			t.Errorf("%s cannot %s %s.%s in %q: %s", user, verb, res, g, attrs.Namespace, reason)
		}
	})
}

// A user bound only to convoy-sync can sync a Release and read it, and gets 403,
// naming what is missing, on /pin, /mutations, /lifecycle, a spec change and Renders.
// A user bound to convoy-view reads everything and cannot sync.
func TestSyncAndViewRolesOnConvoyAPI(t *testing.T) {
	needCluster(t)
	runKubectl(t, "apply", "--server-side", "--field-manager=convoy-deploy-test", "-k", filepath.Join(deployDir(t), "rbac"))
	ns := testNamespace(t)
	admin := convoyClient(t, env.admin)
	rel := &convoyv1alpha1.Release{
		TypeMeta:   metav1.TypeMeta{APIVersion: convoyv1alpha1.SchemeGroupVersion.String(), Kind: "Release"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "podinfo"},
		Spec: convoyv1alpha1.ReleaseSpec{
			Chart: convoyv1alpha1.ChartSource{Repository: "https://charts.example.com", Name: "podinfo", Version: "6.7.1"},
		},
	}
	created := &convoyv1alpha1.Release{}
	if err := admin.Post().Namespace(ns).Resource("releases").Body(rel).Do(ctx(t)).Into(created); err != nil {
		t.Fatalf("creating the Release: %v", err)
	}

	oncall := bindUser(t, ns, "oncall-"+testenv.RandomSuffix(), "convoy-sync")
	synced := &convoyv1alpha1.Release{}
	if err := oncall.Post().Namespace(ns).Resource("releases").Name("podinfo").SubResource("sync").Param("force", "true").Do(ctx(t)).Into(synced); err != nil {
		t.Fatalf("POST /sync?force=true with convoy-sync: %v", err)
	}
	if synced.Annotations[convoyv1alpha1.AnnotationSyncForceRequestedAt] == "" {
		t.Errorf("the sync wrote no %s", convoyv1alpha1.AnnotationSyncForceRequestedAt)
	}
	if err := oncall.Get().Namespace(ns).Resource("releases").Name("podinfo").Do(ctx(t)).Error(); err != nil {
		t.Errorf("GET the Release with convoy-sync: %v", err)
	}
	if err := oncall.Get().Namespace(ns).Resource("releases").Do(ctx(t)).Error(); err != nil {
		t.Errorf("LIST Releases with convoy-sync: %v", err)
	}
	for _, sub := range []string{"", "pin", "mutations", "lifecycle", "status"} {
		err := mergePatch(oncall, ctx(t), ns, "podinfo", sub, map[string]interface{}{"spec": map[string]interface{}{"clusterWave": 2}})
		wantForbidden(t, err, "PATCH /"+sub+" with convoy-sync", strings.TrimSuffix("releases/"+sub, "/"))
	}
	put := created.DeepCopy()
	put.Spec.ClusterWave = 2
	err := oncall.Put().Namespace(ns).Resource("releases").Name("podinfo").Body(put).Do(ctx(t)).Error()
	wantForbidden(t, err, "PUT the Release with convoy-sync", "releases")
	err = oncall.Get().Namespace(ns).Resource("renders").Do(ctx(t)).Error()
	wantForbidden(t, err, "LIST Renders with convoy-sync", "renders")
	stored := &convoyv1alpha1.Release{}
	if err := admin.Get().Namespace(ns).Resource("releases").Name("podinfo").Do(ctx(t)).Into(stored); err != nil {
		t.Fatal(err)
	}
	if stored.Spec.ClusterWave != 0 || stored.Generation != created.Generation {
		t.Errorf("the spec changed: clusterWave %d, generation %d (was %d)", stored.Spec.ClusterWave, stored.Generation, created.Generation)
	}

	viewer := bindUser(t, ns, "viewer-"+testenv.RandomSuffix(), "convoy-view")
	for _, res := range []string{"releases", "renders", "releaseinventories"} {
		if err := viewer.Get().Namespace(ns).Resource(res).Do(ctx(t)).Error(); err != nil {
			t.Errorf("LIST %s with convoy-view: %v", res, err)
		}
	}
	if err := viewer.Get().Resource("clusters").Do(ctx(t)).Error(); err != nil {
		t.Errorf("LIST clusters with convoy-view (ClusterRoleBinding): %v", err)
	}
	err = viewer.Post().Namespace(ns).Resource("releases").Name("podinfo").SubResource("sync").Do(ctx(t)).Error()
	wantForbidden(t, err, "POST /sync with convoy-view", "releases/sync")
}

// bindUser binds user to the ClusterRole role in ns (a RoleBinding) and, for
// cluster-scoped Clusters, cluster-wide (a ClusterRoleBinding, deleted after the
// test), and returns a convoy client as user.
func bindUser(t *testing.T, ns, user, role string) *rest.RESTClient {
	t.Helper()
	kube := kubernetes.NewForConfigOrDie(env.admin)
	subjects := []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}
	ref := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role}
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: user}, RoleRef: ref, Subjects: subjects}
	if _, err := kube.RbacV1().RoleBindings(ns).Create(ctx(t), rb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if role == "convoy-view" {
		crb := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user}, RoleRef: ref, Subjects: subjects}
		if _, err := kube.RbacV1().ClusterRoleBindings().Create(ctx(t), crb, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = kube.RbacV1().ClusterRoleBindings().Delete(context.Background(), user, metav1.DeleteOptions{})
		})
	}
	// Wait until the host's RBAC authorizer sees the binding: convoy apiserver asks
	// it and caches a denial for a while.
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User:               user,
		ResourceAttributes: &authorizationv1.ResourceAttributes{Group: convoyv1alpha1.GroupName, Resource: "releases", Verb: "get", Namespace: ns},
	}}
	if reason := waitAllowed(t, kube, sar); reason != "" {
		t.Fatalf("%s bound to %s cannot get releases: %s", user, role, reason)
	}
	if role == "convoy-view" {
		// The ClusterRoleBinding reaches the authorizer on its own (another informer).
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User:               user,
			ResourceAttributes: &authorizationv1.ResourceAttributes{Group: convoyv1alpha1.GroupName, Resource: "clusters", Verb: "list"},
		}}
		if reason := waitAllowed(t, kube, sar); reason != "" {
			t.Fatalf("%s bound cluster-wide to %s cannot list clusters: %s", user, role, reason)
		}
	}
	cfg, err := env.cluster.UserConfig(user)
	if err != nil {
		t.Fatal(err)
	}
	return convoyClient(t, cfg)
}

// waitAllowed polls the SubjectAccessReview sar for up to 15 seconds (RBAC objects
// just written reach the authorizer through an informer) and returns "" once it is
// allowed, else the last reason.
func waitAllowed(t *testing.T, kube kubernetes.Interface, sar *authorizationv1.SubjectAccessReview) string {
	t.Helper()
	reason := "not allowed"
	err := wait.PollUntilContextTimeout(ctx(t), 50*time.Millisecond, 15*time.Second, true, func(ctx context.Context) (bool, error) {
		got, err := kube.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
		if err != nil {
			return false, err
		}
		reason = got.Status.Reason
		return got.Status.Allowed, nil
	})
	if err != nil {
		return fmt.Sprintf("%s (%v)", reason, err)
	}
	return ""
}

// wantForbidden fails unless err is a 403 whose message names resource.
func wantForbidden(t *testing.T, err error, what, resource string) {
	t.Helper()
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Code != http.StatusForbidden {
		t.Errorf("%s: %v, want 403", what, err)
		return
	}
	if msg := err.Error(); !strings.Contains(msg, `"`+resource+`"`) {
		t.Errorf("%s: the error %q does not name %q", what, msg, resource)
	}
}

// convoyClient returns a REST client of convoy.kumodo.io/v1alpha1 for cfg.
func convoyClient(t *testing.T, cfg *rest.Config) *rest.RESTClient {
	t.Helper()
	return testenv.RESTClient(t, cfg)
}

// mergePatch sends a JSON merge patch to the main resource or a subresource.
func mergePatch(c *rest.RESTClient, ctx context.Context, ns, name, subresource string, patch interface{}) error {
	body, err := json.Marshal(patch)
	if err != nil {
		return err
	}
	req := c.Patch(types.MergePatchType).Namespace(ns).Resource("releases").Name(name).Body(body)
	if subresource != "" {
		req = req.SubResource(subresource)
	}
	return req.Do(ctx).Error()
}

// testNamespace creates a namespace for one test and deletes it afterwards.
func testNamespace(t *testing.T) string {
	t.Helper()
	kube := kubernetes.NewForConfigOrDie(env.admin)
	name := "deploy-test-" + testenv.RandomSuffix()
	_, err := kube.CoreV1().Namespaces().Create(ctx(t), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
	t.Cleanup(func() { _ = kube.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	return name
}
