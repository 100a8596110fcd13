// Package clusterstatus is the Cluster status reconciler of the controller process:
// it writes each Cluster's Ready condition (Reachable, Unreachable or
// KubeconfigNotReady), kubernetesVersion and observedGeneration, connecting through
// internal/targets as the release controller does. It writes nothing but the status
// of Clusters.
package clusterstatus
