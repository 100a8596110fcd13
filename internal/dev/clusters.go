package dev

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/localcluster"
)

// The local clusters (`convoy dev --clusters N`): N more control planes, registered as
// the Clusters dev-1 … dev-N with labels a clusterSelector can use.
const (
	// LabelDev is on every Cluster of the local clusters: "true".
	LabelDev = "convoy.kumodo.io/dev"
	// LabelEnv, LabelRing, LabelRegion and LabelZone are the Clusters' labels to
	// select and stage by: env=dev; ring=canary on dev-1 and main on the others;
	// region=local; zone local-a, local-b, local-c round-robin (dev-1 in local-a).
	LabelEnv    = "env"
	LabelRing   = "ring"
	LabelRegion = "region"
	LabelZone   = "zone"
	// RingCanary and RingMain are the values of LabelRing.
	RingCanary = "canary"
	RingMain   = "main"
	// ClustersNamespace holds the local clusters' kubeconfig Secrets, <cluster>-kubeconfig.
	ClustersNamespace = "convoy-system"
	// TargetNamespace is made on each local cluster: the examples' namespace.
	// A Release applies into a namespace of the target cluster that must exist there.
	TargetNamespace = "demo"
	// ClustersDir is the folder of the local clusters in the state folder: each one's
	// PKI, logs and admin kubeconfig in <state-dir>/clusters/<name>/.
	ClustersDir = "clusters"
	// MaxClusters bounds --clusters: what this machine kind holds with room to spare
	// (docs/notes/local-fleet.md).
	MaxClusters = 20
	// clusterReadyTimeout bounds the wait for the controller to find a Cluster Ready.
	clusterReadyTimeout = 2 * time.Minute
)

// ClusterName is the name of the i-th local cluster, i from 1.
func ClusterName(i int) string { return "dev-" + strconv.Itoa(i) }

// clusterZones are the LabelZone values, round-robin, as the simulated nodes' zones.
var clusterZones = [...]string{"local-a", "local-b", "local-c"}

// ClusterLabels are the labels of the i-th local Cluster (i from 1).
func ClusterLabels(i int) map[string]string {
	ring := RingMain
	if i == 1 {
		ring = RingCanary
	}
	return map[string]string{
		LabelDev:    "true",
		LabelEnv:    "dev",
		LabelRing:   ring,
		LabelRegion: "local",
		LabelZone:   clusterZones[(i-1)%len(clusterZones)],
	}
}

// KubeconfigSecretName is the Secret in ClustersNamespace that holds cluster's kubeconfig.
func KubeconfigSecretName(cluster string) string { return cluster + "-kubeconfig" }

// validateClusters checks --clusters.
func validateClusters(n int) error {
	if n < 0 || n > MaxClusters {
		return fmt.Errorf("--clusters %d: want 0 to %d local clusters (each costs about 540 MiB, see docs/notes/local-fleet.md)", n, MaxClusters)
	}
	return nil
}

// runClusters starts the n local clusters (none when n is 0) on the host's etcd,
// each with one simulated node, in <state-dir>/clusters/dev-<i>; supervises its
// processes with the host's (ready); and registers it (RegisterClusters), which with n 0
// deletes an earlier run's local Clusters. Stop them with the host (stopAll).
func runClusters(ctx context.Context, host *localcluster.Cluster, stateDir string, n int, ready *readiness, out io.Writer) (*localcluster.Clusters, error) {
	if n == 0 {
		return nil, RegisterClusters(ctx, host.RestConfig(), nil)
	}
	fmt.Fprintf(out, "Starting the local clusters: %d control plane(s) on etcd %s\n", n, host.EtcdURL())
	f, err := localcluster.StartClusters(ctx, localcluster.ClustersOptions{
		Clusters:  n,
		Name:      ClusterName,
		Etcd:      host.EtcdURL(),
		Dir:       filepath.Join(stateDir, ClustersDir),
		BinDir:    host.BinDir(),
		Workloads: true,
		Nodes:     1,
		Progress:  out,
	})
	if err != nil {
		return nil, fmt.Errorf("start the local clusters: %w", err)
	}
	for i, c := range f.Clusters {
		ready.supervise(ctx, f.Name(i)+"/", c)
	}
	fmt.Fprintf(out, "Registering the local clusters as Clusters %s … %s\n", f.Name(0), f.Name(n-1))
	if err := RegisterClusters(ctx, host.RestConfig(), f); err != nil {
		stopClusters(f, out)
		return nil, err
	}
	return f, nil
}

// stopClusters stops the local clusters f, if any.
func stopClusters(f *localcluster.Clusters, out io.Writer) {
	if f == nil {
		return
	}
	if err := f.Stop(); err != nil {
		fmt.Fprintf(out, "Stop the local clusters: %v\n", err)
	}
}

// createClusterDeployers creates, under the lockdown, the ServiceAccount name in
// TargetNamespace of each cluster of f (CreateDeployer): a Release acts as it on its
// target cluster too.
func createClusterDeployers(ctx context.Context, f *localcluster.Clusters, name string, out io.Writer) error {
	if f == nil {
		return nil
	}
	for i, c := range f.Clusters {
		if err := CreateDeployer(ctx, c.RestConfig(), TargetNamespace, name); err != nil {
			return fmt.Errorf("on %s: %w", f.Name(i), err)
		}
	}
	fmt.Fprintf(out, "Lockdown: created %[1]s/%[2]s on each local cluster, bound to admin in %[1]s\n", TargetNamespace, name)
	return nil
}

var clustersResource = schema.GroupVersionResource{Group: v1alpha1.GroupName, Version: v1alpha1.Version, Resource: v1alpha1.ResourceClusters}

// RegisterClusters creates the namespace TargetNamespace on each cluster of f and
// registers it (RegisterCluster) with its admin kubeconfig and ClusterLabels. It deletes
// the Clusters labelled LabelDev that f no longer has (an earlier run's more
// clusters) and their Secrets; with f nil it only does that. It returns once the
// controller finds every Cluster Ready.
func RegisterClusters(ctx context.Context, host *rest.Config, f *localcluster.Clusters) error {
	kube, err := kubernetes.NewForConfig(host)
	if err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(host)
	if err != nil {
		return err
	}
	clusters := dyn.Resource(clustersResource)
	if f == nil {
		return pruneClusters(ctx, kube, clusters, nil)
	}
	apply := metav1.ApplyOptions{FieldManager: FieldManager, Force: true}
	names := make([]string, len(f.Clusters))
	for i, c := range f.Clusters {
		name := f.Name(i)
		names[i] = name
		target, err := kubernetes.NewForConfig(c.RestConfig())
		if err != nil {
			return err
		}
		if _, err := target.CoreV1().Namespaces().Apply(ctx, corev1ac.Namespace(TargetNamespace), apply); err != nil {
			return fmt.Errorf("create namespace %s on %s: %w", TargetNamespace, name, err)
		}
		kubeconfig, err := os.ReadFile(c.KubeconfigPath())
		if err != nil {
			return err
		}
		if err := RegisterCluster(ctx, host, name, ClusterLabels(i+1), kubeconfig); err != nil {
			return err
		}
	}
	if err := pruneClusters(ctx, kube, clusters, names); err != nil {
		return err
	}
	for _, name := range names {
		if err := WaitClusterReady(ctx, host, name, clusterReadyTimeout); err != nil {
			return err
		}
	}
	return nil
}

// RegisterCluster stores kubeconfig in the Secret ClustersNamespace/<name>-kubeconfig of
// host and applies the Cluster name that names it, both with labels (server-side apply,
// field manager convoy-dev: labels a user added stay). A benchmark or a test registers a
// local cluster so, perhaps with a kubeconfig through a testenv.Link.
func RegisterCluster(ctx context.Context, host *rest.Config, name string, labels map[string]string, kubeconfig []byte) error {
	kube, err := kubernetes.NewForConfig(host)
	if err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(host)
	if err != nil {
		return err
	}
	apply := metav1.ApplyOptions{FieldManager: FieldManager, Force: true}
	if _, err := kube.CoreV1().Namespaces().Apply(ctx, corev1ac.Namespace(ClustersNamespace), apply); err != nil {
		return fmt.Errorf("create namespace %s: %w", ClustersNamespace, err)
	}
	secret := corev1ac.Secret(KubeconfigSecretName(name), ClustersNamespace).
		WithLabels(labels).
		WithType(corev1.SecretTypeOpaque).
		WithData(map[string][]byte{v1alpha1.DefaultKubeconfigKey: kubeconfig})
	if _, err := kube.CoreV1().Secrets(ClustersNamespace).Apply(ctx, secret, apply); err != nil {
		return fmt.Errorf("store the kubeconfig of Cluster %s: %w", name, err)
	}
	obj, err := clusterObject(name, labels)
	if err != nil {
		return err
	}
	if _, err := dyn.Resource(clustersResource).Apply(ctx, name, obj, apply); err != nil {
		return fmt.Errorf("apply Cluster %s: %w", name, err)
	}
	return nil
}

// clusterObject is the Cluster name with labels, its kubeconfig in its Secret of ClustersNamespace.
func clusterObject(name string, labels map[string]string) (*unstructured.Unstructured, error) {
	spec, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&v1alpha1.ClusterSpec{
		Kubeconfig: v1alpha1.KubeconfigSource{SecretRef: v1alpha1.SecretKeyReference{
			Namespace: ClustersNamespace, Name: KubeconfigSecretName(name), Key: v1alpha1.DefaultKubeconfigKey,
		}},
	})
	if err != nil {
		return nil, err
	}
	obj := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	obj.SetAPIVersion(v1alpha1.SchemeGroupVersion.String())
	obj.SetKind("Cluster")
	obj.SetName(name)
	obj.SetLabels(labels)
	return obj, nil
}

// pruneClusters deletes the Clusters labelled LabelDev that are not in keep, and their Secrets.
func pruneClusters(ctx context.Context, kube kubernetes.Interface, clusters dynamic.NamespaceableResourceInterface, keep []string) error {
	list, err := clusters.List(ctx, metav1.ListOptions{LabelSelector: LabelDev + "=true"})
	if apierrors.IsNotFound(err) && len(keep) == 0 {
		return nil // no convoy API (dev without its components): no Clusters to prune
	}
	if err != nil {
		return fmt.Errorf("list the Clusters of the local clusters: %w", err)
	}
	for _, c := range list.Items {
		if slices.Contains(keep, c.GetName()) {
			continue
		}
		if err := clusters.Delete(ctx, c.GetName(), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete Cluster %s of an earlier run: %w", c.GetName(), err)
		}
		err := kube.CoreV1().Secrets(ClustersNamespace).Delete(ctx, KubeconfigSecretName(c.GetName()), metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete the kubeconfig Secret of Cluster %s: %w", c.GetName(), err)
		}
	}
	return nil
}

// WaitClusterReady polls until the controller finds the Cluster name Ready (at its
// generation), for at most timeout.
func WaitClusterReady(ctx context.Context, host *rest.Config, name string, timeout time.Duration) error {
	dyn, err := dynamic.NewForConfig(host)
	if err != nil {
		return err
	}
	clusters := dyn.Resource(clustersResource)
	var last string
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		u, err := clusters.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			last = err.Error()
			return false, nil
		}
		c := &v1alpha1.Cluster{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, c); err != nil {
			return false, err
		}
		cond := apimeta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionReady)
		if cond == nil {
			last = "no Ready condition yet"
			return false, nil
		}
		last = fmt.Sprintf("Ready=%s (%s: %s)", cond.Status, cond.Reason, cond.Message)
		return cond.Status == metav1.ConditionTrue && cond.ObservedGeneration == u.GetGeneration(), nil
	})
	if err != nil {
		return fmt.Errorf("the Cluster %s is not Ready after %s (last: %s); see the controller's log: %w", name, timeout, last, err)
	}
	return nil
}

// clustersUsage is the part of dev's usage notes about the local clusters.
func clustersUsage(f *localcluster.Clusters, stateDir string) string {
	if f == nil {
		return ""
	}
	first, last := f.Name(0), f.Name(len(f.Clusters)-1)
	return fmt.Sprintf(`Local clusters: the Clusters %[1]s … %[2]s, each a control plane with one simulated node
and the namespace %[3]s, labelled %[4]s=true, %[5]s=dev, %[6]s=local, %[7]s=local-a|b|c and
%[8]s=%[9]s (%[1]s) or %[8]s=%[10]s (the others):

  kubectl get clusters.%[11]s -L %[8]s,%[7]s
  kubectl --kubeconfig %[12]s get nodes   # %[1]s itself

  A Release deploys to one with spec.cluster: %[2]s; a ReleaseSet to all with
  spec.clusterSelector: {matchLabels: {%[4]s: "true"}}, canary first with a stage
  {name: canary, clusterSelector: {matchLabels: {%[8]s: %[9]s}}} (docs/fleets.md).
  A Release's namespace must exist on its cluster: create others there first.

`, first, last, TargetNamespace, LabelDev, LabelEnv, LabelRegion, LabelZone, LabelRing, RingCanary, RingMain,
		v1alpha1.GroupName, filepath.Join(stateDir, ClustersDir, first, "kubeconfig"))
}
