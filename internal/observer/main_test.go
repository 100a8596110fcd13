package observer

import (
	"testing"

	"kumodo.io/convoy/internal/apiserver/apiservertest"
	"kumodo.io/convoy/internal/localcluster"
)

// The package's integration tests run against one real local control plane with
// workloads (kube-controller-manager, kube-scheduler and kwok's simulated nodes, so
// Deployments really become Available) and convoy's API server in this process. With
// -short only the unit tests run.

var (
	// controlPlane is the local control plane; nil with -short.
	controlPlane *localcluster.Cluster
	// chartsURL is the test Helm repository (testdata/charts).
	chartsURL string
)

func TestMain(m *testing.M) {
	apiservertest.Main(m, apiservertest.MainOptions{
		Name: "observer", Cluster: localcluster.Options{Workloads: true, Nodes: 2},
		Host: &controlPlane, Charts: "testdata/charts", ChartsURL: &chartsURL,
	})
}
