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
	testenv.ClusterMain(m, localcluster.Options{}, &controlPlane)
}
