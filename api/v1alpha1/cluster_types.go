package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// Cluster is a target cluster that Releases deliver to (cluster-scoped).
type Cluster struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec says how to reach the cluster and which namespaces may target it.
	Spec ClusterSpec `json:"spec"`
	// status is written by the controller.
	// +optional
	Status ClusterStatus `json:"status,omitempty"`
}

// ClusterSpec says how to reach a cluster.
type ClusterSpec struct {
	// kubeconfig is where the cluster's kubeconfig is.
	Kubeconfig KubeconfigSource `json:"kubeconfig"`
	// namespaceSelector selects the namespaces whose Releases may target the cluster;
	// empty or unset: all.
	// +optional
	NamespaceSelector *metav1.LabelSelector `json:"namespaceSelector,omitempty"`
}

// KubeconfigSource is where a kubeconfig is.
type KubeconfigSource struct {
	// secretRef is a Secret key on the host cluster holding the kubeconfig.
	SecretRef SecretKeyReference `json:"secretRef"`
}

// SecretKeyReference is a key of a Secret.
type SecretKeyReference struct {
	// namespace of the Secret.
	Namespace string `json:"namespace"`
	// name of the Secret.
	Name string `json:"name"`
	// key in the Secret; empty: value.
	// +optional
	Key string `json:"key,omitempty"`
}

// ClusterStatus is written by the controller.
type ClusterStatus struct {
	// observedGeneration is the generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// conditions hold Ready (reason Reachable, Unreachable or KubeconfigNotReady).
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// kubernetesVersion is the cluster's version, such as v1.37.2.
	// +optional
	KubernetesVersion string `json:"kubernetesVersion,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ClusterList is a list of Clusters.
type ClusterList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// items are the Clusters.
	Items []Cluster `json:"items"`
}
