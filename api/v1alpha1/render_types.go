package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// Render is an immutable snapshot of one render of a Release, like a
// ControllerRevision. It is named <release>-<first 10 hex digits of the digest>,
// labelled convoy.kumodo.io/release=<release> and owned by the Release. Only metadata
// may change after creation.
type Render struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// renderRef is the digest of the canonical manifests, after mutations: sha256:<hex>.
	RenderRef string `json:"renderRef"`
	// release is the name of the Release rendered.
	Release string `json:"release"`
	// chart is the chart rendered.
	Chart RenderChart `json:"chart"`
	// valuesDigest is the digest of the merged values.
	// +optional
	ValuesDigest string `json:"valuesDigest,omitempty"`
	// objectCount is the number of objects in manifests.
	// +optional
	ObjectCount int32 `json:"objectCount,omitempty"`
	// waves are the sync waves of the render, ascending.
	// +optional
	// +listType=atomic
	Waves []int32 `json:"waves,omitempty"`
	// manifests is the gzip of the canonical YAML stream (base64 in JSON).
	// +optional
	Manifests []byte `json:"manifests,omitempty"`
}

// RenderChart is the chart of a render.
type RenderChart struct {
	// name of the chart.
	Name string `json:"name"`
	// version of the chart.
	// +optional
	Version string `json:"version,omitempty"`
	// commit is the Git commit the chart was taken from (spec.chart.git).
	// +optional
	Commit string `json:"commit,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// RenderList is a list of Renders.
type RenderList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// items are the Renders.
	Items []Render `json:"items"`
}
