package dev

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	rbacv1ac "k8s.io/client-go/applyconfigurations/rbac/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/apiserver"
	"kumodo.io/convoy/internal/controller"
)

// Components are convoy's processes in start order. Adding one is a few
// lines: a name and a Start that calls env.RunConvoy with its flags.
func Components() []Component {
	return []Component{
		{Name: "convoy-apiserver", Start: startAPIServer},
		{Name: "convoy-controller", Start: startController},
		{Name: "convoy-observer", Start: startObserver},
	}
}

// startAPIServer runs `convoy apiserver` on the cluster's etcd under the
// prefix /convoy (so Releases survive a restart of dev) with its own
// identity, and registers it with the aggregator.
func startAPIServer(ctx context.Context, env *Env) error {
	const identity = "convoy-apiserver"
	host := env.Cluster.RestConfig()
	if err := apiserver.GrantHostAccess(ctx, host, rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: identity}); err != nil {
		return err
	}
	kubeconfig, err := env.Cluster.UserKubeconfig(identity)
	if err != nil {
		return err
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	certDir := filepath.Join(env.StateDir, "apiserver-certs")
	// A certificate of an earlier run may name another service; make a new one.
	if err := os.RemoveAll(certDir); err != nil {
		return err
	}
	reg := apiserver.Registration{Port: port}
	err = env.RunConvoy(ctx, identity, []string{
		"apiserver",
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--etcd-servers=" + env.Cluster.EtcdURL(),
		"--etcd-prefix=/convoy",
		"--kubeconfig=" + kubeconfig,
		"--authentication-kubeconfig=" + kubeconfig,
		"--authorization-kubeconfig=" + kubeconfig,
		"--tls-alternate-dns=" + reg.ServiceDNSName(),
		"--cert-dir=" + certDir,
	}, nil)
	if err != nil {
		return err
	}
	certFile := filepath.Join(certDir, "apiserver.crt")
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		reg.CABundle, err = os.ReadFile(certFile)
		return err == nil && len(reg.CABundle) > 0, nil
	})
	if err != nil {
		return fmt.Errorf("convoy apiserver wrote no serving certificate to %s: %w", certFile, err)
	}
	return apiserver.Register(ctx, host, reg)
}

// controllerReadyTimeout bounds the wait for the controller's informers to sync.
const controllerReadyTimeout = 2 * time.Minute

// startController runs `convoy controller` with its own identity, its chart
// cache in <state-dir>/charts, no metrics endpoint, and a health probe on a
// free loopback port. It is ready when its readiness check of informer sync
// (/readyz/informers, controller.ReadyzInformers) passes: the manager serves
// /readyz as soon as it starts, but reconciles nothing before its informers
// have synced.
func startController(ctx context.Context, env *Env) error {
	waitCtx, cancel := context.WithTimeout(ctx, controllerReadyTimeout)
	defer cancel()
	readyz, err := runHostProcess(waitCtx, env, "convoy-controller", grantController, "controller",
		"/readyz/"+controller.ReadyzInformers, append([]string{"--chart-cache-dir=" + filepath.Join(env.StateDir, "charts")}, env.lockdownFlags()...)...)
	if err != nil && ctx.Err() == nil && waitCtx.Err() != nil {
		return fmt.Errorf("convoy controller is not ready after %s: its informers have not synced (%s); see its log in %s: %w",
			controllerReadyTimeout, readyz, env.Cluster.LogDir(), err)
	}
	return err
}

// runHostProcess runs `convoy <subcommand>` on the host as the user identity, first
// granted its rules by grant, with the identity's kubeconfig, no metrics endpoint, a
// health probe on a free loopback port and the flags extra. It is ready when GET
// readyPath on the probe port answers 200; readyz is that URL.
func runHostProcess(ctx context.Context, env *Env, identity string, grant func(context.Context, *rest.Config, string) error,
	subcommand, readyPath string, extra ...string) (readyz string, err error) {
	if err := grant(ctx, env.Cluster.RestConfig(), identity); err != nil {
		return "", err
	}
	kubeconfig, err := env.Cluster.UserKubeconfig(identity)
	if err != nil {
		return "", err
	}
	port, err := freePort()
	if err != nil {
		return "", err
	}
	readyz = "http://127.0.0.1:" + strconv.Itoa(port) + readyPath
	args := append([]string{
		subcommand,
		"--kubeconfig=" + kubeconfig,
		"--metrics-bind-address=0",
		"--health-probe-bind-address=127.0.0.1:" + strconv.Itoa(port),
	}, extra...)
	return readyz, env.RunConvoy(ctx, identity, args, func(ctx context.Context) bool { return httpOK(ctx, readyz) })
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
		{APIGroups: []string{v1alpha1.GroupName}, Resources: []string{v1alpha1.ResourceReleaseSets}, Verbs: read},
		{APIGroups: []string{v1alpha1.GroupName}, Resources: []string{
			v1alpha1.ResourceReleases + "/" + v1alpha1.SubresourceStatus,
			v1alpha1.ResourceReleases + "/finalizers",
			v1alpha1.ResourceReleaseSets + "/" + v1alpha1.SubresourceStatus,
			v1alpha1.ResourceReleaseSets + "/finalizers",
			v1alpha1.ResourceClusters + "/" + v1alpha1.SubresourceStatus,
			v1alpha1.ResourceReleaseInventories + "/" + v1alpha1.SubresourceStatus,
		}, Verbs: []string{"get", "update", "patch"}},
		{APIGroups: []string{v1alpha1.GroupName}, Resources: []string{v1alpha1.ResourceRenders, v1alpha1.ResourceReleaseInventories}, Verbs: write},
		{APIGroups: []string{v1alpha1.GroupName}, Resources: []string{v1alpha1.ResourceClusters}, Verbs: read},
		{APIGroups: []string{""}, Resources: []string{"configmaps", "secrets", "namespaces"}, Verbs: read},
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
	kube, err := kubernetes.NewForConfig(host)
	if err != nil {
		return err
	}
	rbac := kube.RbacV1()
	opts := metav1.ApplyOptions{FieldManager: FieldManager, Force: true}
	role := rbacv1ac.ClusterRole(identity)
	for _, r := range ControllerRules() {
		role.WithRules(rbacv1ac.PolicyRule().WithAPIGroups(r.APIGroups...).WithResources(r.Resources...).WithVerbs(r.Verbs...))
	}
	if _, err := rbac.ClusterRoles().Apply(ctx, role, opts); err != nil {
		return fmt.Errorf("grant %s its ClusterRole: %w", identity, err)
	}
	subject := rbacv1ac.Subject().WithKind(rbacv1.UserKind).WithAPIGroup(rbacv1.GroupName).WithName(identity)
	for name, roleName := range map[string]string{identity: identity, identity + ":dev-cluster-admin": "cluster-admin"} {
		b := rbacv1ac.ClusterRoleBinding(name).
			WithRoleRef(rbacv1ac.RoleRef().WithAPIGroup(rbacv1.GroupName).WithKind("ClusterRole").WithName(roleName)).
			WithSubjects(subject)
		if _, err := rbac.ClusterRoleBindings().Apply(ctx, b, opts); err != nil {
			return fmt.Errorf("bind %s to %s: %w", identity, roleName, err)
		}
	}
	return nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
