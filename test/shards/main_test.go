// Package shards_test proves sharding (issue 15, point 4) on a real local control
// plane: the release controller and the observer each run as two shards in this
// process (--shard=a and --shard=b: hostmanager.Options.Shard), beside convoy's API
// server, and a Release labelled convoy.kumodo.io/shard is reconciled and assessed
// by its shard's controller and observer only, also after the label moves it to the
// other shard.
//
// With -short nothing runs.
package shards_test

import (
	"fmt"
	"testing"
	"time"

	"kumodo.io/convoy/internal/apiserver/apiservertest"
	"kumodo.io/convoy/internal/localcluster"
	"kumodo.io/convoy/internal/render/chartrepo"
	"kumodo.io/convoy/internal/testenv"
)

var (
	// host is the local control plane; nil with -short.
	host *localcluster.Cluster
	// charts is the URL of the chart repository of testdata/charts.
	charts string
)

func TestMain(m *testing.M) {
	testenv.QuietLogs()
	testenv.Main(m, func(s *testenv.Setup) (err error) {
		// ConfigMaps only: no workloads, so etcd and kube-apiserver suffice.
		if host, err = s.Cluster("the local control plane", localcluster.Options{}); err != nil {
			return err
		}
		stopAPIServer, err := apiservertest.Start(s.Context(), host, apiservertest.Options{
			Namespace: "convoy-shards", ServiceName: "convoy-apiserver-shards", EtcdPrefix: "/convoy-shards",
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
		srv, err := chartrepo.Serve("127.0.0.1:0", repo)
		if err != nil {
			return err
		}
		s.Cleanup(func() { _ = srv.Close() })
		charts = srv.URL
		return nil
	})
}
