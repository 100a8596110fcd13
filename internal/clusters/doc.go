// Package clusters resolves the target cluster of a Release and keeps one
// connection per cluster: the host cluster for an empty spec.cluster, else
// the Cluster object's kubeconfig Secret. It decides whether a Release may
// target a Cluster (the Cluster's namespaceSelector against the labels of
// the Release's namespace), which kubeconfigs it accepts (inline credentials
// only: no exec plugins, auth providers or local files), and when a cached
// connection is stale (the Secret's resourceVersion changed).
//
// Every failure is a *NotReadyError (reason ClusterNotReady) whose Kind says
// which check failed and whose message says what to fix. It must not apply
// anything, write any status, or decide when to retry; it reads Clusters,
// Secrets and Namespaces on the host and the discovery data of the targets,
// nothing else. No other package builds a client for a remote cluster.
package clusters
