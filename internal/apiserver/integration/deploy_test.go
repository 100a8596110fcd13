package integration_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"kumodo.io/convoy/internal/testenv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"kumodo.io/convoy/internal/localcluster"
)

// The manifests of deploy/apiserver pass a server-side dry run on the control plane.
func TestDeployManifestsPassServerSideDryRun(t *testing.T) {
	testenv.Integration(t)
	kubectl := filepath.Join(env.cluster.BinDir(), "kubectl")
	if _, err := os.Stat(kubectl); err != nil {
		t.Skipf("kubectl is not built (%v): run hack/kube/build.sh kubectl", err)
	}
	root, err := localcluster.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	// A dry run creates no namespace, so the namespaced objects need it for real.
	kube := kubernetes.NewForConfigOrDie(env.admin)
	_, err = kube.CoreV1().Namespaces().Create(ctx(t), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "convoy-system"}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "deploy", "apiserver")
	for _, f := range []string{"namespace.yaml", "rbac.yaml", "etcd.yaml", "deployment.yaml", "service.yaml"} {
		out, err := exec.CommandContext(ctx(t), kubectl, "--kubeconfig", env.cluster.KubeconfigPath(),
			"apply", "--dry-run=server", "--server-side", "--field-manager=convoy-deploy-test", "-f", filepath.Join(dir, f)).CombinedOutput()
		if err != nil {
			t.Errorf("kubectl apply --dry-run=server -f %s: %v\n%s", f, err, out)
		}
	}
	// The APIService exists, registered to the in-process server: check the manifest
	// as a whole object, without merging it into the live one.
	out, err := exec.CommandContext(ctx(t), kubectl, "--kubeconfig", env.cluster.KubeconfigPath(),
		"replace", "--dry-run=server", "-f", filepath.Join(dir, "apiservice.yaml")).CombinedOutput()
	if err != nil {
		t.Errorf("kubectl replace --dry-run=server -f apiservice.yaml: %v\n%s", err, out)
	}
	// The kustomization lists every file.
	out, err = exec.CommandContext(ctx(t), kubectl, "kustomize", dir).CombinedOutput()
	if err != nil {
		t.Errorf("kubectl kustomize: %v\n%s", err, out)
	}
}
