package observer

import (
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

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
		stopAPIServer, err := apiservertest.Start(s.Context(), controlPlane, apiservertest.Options{
			Namespace: "convoy-local", ServiceName: "convoy-apiserver-observer", EtcdPrefix: "/convoy",
			RegistrationTimeout: 2 * time.Minute, WaitForDiscovery: true,
		})
		if err != nil {
			return fmt.Errorf("start convoy's API server: %w", err)
		}
		s.Cleanup(stopAPIServer)
		repo, err := chartrepo.Build("testdata/charts")
		if err != nil {
			return err
		}
		charts := httptest.NewServer(repo)
		s.Cleanup(charts.Close)
		chartsURL = charts.URL
		return nil
	})
}
