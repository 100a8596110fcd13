// Package v1alpha1 holds the types of the convoy.kumodo.io/v1alpha1 API: Release,
// Render, ReleaseInventory, Cluster, ReleaseSet, Alert and Receiver, and the constants (condition types, reasons,
// annotations, labels) that every convoy process shares.
//
// The package only describes the API. It does not decide anything: validation,
// defaulting rules beyond plain field defaults, and the generation rules live in
// internal/apiserver. The convoy apiserver serves these Go types directly as both its
// internal (hub) and its external version, so there is no conversion code.
//
// +k8s:deepcopy-gen=package
// +k8s:openapi-gen=true
// +k8s:defaulter-gen=TypeMeta
// +k8s:openapi-model-package=io.kumodo.convoy.api.v1alpha1
// +groupName=convoy.kumodo.io
package v1alpha1
