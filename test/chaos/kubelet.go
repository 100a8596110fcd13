package chaos

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// markPodsReady stands in for the kubelet that kwok only simulates: when etcd or
// kube-apiserver was down long enough for the node lifecycle controller to find a
// kwok node's heartbeat late, it sets Ready=False on that node's pods, and kwok,
// which moves a pod through its stages once, never sets it back; a real kubelet would.
// This sets Ready=True again on every pod of the namespaces whose containers are
// ready and whose node is Ready. It returns how many it repaired.
func markPodsReady(ctx context.Context, kube kubernetes.Interface, namespaces []string) (int, error) {
	nodes, err := kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, err
	}
	ready := map[string]bool{}
	for _, n := range nodes.Items {
		ready[n.Name] = conditionTrue(n.Status.Conditions, corev1.NodeReady)
	}
	repaired := 0
	for _, ns := range namespaces {
		pods, err := kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return repaired, err
		}
		for _, p := range pods.Items {
			if p.Status.Phase != corev1.PodRunning || !ready[p.Spec.NodeName] {
				continue
			}
			if !podCondition(p.Status.Conditions, corev1.ContainersReady) || podCondition(p.Status.Conditions, corev1.PodReady) {
				continue
			}
			patch := fmt.Appendf(nil, `{"status":{"conditions":[{"type":"Ready","status":"True","lastTransitionTime":%q}]}}`, time.Now().UTC().Format(time.RFC3339))
			if _, err := kube.CoreV1().Pods(ns).Patch(ctx, p.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status"); err != nil {
				return repaired, fmt.Errorf("mark pod %s/%s Ready: %w", ns, p.Name, err)
			}
			repaired++
		}
	}
	return repaired, nil
}

func conditionTrue(cs []corev1.NodeCondition, t corev1.NodeConditionType) bool {
	for _, c := range cs {
		if c.Type == t {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func podCondition(cs []corev1.PodCondition, t corev1.PodConditionType) bool {
	for _, c := range cs {
		if c.Type == t {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// keepPodsReady runs markPodsReady every 5 s until ctx ends, as a kubelet would
// report its pods again after its node's heartbeat was late.
func (e *env) keepPodsReady(ctx context.Context, kube kubernetes.Interface, namespaces []string, log *eventLog) {
	tick := time.NewTicker(5 * time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if n, _ := markPodsReady(ctx, kube, namespaces); n > 0 {
			log.printf("Marked %d pods Ready again after their node's late heartbeat (kwok does not)", n)
		}
	}
}
