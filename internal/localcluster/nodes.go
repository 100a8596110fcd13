package localcluster

import (
	"context"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

// What a simulated node tells the scheduler: the resources and the well-known
// labels of a cloud node, so that Pods with ephemeral-storage requests, zone
// anti-affinity or topology spread constraints schedule as they do on a real
// cluster. kwok keeps the capacity and allocatable a node is created with.
const (
	// nodeRegion is the topology.kubernetes.io/region of every simulated node.
	nodeRegion = "local"
	// nodeInstanceType is the node.kubernetes.io/instance-type of every simulated node.
	nodeInstanceType = "kwok-standard-32"
)

// nodeZones are the topology.kubernetes.io/zone values, given to the simulated
// nodes round-robin (node i is in nodeZones[i % 3]).
var nodeZones = [...]string{"local-a", "local-b", "local-c"}

// nodeName is the name of the i-th simulated node.
func nodeName(i int) string { return fmt.Sprintf("kwok-node-%d", i) }

// nodeResources is the capacity (and allocatable) of a simulated node: large, so
// that benchmarks fit thousands of Pods on one node.
func nodeResources() corev1.ResourceList {
	return corev1.ResourceList{
		corev1.ResourceCPU:                     resource.MustParse("32"),
		corev1.ResourceMemory:                  resource.MustParse("256Gi"),
		corev1.ResourceEphemeralStorage:        resource.MustParse("1Ti"),
		corev1.ResourcePods:                    resource.MustParse("1000"),
		corev1.ResourceHugePagesPrefix + "1Gi": resource.MustParse("0"),
		corev1.ResourceHugePagesPrefix + "2Mi": resource.MustParse("0"),
	}
}

// nodeLabels are the labels of the i-th simulated node.
func nodeLabels(i int) map[string]string {
	return map[string]string{
		corev1.LabelHostname:           nodeName(i),
		corev1.LabelOSStable:           "linux",
		corev1.LabelArchStable:         "amd64",
		corev1.LabelInstanceTypeStable: nodeInstanceType,
		corev1.LabelTopologyRegion:     nodeRegion,
		corev1.LabelTopologyZone:       nodeZones[i%len(nodeZones)],
		"type":                         "kwok",
	}
}

// simulatedNode is the i-th simulated node as it is created: kwok manages it (the
// annotation) and makes it Ready.
func simulatedNode(i int) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        nodeName(i),
			Annotations: map[string]string{"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"},
			Labels:      nodeLabels(i),
		},
		Status: corev1.NodeStatus{Capacity: nodeResources(), Allocatable: nodeResources()},
	}
}

// ensureNode creates the i-th simulated node, or brings the labels and resources of
// one that a reused state folder kept (made by an older convoy) up to date. A node
// that is already as wanted is not written.
func ensureNode(ctx context.Context, cs kubernetes.Interface, i int) error {
	want := simulatedNode(i)
	_, err := cs.CoreV1().Nodes().Create(ctx, want, metav1.CreateOptions{})
	if err == nil {
		return nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create node %s: %w", want.Name, err)
	}
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		node, err := cs.CoreV1().Nodes().Get(ctx, want.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if labels := mergedLabels(node.Labels, want.Labels); labels != nil {
			node.Labels = labels
			if node, err = cs.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{}); err != nil {
				return err
			}
		}
		if equality.Semantic.DeepEqual(node.Status.Capacity, want.Status.Capacity) &&
			equality.Semantic.DeepEqual(node.Status.Allocatable, want.Status.Allocatable) {
			return nil
		}
		node.Status.Capacity, node.Status.Allocatable = want.Status.Capacity, want.Status.Allocatable
		_, err = cs.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("update node %s to the simulated node's labels and resources: %w", want.Name, err)
	}
	return nil
}

// mergedLabels is have with every label of want set, or nil when have already
// holds them all.
func mergedLabels(have, want map[string]string) map[string]string {
	merged := maps.Clone(have)
	if merged == nil {
		merged = map[string]string{}
	}
	maps.Copy(merged, want)
	if maps.Equal(merged, have) {
		return nil
	}
	return merged
}
