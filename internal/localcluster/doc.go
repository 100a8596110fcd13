// Package localcluster starts and stops a real Kubernetes control plane on
// this machine: etcd and kube-apiserver (with the front-proxy flags that an
// aggregated API server needs) and, on request, the parts that make
// workloads real: kube-controller-manager, kube-scheduler and kwok with
// simulated nodes that advertise a cloud node's resources and labels, and a
// default StorageClass whose claims kwok binds, so Deployments, StatefulSets
// and DaemonSets become ready and Jobs complete. StartClusters starts several
// such control planes on one etcd, each under a prefix of its own: target clusters
// for multi-cluster tests, benchmarks and `convoy dev --clusters N`.
//
// The binaries are built from the Go module proxy by hack/kube/build.sh into
// bin/k8s/<version>/ (see EnsureBinaries). Every port is picked free, every
// process runs in its own process group and dies with the process that started
// it, and Stop removes what Start made. It is used by the integration tests,
// the benchmarks and `convoy dev`; it must never be imported by convoy's
// production processes.
package localcluster
