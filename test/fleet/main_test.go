// Package fleet_test proves on real control planes what a fleet of target clusters
// asks of the controller and the observer: one
// cluster that cannot be reached — its kube-apiserver stopped, or a link that holds
// connections — delays no Release of another cluster and leaks no goroutine.
//
// A host control plane with convoy's API server, and a fleet of target control planes
// on the host's etcd (testenv.Setup.Fleet), each registered as a Cluster through a
// testenv.Link; the release controller and the observer run in this process, as the
// shards tests run them.
//
// With -short nothing runs.
package fleet_test

import (
	"testing"

	"kumodo.io/convoy/internal/apiserver/apiservertest"
	"kumodo.io/convoy/internal/localcluster"
	"kumodo.io/convoy/internal/testenv"
)

// fleetSize is the number of target clusters.
const fleetSize = 3

var (
	// host is the local control plane; nil with -short.
	host *localcluster.Cluster
	// fleet are the target clusters, on host's etcd.
	fleet *localcluster.Clusters
	// charts is the URL of the chart repository of testdata/charts.
	charts string
)

func TestMain(m *testing.M) {
	// ConfigMaps only: no workloads, so etcd and kube-apiserver suffice, on the host
	// and on each target.
	apiservertest.Main(m, apiservertest.MainOptions{
		Name: "fleet", Host: &host, Charts: "testdata/charts", ChartsURL: &charts,
		Then: func(s *testenv.Setup) (err error) {
			fleet, err = s.Clusters("the target fleet", localcluster.ClustersOptions{Clusters: fleetSize, Etcd: host.EtcdURL()})
			return err
		},
	})
}
