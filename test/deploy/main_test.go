// Package deploy_test checks the install manifests of deploy/: they pass a
// server-side dry run on the local control plane, the controller's ClusterRole
// matches dev.ControllerRules, the krew manifest is complete, and the
// convoy-sync and convoy-view ClusterRoles allow what they say (against a convoy
// apiserver running in this process). The chart's etcd is started as processes from
// its rendered StatefulSet (three members with its flags and certificates), with
// convoy apiserver from the rendered Deployment's flags, to test it under a lost
// member and a lost quorum, and the backup CronJob's command against it (decisions 0181–0183).
//
// With -short only the tests that need no control plane run.
package deploy_test

import (
	"context"
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
	"kumodo.io/convoy/internal/testenv"
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
	testenv.Main(m, func(s *testenv.Setup) error {
		c, err := s.Cluster("the local control plane", localcluster.Options{Progress: os.Stderr})
		if err != nil {
			return err
		}
		fresh := freshInstallDryRun(s.Context(), c)
		// Not convoy-system/convoy-apiserver, which the dry run of deploy/ must find free.
		if err := apiservertest.StartWith(s, c, apiservertest.Options{
			Namespace: "convoy-deploy-test", ServiceName: "convoy-apiserver-deploy-test", EtcdPrefix: "/convoy-deploy"}); err != nil {
			return err
		}
		env = &struct {
			cluster      *localcluster.Cluster
			admin        *rest.Config
			freshInstall dryRun
		}{cluster: c, admin: c.RestConfig(), freshInstall: fresh}
		return nil
	})
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

func ctx(t *testing.T) context.Context {
	return testenv.Context(t, 2*time.Minute)
}
