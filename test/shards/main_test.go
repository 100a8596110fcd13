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
)

var (
	// host is the local control plane; nil with -short.
	host *localcluster.Cluster
	// charts is the URL of the chart repository of testdata/charts.
	charts string
)

func TestMain(m *testing.M) {
	// ConfigMaps only: no workloads, so etcd and kube-apiserver suffice.
	apiservertest.Main(m, apiservertest.MainOptions{
		Name: "shards", Host: &host, Charts: "testdata/charts", ChartsURL: &charts,
	})
}
