package integration_test

import (
	"testing"

	"k8s.io/client-go/rest"

	"kumodo.io/convoy/internal/apiserver/apiservertest"
	"kumodo.io/convoy/internal/localcluster"
	"kumodo.io/convoy/internal/testenv"
)

// env is the package's control plane and convoy apiserver; unset with -short, when the
// tests skip themselves.
var env struct {
	cluster *localcluster.Cluster
	admin   *rest.Config
}

func TestMain(m *testing.M) {
	testenv.QuietLogs()
	testenv.Main(m, func(s *testenv.Setup) error {
		c, err := s.Cluster("the local control plane", localcluster.Options{})
		if err != nil {
			return err
		}
		env.cluster, env.admin = c, c.RestConfig()
		// Not convoy-system/convoy-apiserver: deploy/apiserver's manifests are dry-run
		// against this cluster and must not collide with the local registration.
		return apiservertest.StartWith(s, c, apiservertest.Options{
			Namespace: "convoy-local", ServiceName: "convoy-apiserver-local", EtcdPrefix: "/convoy"})
	})
}
