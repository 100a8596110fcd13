// Package ship_test proves what ships: the Helm chart charts/convoy (Helm's
// linter, values.schema.json, renders with default and non-default values, deploy/
// generated from it, a server-side dry run of its renders and an install onto the
// local control plane where convoy then reconciles a Release), the alerts and the
// Grafana dashboard (every PromQL expression parses with Prometheus' parser and
// names only metrics that the running processes export), the install path of
// README.md, and docs/tutorial.md (TestTutorial runs it against `convoy dev`). The
// image is tested in hack/image.
//
// No Pod runs on the local control plane (kwok simulates the nodes), so the install
// test runs the chart's processes from a convoy binary built on the host, with the
// flags of the chart's Deployments and the tokens of the chart's ServiceAccounts:
// the chart's objects, RBAC and flags are real, the containers are not.
//
// With -short only the tests that need no control plane run.
package ship_test

import (
	"context"
	"os"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"kumodo.io/convoy/internal/localcluster"
	"kumodo.io/convoy/internal/testenv"
)

// env is the package's control plane; nil with -short.
var env *struct {
	cluster *localcluster.Cluster
	admin   *rest.Config
}

func TestMain(m *testing.M) {
	testenv.Main(m, func(s *testenv.Setup) error {
		s.Cleanup(removeTempDirs) // last: after the cluster has stopped the processes using them
		c, err := s.Cluster("the local control plane", localcluster.Options{Progress: os.Stderr, Workloads: true, Nodes: 1})
		if err != nil {
			return err
		}
		s.Cleanup(stopInstall)
		env = &struct {
			cluster *localcluster.Cluster
			admin   *rest.Config
		}{cluster: c, admin: c.RestConfig()}
		return nil
	})
}

// needCluster skips a test that needs the control plane when it is not running.
func needCluster(t *testing.T) {
	t.Helper()
	if env == nil {
		t.Skip("needs the local control plane (not with -short)")
	}
}

func ctx(t *testing.T, d time.Duration) context.Context {
	c, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return c
}

func toYAML(t *testing.T, v any) string {
	t.Helper()
	b, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
