package testenv

import (
	"fmt"
	"testing"

	"kumodo.io/convoy/internal/localcluster"
	"kumodo.io/convoy/internal/render/chartrepo"
)

// ClusterMain is the TestMain of a package whose integration tests need one local
// control plane with opts and nothing of convoy's: it quiets the logs (QuietLogs),
// starts the control plane into *cluster and runs the tests (Main).
func ClusterMain(m *testing.M, opts localcluster.Options, cluster **localcluster.Cluster) {
	QuietLogs()
	Main(m, func(s *Setup) (err error) {
		*cluster, err = s.Cluster("the local control plane", opts)
		return err
	})
}

// Charts serves the Helm repository of the charts in dir (chartrepo.Build: a folder of
// chart folders, packaged when served) until the tests are done and returns its URL.
func (s *Setup) Charts(dir string) (string, error) {
	repo, err := chartrepo.Build(dir)
	if err != nil {
		return "", fmt.Errorf("the chart repository of %s: %w", dir, err)
	}
	return s.Serve(repo), nil
}

// ServeCharts serves the Helm repository of the charts in dir (chartrepo.Build) on a
// loopback port until the end of the test and returns its URL.
func ServeCharts(t testing.TB, dir string) string {
	t.Helper()
	repo, err := chartrepo.Build(dir)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := chartrepo.Serve("127.0.0.1:0", repo)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return srv.URL
}
