package releaseset_test

import (
	"testing"

	"kumodo.io/convoy/internal/apiserver/apiservertest"
	"kumodo.io/convoy/internal/localcluster"
	"kumodo.io/convoy/internal/render/chartrepo"
	"kumodo.io/convoy/internal/testenv"
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
	testenv.QuietLogs()
	testenv.Main(m, func(s *testenv.Setup) (err error) {
		if host, err = s.Cluster("the local control plane", localcluster.Options{Workloads: true}); err != nil {
			return err
		}
		if err := apiservertest.StartIn(s, host, "releaseset"); err != nil {
			return err
		}
		repo, err := chartrepo.Build("testdata/charts")
		if err != nil {
			return err
		}
		charts = s.Serve(repo)
		return nil
	})
}
