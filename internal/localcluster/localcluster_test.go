package localcluster_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"kumodo.io/convoy/internal/localcluster"
)

func start(t *testing.T, opts localcluster.Options) *localcluster.Cluster {
	t.Helper()
	c, err := localcluster.Start(t.Context(), opts)
	if err != nil {
		t.Fatalf("start local cluster: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Errorf("stop: %v", err)
		}
	})
	return c
}

func clientset(t *testing.T, c *localcluster.Cluster) *kubernetes.Clientset {
	t.Helper()
	cs, err := kubernetes.NewForConfig(c.RestConfig())
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func TestStartAnswersReadyzAtTheBuiltVersion(t *testing.T) {
	c := start(t, localcluster.Options{})
	cs := clientset(t, c)

	body, err := cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(t.Context())
	if err != nil || string(body) != "ok" {
		t.Fatalf("/readyz = %q, %v; want ok", body, err)
	}
	v, err := cs.Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	if v.GitVersion != localcluster.KubernetesVersion {
		t.Errorf("server version = %s, want %s", v.GitVersion, localcluster.KubernetesVersion)
	}
	// The kubeconfig file works for kubectl of the same version.
	out, err := exec.Command(c.BinDir()+"/kubectl", "--kubeconfig", c.KubeconfigPath(), "version", "-o", "json").CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl version: %v\n%s", err, out)
	}
	if got := strings.Count(string(out), localcluster.KubernetesVersion); got != 2 {
		t.Errorf("kubectl version should report %s for client and server:\n%s", localcluster.KubernetesVersion, out)
	}
}

func TestWorkloadsMakeADeploymentAvailable(t *testing.T) {
	c := start(t, localcluster.Options{Workloads: true, Nodes: 2})
	cs := clientset(t, c)
	ctx := t.Context()

	labels := map[string]string{"app": "web"}
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "registry.example/web:1"}}},
			},
		},
	}
	if _, err := cs.AppsV1().Deployments("default").Create(ctx, dep, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
		d, err := cs.AppsV1().Deployments("default").Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, cond := range d.Status.Conditions {
			if cond.Type == appsv1.DeploymentAvailable && cond.Status == corev1.ConditionTrue {
				return d.Status.AvailableReplicas == 2, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("deployment did not become Available with 2 replicas: %v (logs in %s)", err, c.LogDir())
	}
}

func TestTwoClustersAreIndependent(t *testing.T) {
	a := start(t, localcluster.Options{})
	b := start(t, localcluster.Options{})
	ctx := t.Context()

	if a.Host() == b.Host() || a.EtcdURL() == b.EtcdURL() {
		t.Fatalf("clusters share an address: %s %s / %s %s", a.Host(), a.EtcdURL(), b.Host(), b.EtcdURL())
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "only-in-a"}}
	if _, err := clientset(t, a).CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := clientset(t, a).CoreV1().Namespaces().Get(ctx, "only-in-a", metav1.GetOptions{}); err != nil {
		t.Fatalf("namespace missing in the cluster that created it: %v", err)
	}
	_, err := clientset(t, b).CoreV1().Namespaces().Get(ctx, "only-in-a", metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		t.Fatalf("namespace of cluster a seen in cluster b: err=%v", err)
	}
}

func TestUserConfigAuthenticatesWithoutPermissions(t *testing.T) {
	c := start(t, localcluster.Options{})
	cfg, err := c.UserConfig("alice", "team-a")
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	_, err = cs.CoreV1().Namespaces().List(t.Context(), metav1.ListOptions{})
	if !apierrors.IsForbidden(err) {
		t.Fatalf("list namespaces as alice: want Forbidden, got %v", err)
	}
	if !strings.Contains(err.Error(), `"alice"`) {
		t.Errorf("the server should name the user alice: %v", err)
	}
}

func TestStopLeavesNoProcessPortOrFolder(t *testing.T) {
	c, err := localcluster.Start(t.Context(), localcluster.Options{Workloads: true})
	if err != nil {
		t.Fatal(err)
	}
	pids, ports, dir := c.PIDs(), c.Ports(), c.Dir()
	if len(pids) != 5 {
		t.Fatalf("want 5 processes (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok), got %d", len(pids))
	}
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	assertGone(t, pids, ports)
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("state folder %s still exists after Stop (err=%v)", dir, err)
	}
}

// TestProcessesDieWithAKilledOwner starts a cluster in a child process (this
// test binary, run again), kills the child with SIGKILL, and expects every
// process of its cluster to die and the next Start to remove its folder.
func TestProcessesDieWithAKilledOwner(t *testing.T) {
	if os.Getenv("LOCALCLUSTER_CHILD") == "1" {
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestChildHoldsACluster$", "-test.v")
	cmd.Env = append(os.Environ(), "LOCALCLUSTER_CHILD=1")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()

	var pids, ports []int
	var dir string
	scanner := bufio.NewScanner(stdout)
	for scanner.Scan() {
		line := scanner.Text()
		if rest, ok := strings.CutPrefix(line, "CLUSTER "); ok {
			fields := strings.Fields(rest)
			dir = fields[0]
			pids = atoiList(t, fields[1])
			ports = atoiList(t, fields[2])
			break
		}
	}
	if dir == "" {
		t.Fatalf("child never reported its cluster: %v", scanner.Err())
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	assertGone(t, pids, ports)

	other := start(t, localcluster.Options{})
	_ = other
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("folder of the killed owner's cluster %s survived the next Start (err=%v)", dir, err)
	}
}

// TestChildHoldsACluster is the child of TestProcessesDieWithAKilledOwner.
func TestChildHoldsACluster(t *testing.T) {
	if os.Getenv("LOCALCLUSTER_CHILD") != "1" {
		t.Skip("runs only as the child of TestProcessesDieWithAKilledOwner")
	}
	c, err := localcluster.Start(context.Background(), localcluster.Options{})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("CLUSTER %s %s %s\n", c.Dir(), joinInts(c.PIDs()), joinInts(c.Ports()))
	select {} // until killed
}

func assertGone(t *testing.T, pids, ports []int) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		for _, pid := range pids {
			if err := syscall.Kill(pid, 0); err == nil {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		t.Errorf("processes %v still alive: %v", pids, err)
	}
	for _, port := range ports {
		if localcluster.PortBound(port) {
			t.Errorf("port %d still bound", port)
		}
	}
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}

func atoiList(t *testing.T, s string) []int {
	t.Helper()
	var xs []int
	for _, f := range strings.Split(s, ",") {
		x, err := strconv.Atoi(f)
		if err != nil {
			t.Fatal(err)
		}
		xs = append(xs, x)
	}
	return xs
}
