package main

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/dev"
	"kumodo.io/convoy/internal/localcluster"
	"kumodo.io/convoy/internal/testenv"
)

// Decisions 0174, 0175: `convoy dev --clusters 2` starts local clusters. Both Clusters are registered
// with their labels and Ready, a Release targeting dev-2 becomes Ready with its
// Deployment on dev-2 (not on the host), under the lockdown (--default-service-account:
// it acts as the ServiceAccount deployer that dev made in demo on dev-2), the ready file lists the local clusters' processes, and
// dev-2's kube-apiserver killed is started again by the supervisor, after which dev-2
// is Ready again.
func TestDevStartsLocalClusters(t *testing.T) {
	testenv.Integration(t)
	root, err := localcluster.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	stateDir := filepath.Join(t.TempDir(), "dev")
	readyPath := filepath.Join(stateDir, dev.ReadyFile)
	started := time.Now()
	d, procs := startDev(t, dev.Options{StateDir: stateDir, Nodes: 1, Clusters: 2,
		ExamplesDir: filepath.Join(root, "examples"), ChartsAddr: "127.0.0.1:0", DefaultServiceAccount: "deployer",
	}, "convoy dev ready", 6*time.Minute)
	ctx, out := d.ctx, d.out
	t.Logf("convoy dev --clusters 2 ready after %s", time.Since(started).Round(time.Second))
	for _, c := range []string{"dev-1", "dev-2"} {
		for _, p := range []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok"} {
			if got := procs[c+"/"+p]; got[0] == 0 || got[1] != 0 {
				t.Errorf("the ready file's %s/%s: %v, want its pid and restarts=0", c, p, got)
			}
		}
		if _, ok := procs[c+"/etcd"]; ok {
			t.Errorf("%s runs an etcd of its own; want the host's", c)
		}
	}
	printed := out.String()
	for _, want := range []string{"the Clusters dev-1 … dev-2", "kubectl get clusters.convoy.kumodo.io -L ring,zone",
		"kubectl --kubeconfig " + filepath.Join(stateDir, "clusters", "dev-1", "kubeconfig") + " get nodes",
		"spec.cluster: dev-2"} {
		if !strings.Contains(printed, want) {
			t.Errorf("convoy dev did not print %q", want)
		}
	}

	host, err := clientcmd.BuildConfigFromFlags("", filepath.Join(stateDir, dev.KubeconfigFile))
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(host)
	if err != nil {
		t.Fatal(err)
	}
	clusters := dyn.Resource(schema.GroupVersionResource{Group: v1alpha1.GroupName, Version: v1alpha1.Version, Resource: v1alpha1.ResourceClusters})
	for i, name := range []string{"dev-1", "dev-2"} {
		c := getCluster(t, clusters, name)
		if diff := cmp.Diff(dev.ClusterLabels(i+1), c.Labels); diff != "" {
			t.Errorf("Cluster %s's labels (-want +got):\n%s", name, diff)
		}
		if ref := c.Spec.Kubeconfig.SecretRef; ref.Namespace != dev.ClustersNamespace || ref.Name != name+"-kubeconfig" {
			t.Errorf("Cluster %s's kubeconfig is in %+v", name, ref)
		}
		if cond := apimeta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionReady); cond == nil || cond.Status != metav1.ConditionTrue {
			t.Errorf("Cluster %s is not Ready: %+v", name, cond)
		}
	}
	canary, err := clusters.List(ctx, metav1.ListOptions{LabelSelector: "ring=canary"})
	if err != nil || len(canary.Items) != 1 || canary.Items[0].GetName() != "dev-1" {
		t.Errorf("Clusters with ring=canary: %v (err %v), want dev-1 alone", canary, err)
	}

	// A Release that targets dev-2 becomes Ready there.
	chartsURL := regexp.MustCompile(`Serving the charts of \S+ at (\S+)`).FindStringSubmatch(printed)
	if chartsURL == nil {
		t.Fatalf("convoy dev did not say where it serves the charts")
	}
	releases := dyn.Resource(schema.GroupVersionResource{Group: v1alpha1.GroupName, Version: v1alpha1.Version, Resource: v1alpha1.ResourceReleases}).Namespace("demo")
	rel := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": v1alpha1.SchemeGroupVersion.String(), "kind": "Release",
		"metadata": map[string]any{"name": "hello-dev-2", "namespace": "demo"},
		"spec": map[string]any{
			"cluster":    "dev-2",
			"chart":      map[string]any{"repository": chartsURL[1], "name": "hello", "version": ">=0.1.0"},
			"values":     map[string]any{"replicaCount": int64(1)},
			"syncPolicy": map[string]any{"automatic": true, "interval": "1m"},
		},
	}}
	if _, err := releases.Create(ctx, rel, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	poll(t, "the Release on dev-2 Ready", 3*time.Minute, func(ctx context.Context) (bool, string) {
		return conditionTrue(ctx, releases, "hello-dev-2", v1alpha1.ConditionReady)
	})
	dev2 := clusterClient(t, stateDir, "dev-2")
	for _, name := range []string{"dev-1", "dev-2"} {
		if _, err := clusterClient(t, stateDir, name).CoreV1().ServiceAccounts(dev.TargetNamespace).Get(ctx, "deployer", metav1.GetOptions{}); err != nil {
			t.Errorf("the lockdown's ServiceAccount demo/deployer on %s: %v", name, err)
		}
	}
	if _, err := dev2.AppsV1().Deployments("demo").Get(ctx, "hello-dev-2", metav1.GetOptions{}); err != nil {
		t.Errorf("the Release's Deployment on dev-2: %v", err)
	}
	hostKube, err := kubernetes.NewForConfig(host)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := hostKube.AppsV1().Deployments("demo").Get(ctx, "hello-dev-2", metav1.GetOptions{}); err == nil {
		t.Errorf("the Release for dev-2 applied its Deployment on the host")
	}

	// dev-2's kube-apiserver killed: the supervisor starts it again on the same port, and
	// the Cluster and the Release stay usable.
	pid := procs["dev-2/kube-apiserver"][0]
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	poll(t, "no ready file while dev-2's kube-apiserver is down", 30*time.Second, func(context.Context) (bool, string) {
		_, ok := readyProcesses(readyPath)
		return !ok, "the ready file is still there"
	})
	var after map[string][2]int
	poll(t, "the ready file back once dev-2's kube-apiserver is ready again", 3*time.Minute, func(context.Context) (bool, string) {
		var ok bool
		after, ok = readyProcesses(readyPath)
		return ok, "no ready file"
	})
	if p := after["dev-2/kube-apiserver"]; p[0] == 0 || p[0] == pid || p[1] != 1 {
		t.Errorf("the ready file's dev-2/kube-apiserver after the kill: %v, want a new pid (not %d) and restarts=1", p, pid)
	}
	if want := fmt.Sprintf("dev-2/kube-apiserver (pid %d) exited (signal: killed)", pid); !strings.Contains(out.String(), want) {
		t.Errorf("convoy dev did not print %q", want)
	}
	poll(t, "dev-2 answers again", time.Minute, func(ctx context.Context) (bool, string) {
		_, err := dev2.AppsV1().Deployments("demo").Get(ctx, "hello-dev-2", metav1.GetOptions{})
		return err == nil, fmt.Sprint(err)
	})
	poll(t, "the Release on dev-2 Ready after the restart", 2*time.Minute, func(ctx context.Context) (bool, string) {
		return conditionTrue(ctx, releases, "hello-dev-2", v1alpha1.ConditionReady)
	})

	// It stops in seconds: the host's and the local clusters' processes together, each killed
	// StopGrace after SIGTERM at the latest (three tiers: clients, kube-apiservers, etcd).
	took := d.stop()
	t.Logf("convoy dev --clusters 2 stopped in %s", took.Round(10*time.Millisecond))
	if bound := 4 * localcluster.StopGrace; took > bound {
		t.Errorf("convoy dev --clusters 2 stopped in %s, want within %s", took.Round(10*time.Millisecond), bound)
	}
	if !strings.Contains(out.String(), "Stopped in ") {
		t.Errorf("convoy dev did not say how long it took to stop:\n%s", out.String())
	}

	// dev again on the same state with --clusters 1: dev-1 comes back Ready (at its new
	// port), dev-2 and its kubeconfig Secret are gone.
	startDev(t, dev.Options{StateDir: stateDir, Nodes: 1, Clusters: 1}, "convoy dev --clusters 1 ready on the same state", 6*time.Minute)
	if host, err = clientcmd.BuildConfigFromFlags("", filepath.Join(stateDir, dev.KubeconfigFile)); err != nil {
		t.Fatal(err)
	}
	if dyn, err = dynamic.NewForConfig(host); err != nil {
		t.Fatal(err)
	}
	clusters = dyn.Resource(schema.GroupVersionResource{Group: v1alpha1.GroupName, Version: v1alpha1.Version, Resource: v1alpha1.ResourceClusters})
	list, err := clusters.List(t.Context(), metav1.ListOptions{LabelSelector: dev.LabelDev + "=true"})
	if err != nil || len(list.Items) != 1 || list.Items[0].GetName() != "dev-1" {
		t.Errorf("the local Clusters after dev --clusters 1: %v (err %v), want dev-1 alone", list, err)
	}
	if hostKube, err = kubernetes.NewForConfig(host); err != nil {
		t.Fatal(err)
	}
	if _, err := hostKube.CoreV1().Secrets(dev.ClustersNamespace).Get(t.Context(), "dev-2-kubeconfig", metav1.GetOptions{}); err == nil {
		t.Error("dev-2's kubeconfig Secret is still there")
	}
	if c := getCluster(t, clusters, "dev-1"); !apimeta.IsStatusConditionTrue(c.Status.Conditions, v1alpha1.ConditionReady) {
		t.Errorf("dev-1 is not Ready after dev started again: %+v", c.Status.Conditions)
	}
}

func getCluster(t *testing.T, clusters dynamic.NamespaceableResourceInterface, name string) *v1alpha1.Cluster {
	t.Helper()
	u, err := clusters.Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("Cluster %s: %v", name, err)
	}
	c := &v1alpha1.Cluster{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, c); err != nil {
		t.Fatal(err)
	}
	return c
}

// conditionTrue reports whether the Release name has condition typ True, and what it says.
func conditionTrue(ctx context.Context, releases dynamic.ResourceInterface, name, typ string) (bool, string) {
	u, err := releases.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return false, err.Error()
	}
	r := &v1alpha1.Release{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, r); err != nil {
		return false, err.Error()
	}
	c := apimeta.FindStatusCondition(r.Status.Conditions, typ)
	if c == nil {
		return false, "no " + typ + " condition"
	}
	return c.Status == metav1.ConditionTrue, fmt.Sprintf("%s=%s %s: %s", typ, c.Status, c.Reason, c.Message)
}

// clusterClient is a client of the local cluster name, from its kubeconfig in the state folder.
func clusterClient(t *testing.T, stateDir, name string) kubernetes.Interface {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(stateDir, dev.ClustersDir, name, "kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return kube
}
