// Package targets resolves the target cluster of a Release and keeps one
// connection per cluster: the host cluster for an empty spec.cluster, else
// the Cluster object's kubeconfig Secret. It decides whether a Release may
// target a Cluster (the Cluster's namespaceSelector against the labels of
// the Release's namespace), which kubeconfigs it accepts (inline credentials
// only: no exec plugins, auth providers or local files), and when a cached
// connection is stale (the Secret's resourceVersion changed).
//
// It also decides who the requests made for a Release are made as (IdentityOf):
// its spec.serviceAccountName, else the lockdown's DefaultServiceAccount, of the
// Release's namespace, through Kubernetes impersonation on the host and on remote
// Clusters alike; zero: convoy's own identity. A Release's ServiceAccount must
// exist on the host. Connections per identity share their cluster's discovery
// and REST mapper and are kept in a bounded LRU.
//
// Every failure is a *NotReadyError (reason ClusterNotReady) whose Kind says
// which check failed and whose message says what to fix. It must not apply
// anything, write any status, or decide when to retry; it reads Clusters,
// Secrets and Namespaces on the host and the discovery data of the targets,
// nothing else. No other package builds a client for a target cluster: the
// controller's and observer's clients (Target.Client, Target.Dynamic for
// informers, Target.ServerVersion for the Cluster status) all come from here
// (TestOnlyClustersBuildsTargetClients checks the module's sources).
package targets
