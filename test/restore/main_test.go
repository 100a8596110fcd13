// Package restore_test proves backup and restore on real parts, end to end: Releases on
// the host and on a remote Cluster, a real `convoy backup` to a folder, changes (new
// Releases, upgrades that add and drop objects, a deletion, a /sync), the controller
// stopped, a real `convoy restore`, the controller started again, and `kubectl convoy
// orphans --delete`: the targets end exactly as the restored Releases say, nothing of a
// live Release is deleted, the /sync of after the backup is not replayed, and nothing
// is orphaned.
//
// A host control plane (etcd, kube-apiserver) with convoy's API server in this process
// under a known etcd prefix, one target control plane on the host's etcd registered
// as a Cluster, a chart repository of testdata/charts, and the release controller and
// the observer in this process, each a manager of its own as `convoy controller` and
// `convoy observer` are. No Pods: the chart's objects are ready as soon as they exist.
//
// With -short nothing runs.
package restore_test

import (
	"context"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"kumodo.io/convoy/internal/apiserver/apiservertest"
	"kumodo.io/convoy/internal/localcluster"
	"kumodo.io/convoy/internal/testenv"
)

// etcdPrefixStart is the start of the etcd prefix of convoy's API server here
// (apiservertest adds a random suffix).
const etcdPrefixStart = "/convoy-restore"

var (
	// host is the local control plane; nil with -short.
	host *localcluster.Cluster
	// remote is the target cluster registered as a Cluster.
	remote *localcluster.Cluster
	// charts is the URL of the chart repository of testdata/charts.
	charts string
)

func TestMain(m *testing.M) {
	testenv.QuietLogs()
	testenv.Main(m, func(s *testenv.Setup) (err error) {
		if host, err = s.Cluster("the host control plane", localcluster.Options{}); err != nil {
			return err
		}
		if err := apiservertest.StartWith(s, host, apiservertest.Options{
			Namespace: "convoy-restore", ServiceName: "convoy-apiserver-restore", EtcdPrefix: etcdPrefixStart,
			RegistrationTimeout: 2 * time.Minute, WaitForDiscovery: true,
		}); err != nil {
			return err
		}
		fleet, err := s.Clusters("the target cluster", localcluster.ClustersOptions{
			Clusters: 1, Etcd: host.EtcdURL(), Name: func(int) string { return "restore-target" },
		})
		if err != nil {
			return err
		}
		remote = fleet.Clusters[0]
		charts, err = s.Charts("testdata/charts")
		return err
	})
}

// etcdPrefix is the etcd prefix that convoy's API server chose, as `convoy backup
// --etcd-prefix` takes it: that of the first key under etcdPrefixStart, up to its
// second slash. Call it once the server has stored objects.
func etcdPrefix(t *testing.T, ctx context.Context) string {
	t.Helper()
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{host.EtcdURL()}, DialTimeout: 10 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	resp, err := c.Get(ctx, etcdPrefixStart+"-", clientv3.WithPrefix(), clientv3.WithKeysOnly(), clientv3.WithLimit(1))
	if err != nil {
		t.Fatalf("reading etcd under %s-: %v", etcdPrefixStart, err)
	}
	if len(resp.Kvs) == 0 {
		t.Fatalf("no key of convoy's API server under %s- in etcd", etcdPrefixStart)
	}
	key := string(resp.Kvs[0].Key)
	i := strings.Index(key[1:], "/")
	if i < 0 {
		t.Fatalf("etcd key %q has no prefix", key)
	}
	return key[:i+1]
}
