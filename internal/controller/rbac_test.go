package controller

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// The target cluster of these tests is the local control plane reached as a
// restricted user: a Cluster whose kubeconfig Secret holds a client certificate of
// that user, whose Role in the test's namespace grants some kinds and verbs only.

var (
	allVerbs       = []string{"get", "list", "watch", "create", "update", "patch", "delete"}
	allButDelete   = []string{"get", "list", "watch", "create", "update", "patch"}
	secretWithData = values(`{"secret":"s3cret"}`)
)

// oneSecondRetries makes transient failures retry every second (factor 1), so the
// tests see several retries, and a granted permission is used within a second.
func oneSecondRetries() releaseOption {
	return func(r *v1.Release) {
		r.Spec.SyncPolicy.RetryBackoff = &v1.RetryBackoff{Initial: &metav1.Duration{Duration: time.Second}, Factor: v1.NewFactor(1)}
	}
}

// restrictedTarget creates a Role in the test's namespace with rules, a user bound to
// it, and a Cluster that reaches the local control plane as that user. It returns the
// Cluster's name and the Role, to change with grant.
func (e *env) restrictedTarget(rules ...rbacv1.PolicyRule) (string, *rbacv1.Role) {
	e.t.Helper()
	user := "restricted-" + e.ns
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "deployer"}, Rules: rules}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "deployer"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
	}
	for _, obj := range []client.Object{role, binding} {
		if err := e.client.Create(e.ctx, obj); err != nil {
			e.t.Fatalf("create %T: %v", obj, err)
		}
	}
	path, err := controlPlane.UserKubeconfig(user)
	if err != nil {
		e.t.Fatal(err)
	}
	kubeconfig, err := os.ReadFile(path)
	if err != nil {
		e.t.Fatal(err)
	}
	e.createSecret("restricted-kubeconfig", kubeconfig)
	name := e.createCluster("restricted-"+e.ns, "restricted-kubeconfig")
	return name, role
}

// grant replaces the rules of role.
func (e *env) grant(role *rbacv1.Role, rules ...rbacv1.PolicyRule) {
	e.t.Helper()
	current := &rbacv1.Role{}
	if err := e.client.Get(e.ctx, client.ObjectKeyFromObject(role), current); err != nil {
		e.t.Fatal(err)
	}
	current.Rules = rules
	if err := e.client.Update(e.ctx, current); err != nil {
		e.t.Fatalf("update Role %s: %v", role.Name, err)
	}
}

func rule(resource string, verbs ...string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{resource}, Verbs: verbs}
}

// secret reads a Secret of the test's namespace; nil when it does not exist.
func (e *env) secret(name string) *corev1.Secret {
	e.t.Helper()
	s := &corev1.Secret{}
	if err := e.client.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: name}, s); err != nil {
		if client.IgnoreNotFound(err) == nil {
			return nil
		}
		e.t.Fatalf("get Secret %s: %v", name, err)
	}
	return s
}

// inventoryNames lists "Kind/name" of the Release's inventory; nil when it has none.
func (e *env) inventoryNames(name string) []string {
	e.t.Helper()
	inv := &v1.ReleaseInventory{}
	if err := e.client.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: name}, inv); err != nil {
		if client.IgnoreNotFound(err) == nil {
			return nil
		}
		e.t.Fatalf("get ReleaseInventory %s: %v", name, err)
	}
	var out []string
	for _, o := range inv.Objects {
		out = append(out, o.Kind+"/"+o.Name)
	}
	slices.Sort(out)
	return out
}

// TestSP34_RBACRefusedApplyIsDeployFailedAndAppliesNothing: the target's user may write
// ConfigMaps but not Secrets. The pre-apply dry run of the Secret is refused (403):
// DeployFailed — transient, as a permission can be granted without changing the
// render (not Unappliable) — with a message naming the object and the permission;
// the ConfigMap, which the user may write, is not applied either, at any retry.
// Once the permission is granted, a retry applies the whole render.
func TestSP34_RBACRefusedApplyIsDeployFailedAndAppliesNothing(t *testing.T) {
	// seed: "Transient failures include SourceNotReady, ValuesNotReady, ClusterNotReady,
	// DeployFailed and PruneFailed." A grant is no event the controller watches: only
	// the retries of a transient failure see it.
	e := newEnv(t, envOptions{})
	target, role := e.restrictedTarget(rule("configmaps", allVerbs...))
	e.createRelease("web", automatic(), cluster(target), secretWithData, oneSecondRetries())

	rel := e.waitApplied("web", "False", v1.ReasonDeployFailed)
	msg := appliedMessage(rel)
	for _, want := range []string{"Secret", "web-secret", `cannot patch resource "secrets"`, "restricted-" + e.ns} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q does not say %q", msg, want)
		}
	}
	// Transient: retried, and no retry applies anything.
	n := e.reconciles("web")
	e.waitReconciled("web", n+1)
	e.consistently("nothing applied while the Secret is refused", 2*time.Second, func() (bool, string) {
		cm, s := e.configMap("web-config"), e.secret("web-secret")
		return cm == nil && s == nil && e.inventoryNames("web") == nil,
			fmt.Sprintf("ConfigMap %v, Secret %v, inventory %v", cm != nil, s != nil, e.inventoryNames("web"))
	})
	if rel := e.release("web"); rel.Status.LastSuccessful != nil {
		t.Errorf("lastSuccessful %+v, want none", rel.Status.LastSuccessful)
	}
	wantRetryIn(t, e, "web", time.Second)

	e.grant(role, rule("configmaps", allVerbs...), rule("secrets", allVerbs...))
	e.waitApplied("web", "True", v1.ReasonApplied)
	if e.configMap("web-config") == nil || e.secret("web-secret") == nil {
		t.Error("the render was not applied once permitted")
	}
	if got, want := e.inventoryNames("web"), []string{"ConfigMap/web-config", "Secret/web-secret"}; !slices.Equal(got, want) {
		t.Errorf("inventory %v, want %v", got, want)
	}
}

// TestSP34_RBACRefusedPruneIsPruneFailedUntilGranted: the user may write Secrets but not
// delete them. A render that drops the Secret applies, then its prune is refused:
// PruneFailed naming the object and the permission; the Secret stays, and stays in
// the inventory so that it is not lost track of. Once delete is granted, the next
// retry prunes it and the inventory is exactly the render.
func TestSP34_RBACRefusedPruneIsPruneFailedUntilGranted(t *testing.T) {
	// seed: "Transient failures include [...] DeployFailed and PruneFailed." As above,
	// only a retry sees the grant.
	e := newEnv(t, envOptions{})
	target, role := e.restrictedTarget(rule("configmaps", allVerbs...), rule("secrets", allButDelete...))
	e.createRelease("web", automatic(), cluster(target), secretWithData, oneSecondRetries())
	e.waitApplied("web", "True", v1.ReasonApplied)
	if e.secret("web-secret") == nil {
		t.Fatal("web-secret not applied")
	}

	e.update("web", values(`{"secret":"","greeting":"without the secret"}`))
	rel := e.waitApplied("web", "False", v1.ReasonPruneFailed)
	msg := appliedMessage(rel)
	for _, want := range []string{"web-secret", `cannot delete resource "secrets"`} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q does not say %q", msg, want)
		}
	}
	if cm := e.configMap("web-config"); cm == nil || cm.Data["greeting"] != "without the secret" {
		t.Errorf("web-config %+v, want the new render applied before the prune", cm)
	}
	n := e.reconciles("web")
	e.waitReconciled("web", n+1)
	wantRetryIn(t, e, "web", time.Second)
	if e.secret("web-secret") == nil {
		t.Error("web-secret is gone although its delete is refused")
	}
	if got := e.inventoryNames("web"); !slices.Contains(got, "Secret/web-secret") {
		t.Errorf("inventory %v, want it to keep Secret/web-secret, whose prune failed", got)
	}

	e.grant(role, rule("configmaps", allVerbs...), rule("secrets", allVerbs...))
	e.waitApplied("web", "True", v1.ReasonApplied)
	e.eventually("web-secret pruned", func() (bool, string) {
		s := e.secret("web-secret")
		return s == nil || s.DeletionTimestamp != nil, fmt.Sprintf("Secret %+v", s)
	})
	if got, want := e.inventoryNames("web"), []string{"ConfigMap/web-config"}; !slices.Equal(got, want) {
		t.Errorf("inventory %v, want exactly the render %v", got, want)
	}
}

// wantRetryIn checks that the last reconcile of name ended in a transient failure
// retried after d (retryBackoff), not a wait for the next periodic reconcile.
func wantRetryIn(t *testing.T, e *env, name string, d time.Duration) {
	t.Helper()
	if r, _ := e.lastResult(name); r.err != nil || r.res.RequeueAfter != d {
		t.Errorf("last result %+v, want a retry after %s", r, d)
	}
}
