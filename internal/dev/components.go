package dev

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"path/filepath"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	rbacv1ac "k8s.io/client-go/applyconfigurations/rbac/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/hostmanager"
)

// Components are convoy's processes in start order, as `convoy dev` runs them. Adding
// one is a few lines: a name and a Start that calls StartProcess (start.go) with
// its flags.
func Components() []Component {
	return []Component{
		{Name: APIServerName, Start: startAPIServer},
		{Name: ControllerName, Start: startController},
		{Name: ObserverName, Start: startObserver},
	}
}

// startAPIServer runs `convoy apiserver` on the cluster's etcd under the prefix
// /convoy (so Releases survive a restart of dev) with its own identity, and
// registers it with the aggregator.
func startAPIServer(ctx context.Context, env *Env) error {
	_, err := StartAPIServer(ctx, env.Cluster, APIServerOptions{
		Convoy: env.Convoy, Env: env.ConvoyEnv, CertDir: filepath.Join(env.StateDir, "apiserver-certs"),
	})
	return err
}

// controllerReadyTimeout bounds the wait for the controller's informers to sync.
const controllerReadyTimeout = 2 * time.Minute

// startController runs `convoy controller` with its own identity, its chart
// cache in <state-dir>/charts, its receiver server on Env.ReceiverAddr (if
// set), no metrics endpoint, and a health probe on a
// free loopback port. It is ready when its readiness check of informer sync
// (/readyz/informers, hostmanager.ReadyzInformers) passes: the manager serves
// /readyz as soon as it starts, but reconciles nothing before its informers
// have synced.
func startController(ctx context.Context, env *Env) error {
	waitCtx, cancel := context.WithTimeout(ctx, controllerReadyTimeout)
	defer cancel()
	o := env.processOptions(ControllerName)
	o.ChartCacheDir = filepath.Join(env.StateDir, "charts")
	o.ReadyPath = "/readyz/" + hostmanager.ReadyzInformers
	if env.ReceiverAddr != "" {
		o.Args = append(o.Args, "--receiver-bind-address="+env.ReceiverAddr)
	}
	_, err := StartController(waitCtx, env.Cluster, o)
	if err != nil && ctx.Err() == nil && waitCtx.Err() != nil {
		return fmt.Errorf("convoy controller is not ready after %s: its informers have not synced (%s); see its log in %s: %w",
			controllerReadyTimeout, o.ReadyPath, env.Cluster.LogDir(), err)
	}
	return err
}

// startObserver runs `convoy observer` with its own identity (ObserverRules, and in
// dev read and dry-run access to everything on the host, its only target), no
// metrics endpoint, and a health probe on a free loopback port; it is ready when
// /readyz answers.
func startObserver(ctx context.Context, env *Env) error {
	_, err := StartObserver(ctx, env.Cluster, env.processOptions(ObserverName))
	return err
}

// processOptions run a process of dev as the user identity, with the lockdown.
func (e *Env) processOptions(identity string) ProcessOptions {
	return ProcessOptions{Convoy: e.Convoy, Env: e.ConvoyEnv, Identity: identity, DefaultServiceAccount: e.DefaultServiceAccount}
}

// httpOK reports whether a GET of url answers 200.
func httpOK(ctx context.Context, url string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false
	}
	resp, err := probeClient.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

var probeClient = &http.Client{Timeout: 2 * time.Second}

// ControllerRules are what convoy controller needs of the host cluster besides
// applying and pruning the rendered objects, impersonating ServiceAccounts included
// (in dev the controller also has cluster-admin, which implies it).
func ControllerRules() []rbacv1.PolicyRule {
	read := []string{"get", "list", "watch"}
	write := []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"}
	return []rbacv1.PolicyRule{
		{APIGroups: []string{v1alpha1.GroupName}, Resources: []string{v1alpha1.ResourceReleases}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
		// patch records the namespace UID on an older set; delete removes one that outlived its namespace.
		{APIGroups: []string{v1alpha1.GroupName}, Resources: []string{v1alpha1.ResourceReleaseSets}, Verbs: []string{"get", "list", "watch", "patch", "delete"}},
		{APIGroups: []string{v1alpha1.GroupName}, Resources: []string{v1alpha1.ResourceAlerts, v1alpha1.ResourceReceivers}, Verbs: read},
		{APIGroups: []string{v1alpha1.GroupName}, Resources: []string{
			v1alpha1.ResourceReleases + "/" + v1alpha1.SubresourceStatus,
			v1alpha1.ResourceReleases + "/finalizers",
			v1alpha1.ResourceReleaseSets + "/" + v1alpha1.SubresourceStatus,
			v1alpha1.ResourceReleaseSets + "/finalizers",
			v1alpha1.ResourceClusters + "/" + v1alpha1.SubresourceStatus,
			v1alpha1.ResourceReleaseInventories + "/" + v1alpha1.SubresourceStatus,
			v1alpha1.ResourceAlerts + "/" + v1alpha1.SubresourceStatus,
			v1alpha1.ResourceReceivers + "/" + v1alpha1.SubresourceStatus,
		}, Verbs: []string{"get", "update", "patch"}},
		{APIGroups: []string{v1alpha1.GroupName}, Resources: []string{v1alpha1.ResourceRenders, v1alpha1.ResourceReleaseInventories}, Verbs: write},
		{APIGroups: []string{v1alpha1.GroupName}, Resources: []string{v1alpha1.ResourceClusters}, Verbs: read},
		{APIGroups: []string{""}, Resources: []string{"configmaps", "secrets", "namespaces"}, Verbs: read},
		// The copies of a ReleaseSet's valuesFrom objects its Releases read.
		{APIGroups: []string{""}, Resources: []string{"configmaps", "secrets"}, Verbs: []string{"create", "delete"}},
		{APIGroups: []string{"", "events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"create", "patch", "update"}},
		{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"get", "create", "update"}},
		impersonateServiceAccounts,
	}
}

// grantController gives identity the ClusterRole convoy-controller
// (ControllerRules) and, so that Releases without spec.cluster can apply and
// prune any kind on the host cluster, cluster-admin. That binding is for dev
// only: the manifests for a real cluster grant least privilege.
func grantController(ctx context.Context, host *rest.Config, identity string) error {
	return grant(ctx, host, identity, map[string][]rbacv1.PolicyRule{identity: ControllerRules()},
		map[string]string{identity + ":dev-cluster-admin": "cluster-admin"})
}

// grant applies the ClusterRoles of roles (name → rules) and binds identity to each of
// them (a binding of the same name), and to the ClusterRoles that exist of bindings
// (binding name → ClusterRole).
func grant(ctx context.Context, host *rest.Config, identity string, roles map[string][]rbacv1.PolicyRule, bindings map[string]string) error {
	kube, err := kubernetes.NewForConfig(host)
	if err != nil {
		return err
	}
	rbac := kube.RbacV1()
	opts := metav1.ApplyOptions{FieldManager: FieldManager, Force: true}
	all := maps.Clone(bindings)
	if all == nil {
		all = map[string]string{}
	}
	for name, rules := range roles {
		role := rbacv1ac.ClusterRole(name)
		for _, r := range rules {
			role.WithRules(rbacv1ac.PolicyRule().WithAPIGroups(r.APIGroups...).WithResources(r.Resources...).WithVerbs(r.Verbs...))
		}
		if _, err := rbac.ClusterRoles().Apply(ctx, role, opts); err != nil {
			return fmt.Errorf("grant %s the ClusterRole %s: %w", identity, name, err)
		}
		all[name] = name
	}
	subject := rbacv1ac.Subject().WithKind(rbacv1.UserKind).WithAPIGroup(rbacv1.GroupName).WithName(identity)
	for name, roleName := range all {
		b := rbacv1ac.ClusterRoleBinding(name).
			WithRoleRef(rbacv1ac.RoleRef().WithAPIGroup(rbacv1.GroupName).WithKind("ClusterRole").WithName(roleName)).
			WithSubjects(subject)
		if _, err := rbac.ClusterRoleBindings().Apply(ctx, b, opts); err != nil {
			return fmt.Errorf("bind %s to %s: %w", identity, roleName, err)
		}
	}
	return nil
}
