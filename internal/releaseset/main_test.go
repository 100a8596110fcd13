package releaseset_test

import (
	"testing"

	"kumodo.io/convoy/internal/apiserver/apiservertest"
	"kumodo.io/convoy/internal/localcluster"
)

// The end-to-end tests run the controller process's reconcilers (wiring.Setup:
// Releases, Clusters, ReleaseSets) and the observer in this process, beside convoy's
// API server, on a real local control plane. Several Cluster objects point at that
// control plane: the fleet of a test. It runs kube-controller-manager (the garbage
// collector deletes a deleted set's Releases) and one simulated node; the failing
// revision's Deployment asks for a node that does not exist, so it never becomes
// available. With -short only the pure tests run.

var (
	// host is the local control plane; nil with -short.
	host *localcluster.Cluster
	// charts is the URL of the chart repository of testdata/charts.
	charts string
)

func TestMain(m *testing.M) {
	apiservertest.Main(m, apiservertest.MainOptions{
		Name: "releaseset", Cluster: localcluster.Options{Workloads: true},
		Host: &host, Charts: "testdata/charts", ChartsURL: &charts,
	})
}
