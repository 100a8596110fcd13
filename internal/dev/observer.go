package dev

import (
	"context"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/client-go/rest"

	"kumodo.io/convoy/api/v1alpha1"
)

// ObserverRules are what convoy observer needs of the host cluster besides reading
// the objects Releases applied (deploy/observer/rbac.yaml and impersonate-rbac.yaml
// grant the same): read convoy's objects, write only ReleaseInventory status, POST
// releases/<name>/sync, and impersonate ServiceAccounts for the drift checks of
// Releases that act as one (spec.serviceAccountName, --default-service-account).
func ObserverRules() []rbacv1.PolicyRule {
	read := []string{"get", "list", "watch"}
	return []rbacv1.PolicyRule{
		{APIGroups: []string{v1alpha1.GroupName}, Resources: []string{
			v1alpha1.ResourceReleases, v1alpha1.ResourceRenders, v1alpha1.ResourceReleaseInventories, v1alpha1.ResourceClusters,
		}, Verbs: read},
		{APIGroups: []string{v1alpha1.GroupName}, Resources: []string{v1alpha1.ResourceReleaseInventories + "/" + v1alpha1.SubresourceStatus}, Verbs: []string{"update", "patch"}},
		{APIGroups: []string{v1alpha1.GroupName}, Resources: []string{v1alpha1.ResourceReleases + "/" + v1alpha1.SubresourceSync}, Verbs: []string{"create"}},
		{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}},
		{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: read},
		{APIGroups: []string{"", "events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"create", "patch", "update"}},
		{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"get", "create", "update"}},
		impersonateServiceAccounts,
	}
}

// impersonateServiceAccounts lets convoy's processes act as a Release's
// ServiceAccount and check that it exists (the chart's convoy-controller-impersonate
// and convoy-observer-impersonate).
var impersonateServiceAccounts = rbacv1.PolicyRule{
	APIGroups: []string{""}, Resources: []string{"serviceaccounts"}, Verbs: []string{"impersonate", "get", "list", "watch"},
}

// ObserverTargetRules are what the observer needs on a target cluster: read every
// object (shared informers per kind) and patch, for the drift check's server-side
// apply dry run. dev grants them on the host, its only target; a real cluster
// restricts the patch to dry runs (deploy/observer/target-rbac.yaml).
func ObserverTargetRules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"get", "list", "watch", "patch"}}}
}

// grantObserver gives identity the ClusterRoles convoy-observer (ObserverRules) and
// convoy-observer:dev-target (ObserverTargetRules).
func grantObserver(ctx context.Context, host *rest.Config, identity string) error {
	return grant(ctx, host, identity, map[string][]rbacv1.PolicyRule{identity: ObserverRules(), identity + ":dev-target": ObserverTargetRules()}, nil)
}
