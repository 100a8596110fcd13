package controller

import (
	"testing"

	"k8s.io/client-go/rest"

	"kumodo.io/convoy/internal/apiserver/apiservertest"
	"kumodo.io/convoy/internal/localcluster"
	"kumodo.io/convoy/internal/testenv"
)

// The package's integration tests run against a real local control plane with convoy's
// aggregated API server running in this process and registered with it. The control
// plane runs workloads (kube-controller-manager, kube-scheduler, kwok with one
// simulated node) so that hook Jobs complete. With -short only the pure tests run.

var (
	// controlPlane is the local control plane; nil with -short.
	controlPlane *localcluster.Cluster
	// charts is the package's Helm repository.
	charts *chartRepo
)

func TestMain(m *testing.M) {
	// convoy's API server in this process, registered with the aggregator and
	// discoverable, as the controller's REST mapper needs.
	apiservertest.Main(m, apiservertest.MainOptions{
		Name: "controller", Cluster: localcluster.Options{Workloads: true}, Host: &controlPlane,
		Then: func(s *testenv.Setup) (err error) {
			if charts, err = newChartRepo(); err != nil {
				return err
			}
			s.Cleanup(charts.close)
			return nil
		},
	})
}

// hostConfig is the admin configuration of the local control plane.
func hostConfig() *rest.Config { return controlPlane.RestConfig() }
