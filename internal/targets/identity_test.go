package targets

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/testenv"
)

func TestIdentityOf(t *testing.T) {
	cases := map[string]struct {
		serviceAccountName, defaultSA string
		want                          Identity
		user                          string
	}{
		"neither: convoy itself":  {want: Identity{}, user: ""},
		"spec.serviceAccountName": {serviceAccountName: "deployer", want: Identity{Namespace: "team-a", ServiceAccount: "deployer"}, user: "system:serviceaccount:team-a:deployer"},
		"lockdown default":        {defaultSA: "convoy", want: Identity{Namespace: "team-a", ServiceAccount: "convoy"}, user: "system:serviceaccount:team-a:convoy"},
		"the Release's name wins": {serviceAccountName: "deployer", defaultSA: "convoy", want: Identity{Namespace: "team-a", ServiceAccount: "deployer"}, user: "system:serviceaccount:team-a:deployer"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rel := releaseIn("team-a", "")
			rel.Spec.ServiceAccountName = tc.serviceAccountName
			got := IdentityOf(rel, tc.defaultSA)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("IdentityOf (-want +got):\n%s", diff)
			}
			if got.UserName() != tc.user {
				t.Errorf("UserName() = %q, want %q", got.UserName(), tc.user)
			}
			cfg := Impersonating(&rest.Config{Host: "https://127.0.0.1:1"}, got)
			if cfg.Impersonate.UserName != tc.user {
				t.Errorf("Impersonate.UserName = %q, want %q", cfg.Impersonate.UserName, tc.user)
			}
		})
	}
}

// TestResolveActsAsTheServiceAccount: with spec.serviceAccountName, the target's
// client makes its requests as that ServiceAccount (what its Role allows, nothing
// else), and Base keeps convoy's own identity.
func TestResolveActsAsTheServiceAccount(t *testing.T) {
	e := integration(t, nil)
	other := testenv.Namespace(t, e.ctx, e.client, "clusters-other", nil)
	createServiceAccount(t, e, "deployer")
	testenv.Grant(t, e.ctx, e.client, e.ns, "system:serviceaccount:"+e.ns+":deployer", configMapRules())
	rel := releaseIn(e.ns, "")
	rel.Spec.ServiceAccountName = "deployer"

	target, err := e.cache.Resolve(e.ctx, rel)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Identity{Namespace: e.ns, ServiceAccount: "deployer"}, target.Identity); diff != "" {
		t.Errorf("Identity (-want +got):\n%s", diff)
	}
	if target.Base == nil || target.Base == target || !target.Base.Identity.IsZero() {
		t.Fatalf("Base %p of %p is not convoy's own connection", target.Base, target)
	}
	applyConfigMap(t, e, target, "allowed")
	if !existsOn(t, e.ctx, e.client, e.ns, "allowed") {
		t.Error("the ConfigMap the ServiceAccount may create is not there")
	}

	err = target.Client.Create(e.ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: other, Name: "refused"}})
	wantForbidden(t, err, "system:serviceaccount:"+e.ns+":deployer")
	if existsOn(t, e.ctx, e.client, other, "refused") {
		t.Error("the ConfigMap in the other namespace was created")
	}
	if err := target.Base.Client.Create(e.ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: other, Name: "by-convoy"}}); err != nil {
		t.Errorf("convoy's own connection cannot create in %s: %v", other, err)
	}

	again, err := e.cache.Resolve(e.ctx, rel)
	if err != nil {
		t.Fatal(err)
	}
	if again != target {
		t.Error("a second Resolve made a new connection for the same identity")
	}
	hostTarget, err := e.cache.Host(e.ctx, rel)
	if err != nil {
		t.Fatal(err)
	}
	if hostTarget != target {
		t.Error("Host of a Release on the host is not its Resolve")
	}
}

// TestLockdownNeedsTheServiceAccount: with DefaultServiceAccount, a Release without
// spec.serviceAccountName acts as that ServiceAccount of its namespace; when it does
// not exist, Resolve says which ServiceAccount to create (ServiceAccountNotFound), and
// once it exists acts as it.
func TestLockdownNeedsTheServiceAccount(t *testing.T) {
	e := integration(t, nil)
	locked, err := New(Options{Host: host.RestConfig(), Reader: e.client, DefaultServiceAccount: "convoy-deployer"})
	if err != nil {
		t.Fatal(err)
	}
	rel := releaseIn(e.ns, "")

	_, err = locked.Resolve(e.ctx, rel)
	ne, ok := errors.AsType[*NotReadyError](err)
	if !ok || ne.Kind != ServiceAccountMissing || ne.Reason() != v1alpha1.ReasonServiceAccountNotFound {
		t.Fatalf("Resolve without the ServiceAccount: %v, want a ServiceAccountMissing NotReadyError", err)
	}
	for _, want := range []string{"ServiceAccount " + e.ns + "/convoy-deployer", "--default-service-account", "create it in namespace"} {
		if !strings.Contains(ne.Message, want) {
			t.Errorf("message %q does not contain %q", ne.Message, want)
		}
	}
	if _, err := locked.Host(e.ctx, rel); !IsNotReady(err) {
		t.Errorf("Host without the ServiceAccount: %v, want a NotReadyError", err)
	}

	createServiceAccount(t, e, "convoy-deployer")
	target, err := locked.Resolve(e.ctx, rel)
	if err != nil {
		t.Fatal(err)
	}
	if got := target.Identity.UserName(); got != "system:serviceaccount:"+e.ns+":convoy-deployer" {
		t.Errorf("acts as %q", got)
	}
	err = target.Client.Create(e.ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "no-role"}})
	wantForbidden(t, err, "system:serviceaccount:"+e.ns+":convoy-deployer")
}

// TestResolveRemoteActsAsTheServiceAccount: under lockdown the same impersonation
// applies on a remote Cluster, whose kubeconfig identity may impersonate: what the
// ServiceAccount may do there is what the remote cluster's RBAC grants it.
func TestResolveRemoteActsAsTheServiceAccount(t *testing.T) {
	e := integration(t, nil)
	cl := e.clusterFor(t, remoteKubeconfig(t), "value", nil)
	createServiceAccount(t, e, "deployer")
	locked, err := New(Options{Host: host.RestConfig(), Reader: e.client, DefaultServiceAccount: "deployer"})
	if err != nil {
		t.Fatal(err)
	}
	target, err := locked.Resolve(e.ctx, releaseIn(e.ns, cl.Name))
	if err != nil {
		t.Fatal(err)
	}
	if target.Config.Host != remote.Host() || target.Identity.IsZero() {
		t.Fatalf("target at %s as %s, want the remote as the ServiceAccount", target.Config.Host, target.Identity)
	}
	rc, err := client.New(remote.RestConfig(), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	user := "system:serviceaccount:" + e.ns + ":deployer"
	remoteNS := testenv.Namespace(t, e.ctx, rc, "team", nil)
	cm := func(ns, name string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	}
	wantForbidden(t, target.Client.Create(e.ctx, cm(remoteNS, "before")), user)

	testenv.Grant(t, e.ctx, rc, remoteNS, user, configMapRules())
	if err := target.Client.Create(e.ctx, cm(remoteNS, "granted")); err != nil {
		t.Errorf("create on the remote once granted: %v", err)
	}
	otherNS := testenv.Namespace(t, e.ctx, rc, "other", nil)
	wantForbidden(t, target.Client.Create(e.ctx, cm(otherNS, "elsewhere")), user)

	hostTarget, err := locked.Host(e.ctx, releaseIn(e.ns, cl.Name))
	if err != nil {
		t.Fatal(err)
	}
	if hostTarget.Config.Host != host.Host() || hostTarget.Identity != target.Identity {
		t.Errorf("Host is %s as %s, want the host as %s", hostTarget.Config.Host, hostTarget.Identity, target.Identity)
	}
}

// TestIdentityConnectionsAreBounded: the connections per identity are an LRU of
// MaxIdentities; an evicted identity gets a new connection when it comes back.
func TestIdentityConnectionsAreBounded(t *testing.T) {
	e := integration(t, nil)
	cache, err := New(Options{Host: host.RestConfig(), Reader: e.client, MaxIdentities: 2})
	if err != nil {
		t.Fatal(err)
	}
	as := func(sa string) *Target {
		t.Helper()
		rel := releaseIn(e.ns, "")
		rel.Spec.ServiceAccountName = sa
		target, err := cache.Resolve(e.ctx, rel)
		if err != nil {
			t.Fatal(err)
		}
		return target
	}
	for _, sa := range []string{"a", "b", "c"} {
		createServiceAccount(t, e, sa)
	}
	a, b := as("a"), as("b")
	if as("a") != a || as("b") != b {
		t.Fatal("the same identity got a new connection within the bound")
	}
	as("c") // evicts a, the least recently used
	if got := cache.identities.Len(); got != 2 {
		t.Errorf("%d connections per identity kept, want 2", got)
	}
	if as("b") != b {
		t.Error("b was evicted, though more recently used than a")
	}
	if as("a") == a {
		t.Error("a was not evicted")
	}
}

func createServiceAccount(t *testing.T, e *env, name string) {
	t.Helper()
	if err := e.client.Create(e.ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name}}); err != nil {
		t.Fatal(err)
	}
}

func configMapRules() rbacv1.PolicyRule {
	return rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"create", "get", "list", "patch"}}
}

// wantForbidden checks that err is a 403 of the API server naming user.
func wantForbidden(t *testing.T, err error, user string) {
	t.Helper()
	if !apierrors.IsForbidden(err) {
		t.Fatalf("error %v, want 403 Forbidden", err)
	}
	if !strings.Contains(err.Error(), `User "`+user+`"`) {
		t.Errorf("the refusal %q does not name %s", err, user)
	}
}
