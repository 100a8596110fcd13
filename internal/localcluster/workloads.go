package localcluster

import (
	"context"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// startWorkloads starts kube-controller-manager, kube-scheduler and kwok, and
// creates n simulated nodes (nodes.go) and the default StorageClass, whose claims
// kwok's volume stages bind (storage.go). It returns once every node is Ready and
// the controllers have created the default ServiceAccount.
func (c *Cluster) startWorkloads(ctx context.Context, n int) error {
	kc := "--kubeconfig=" + c.kubeconfig
	c.step("Starting kube-controller-manager")
	kcm, err := c.start("kube-controller-manager", []string{
		kc,
		"--authentication-kubeconfig=" + c.kubeconfig,
		"--authorization-kubeconfig=" + c.kubeconfig,
		"--leader-elect=false",
		// nodeipam needs a cluster CIDR that simulated nodes do not have; the
		// token controller is not needed (tokens are projected). nodelifecycle
		// stays: it removes the not-ready taint from new nodes.
		"--controllers=*,-nodeipam,-serviceaccount-token",
		"--secure-port=0",
		"--use-service-account-credentials=false",
		"--service-account-private-key-file=" + c.pki.path(serviceAccountKey+".key"),
		"--root-ca-file=" + c.pki.path(caName+".crt"),
		"--concurrent-deployment-syncs=10",
		"--concurrent-replicaset-syncs=10",
		"--kube-api-qps=200",
		"--kube-api-burst=400",
	})
	if err != nil {
		return err
	}
	c.step("Starting kube-scheduler")
	sched, err := c.start("kube-scheduler", []string{
		kc,
		"--authentication-kubeconfig=" + c.kubeconfig,
		"--authorization-kubeconfig=" + c.kubeconfig,
		"--leader-elect=false",
		"--secure-port=0",
		"--kube-api-qps=200",
		"--kube-api-burst=400",
	})
	if err != nil {
		return err
	}
	volumeStages, err := c.writeVolumeStages()
	if err != nil {
		return err
	}
	c.step("Starting kwok with %d simulated node(s)", n)
	kwok, err := c.start("kwok", []string{
		kc,
		"--config=" + filepath.Join(c.binDir, "kwok-stages.yaml"),
		"--config=" + volumeStages,
		"--manage-all-nodes=true",
		"--cidr=10.0.0.0/16", // fake pod IPs, room for thousands of pods
		"--node-port=0",      // no kubelet-like server: no port to bind
	})
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(c.restConfig)
	if err != nil {
		return err
	}
	for i := range n {
		if err := ensureNode(ctx, cs, i); err != nil {
			return err
		}
	}
	if err := ensureStorageClass(ctx, cs); err != nil {
		return err
	}
	watched := []*process{kcm, sched, kwok}
	if err := waitFor(ctx, "nodes Ready", watched, func(ctx context.Context) bool {
		return readyNodes(ctx, cs) >= n
	}); err != nil {
		return err
	}
	return waitFor(ctx, "the default ServiceAccount", watched, func(ctx context.Context) bool {
		_, err := cs.CoreV1().ServiceAccounts(metav1.NamespaceDefault).Get(ctx, "default", metav1.GetOptions{})
		return err == nil
	})
}

func readyNodes(ctx context.Context, cs kubernetes.Interface) int {
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0
	}
	ready := 0
	for _, n := range nodes.Items {
		for _, cond := range n.Status.Conditions {
			if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
				ready++
			}
		}
	}
	return ready
}
