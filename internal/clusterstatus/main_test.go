package clusterstatus

import (
	"testing"

	"kumodo.io/convoy/internal/apiserver/apiservertest"
	"kumodo.io/convoy/internal/localcluster"
	"kumodo.io/convoy/internal/testenv"
)

// The integration tests run the Cluster status reconciler in this process, beside
// convoy's API server, on a real local control plane; a second local control plane
// is the Cluster they check. With -short only the pure tests run.

// controlPlane is the local control plane; nil with -short.
var controlPlane *localcluster.Cluster

func TestMain(m *testing.M) {
	testenv.QuietLogs()
	testenv.Main(m, func(s *testenv.Setup) (err error) {
		if controlPlane, err = s.Cluster("the local control plane", localcluster.Options{}); err != nil {
			return err
		}
		return apiservertest.StartIn(s, controlPlane, "clusterstatus")
	})
}
