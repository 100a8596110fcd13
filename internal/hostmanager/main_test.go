package hostmanager

import (
	"testing"

	"kumodo.io/convoy/internal/localcluster"
	"kumodo.io/convoy/internal/testenv"
)

// The package's integration tests run against a real local control plane (etcd and
// kube-apiserver). With -short only the unit tests run.

// controlPlane is the local control plane; nil with -short.
var controlPlane *localcluster.Cluster

func TestMain(m *testing.M) {
	testenv.QuietLogs()
	testenv.Main(m, func(s *testenv.Setup) (err error) {
		controlPlane, err = s.Cluster("the local control plane", localcluster.Options{})
		return err
	})
}
