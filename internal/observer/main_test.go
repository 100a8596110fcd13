package observer

import (
	"testing"

	"kumodo.io/convoy/internal/apiserver/apiservertest"
	"kumodo.io/convoy/internal/localcluster"
	"kumodo.io/convoy/internal/render/chartrepo"
	"kumodo.io/convoy/internal/testenv"
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
	testenv.QuietLogs()
	testenv.Main(m, func(s *testenv.Setup) (err error) {
		if controlPlane, err = s.Cluster("the local control plane", localcluster.Options{Workloads: true, Nodes: 2}); err != nil {
			return err
		}
		if err := apiservertest.StartIn(s, controlPlane, "observer"); err != nil {
			return err
		}
		repo, err := chartrepo.Build("testdata/charts")
		if err != nil {
			return err
		}
		chartsURL = s.Serve(repo)
		return nil
	})
}
