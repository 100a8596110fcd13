//go:build tools

// Package kube pins the sources of the Kubernetes components that convoy's
// local control plane runs. build.sh compiles them into bin/k8s/<version>/.
package kube

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
