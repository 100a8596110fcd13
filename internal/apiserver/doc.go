// Package apiserver is convoy apiserver: an extension API server on k8s.io/apiserver
// that serves convoy.kumodo.io/v1alpha1 from etcd, registered with the host cluster's
// kube-apiserver through an APIService.
//
// It decides who may write what and how a write changes an object: the generation,
// defaulting and validation rules and the /sync, /pin, /mutations, /lifecycle and
// /status subresources (see internal/apiserver/registry). It never reconciles
// anything and never talks to target clusters.
package apiserver
