// Package shards_test proves sharding on a real local control
// plane: the release controller and the observer each run as two shards in this
// process (--shard=a and --shard=b: hostmanager.Options.Shard), beside convoy's API
// server, and a Release labelled convoy.kumodo.io/shard is reconciled and assessed
// by its shard's controller and observer only, also after the label moves it to the
// other shard.
//
// With -short nothing runs.
package shards_test

import (
	"testing"

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
		if err := apiservertest.StartIn(s, host, "shards"); err != nil {
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
