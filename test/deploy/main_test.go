// Package deploy_test checks the install manifests of deploy/: they pass a
// server-side dry run on the local control plane, the controller's ClusterRole
// matches dev.ControllerRules, the krew manifest is complete, and the
// convoy-sync and convoy-view ClusterRoles allow what they say (against a convoy
// apiserver running in this process).
//
// With -short only the tests that need no control plane run.
package deploy_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"kumodo.io/convoy/internal/apiserver/apiservertest"
	"kumodo.io/convoy/internal/localcluster"
)

// env is the package's control plane with convoy apiserver; nil with -short.
var env *struct {
	cluster *localcluster.Cluster
	admin   *rest.Config
	// freshInstall is what `kubectl apply --dry-run=server -k deploy/` said before
	// convoy's APIService was registered, as on a cluster without convoy.
	freshInstall dryRun
}

type dryRun struct {
	out []byte
	err error
}

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if testing.Short() {
		return m.Run()
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, err := localcluster.Start(ctx, localcluster.Options{Progress: os.Stderr})
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting the local control plane:", err)
		return 1
	}
	defer func() { _ = c.Stop() }()
	fresh := freshInstallDryRun(ctx, c)
	dir, err := os.MkdirTemp("", "convoy-deploy-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = os.RemoveAll(dir) }()
	// Not convoy-system/convoy-apiserver, which the dry run of deploy/ must find free.
	stop, err := apiservertest.Start(ctx, c, apiservertest.Options{
		Namespace: "convoy-deploy-test", ServiceName: "convoy-apiserver-deploy-test", EtcdPrefix: "/convoy-deploy"})
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting convoy apiserver:", err)
		return 1
	}
	defer stop()
	env = &struct {
		cluster      *localcluster.Cluster
		admin        *rest.Config
		freshInstall dryRun
	}{cluster: c, admin: c.RestConfig(), freshInstall: fresh}
	return m.Run()
}

// freshInstallDryRun runs the install command of deploy/README.md as a server-side
// dry run on c, before convoy's APIService exists. A dry run creates no namespace,
// so convoy-system is created for real first.
func freshInstallDryRun(ctx context.Context, c *localcluster.Cluster) dryRun {
	root, err := localcluster.RepoRoot()
	if err != nil {
		return dryRun{err: err}
	}
	kube, err := kubernetes.NewForConfig(c.RestConfig())
	if err != nil {
		return dryRun{err: err}
	}
	_, err = kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "convoy-system"}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return dryRun{err: err}
	}
	kubectl := filepath.Join(c.BinDir(), "kubectl")
	out, err := exec.CommandContext(ctx, kubectl, "--kubeconfig", c.KubeconfigPath(),
		"apply", "--dry-run=server", "-k", filepath.Join(root, "deploy")).CombinedOutput()
	return dryRun{out: out, err: err}
}

// needCluster skips a test that needs the control plane when it is not running.
func needCluster(t *testing.T) {
	t.Helper()
	if env == nil {
		t.Skip("needs the local control plane (not with -short)")
	}
}

func randomSuffix() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return c
}
