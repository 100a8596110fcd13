package localcluster_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"kumodo.io/convoy/internal/localcluster"
)

// A cluster shares another's etcd only under a prefix of its own.
func TestValidateEtcd(t *testing.T) {
	cases := map[string]struct {
		etcd, prefix string
		wantErr      string
	}{
		"own etcd":                        {},
		"own etcd, the default prefix":    {prefix: "/registry"},
		"own etcd, another prefix":        {prefix: "/clusters/a", wantErr: "without a shared etcd"},
		"shared etcd with a prefix":       {etcd: "http://127.0.0.1:2379", prefix: "/clusters/dev-1"},
		"shared etcd without a prefix":    {etcd: "http://127.0.0.1:2379", wantErr: "needs an etcd prefix of its own"},
		"shared etcd, the default prefix": {etcd: "http://127.0.0.1:2379", prefix: "/registry", wantErr: "needs an etcd prefix of its own"},
		"shared etcd, a relative prefix":  {etcd: "http://127.0.0.1:2379", prefix: "clusters/a", wantErr: "want an absolute path"},
		"shared etcd, a trailing slash":   {etcd: "http://127.0.0.1:2379", prefix: "/clusters/a/", wantErr: "want an absolute path"},
		"shared etcd that is not a URL":   {etcd: "127.0.0.1:2379", prefix: "/clusters/a", wantErr: "not an etcd client URL"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := localcluster.ValidateEtcd(localcluster.Options{Etcd: tc.etcd, EtcdPrefix: tc.prefix})
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("error %v, want none", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("error %v, want one that says %q", err, tc.wantErr)
			}
		})
	}
}

// StartClusters refuses clusters it cannot name before it starts anything.
func TestStartClustersRefusesBadNames(t *testing.T) {
	cases := map[string]struct {
		clusters int
		name     func(int) string
		wantErr  string
	}{
		"no cluster":      {clusters: 0, wantErr: "at least 1 cluster"},
		"a repeated name": {clusters: 2, name: func(int) string { return "same" }, wantErr: `name "same" is empty, repeated`},
		"an empty name":   {clusters: 1, name: func(int) string { return "" }, wantErr: `name "" is empty`},
		"a path":          {clusters: 1, name: func(int) string { return "a/b" }, wantErr: "not a folder name"},
		"dot-dot":         {clusters: 1, name: func(int) string { return ".." }, wantErr: "not a folder name"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f, err := localcluster.StartClusters(t.Context(), localcluster.ClustersOptions{Clusters: tc.clusters, Name: tc.name, BinDir: t.TempDir()})
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("StartClusters: %v; want an error that says %q", err, tc.wantErr)
			}
			if f != nil {
				t.Errorf("StartClusters returned clusters with its error: %+v", f)
			}
		})
	}
}

// Clusters share the first one's etcd, yet each has its own objects; one
// kube-apiserver stopped and started again finds its objects again.
func TestClustersAreIndependentOnOneEtcd(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the Kubernetes binaries")
	}
	f, err := localcluster.StartClusters(t.Context(), localcluster.ClustersOptions{Clusters: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := f.Stop(); err != nil {
			t.Errorf("stop the clusters: %v", err)
		}
	})
	one, two := f.Clusters[0], f.Clusters[1]
	if f.Name(1) != "cluster-2" || f.Cluster("cluster-2") != two {
		t.Errorf("the second cluster is %q", f.Name(1))
	}
	if _, ok := two.Running()["etcd"]; ok || two.EtcdURL() != one.EtcdURL() {
		t.Errorf("cluster-2 runs %v on etcd %s; want no etcd of its own, cluster-1's %s", two.Running(), two.EtcdURL(), one.EtcdURL())
	}
	if two.EtcdPrefix() != "/clusters/cluster-2" || one.EtcdPrefix() != "/registry" {
		t.Errorf("etcd prefixes %q and %q", one.EtcdPrefix(), two.EtcdPrefix())
	}
	ctx := t.Context()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "only-on-two"}}
	if _, err := clientset(t, two).CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := clientset(t, one).CoreV1().Namespaces().Get(ctx, ns.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("cluster-1 sees cluster-2's namespace: %v", err)
	}

	if err := two.Kill("kube-apiserver"); err != nil {
		t.Fatal(err)
	}
	if _, err := clientset(t, two).CoreV1().Namespaces().Get(ctx, ns.Name, metav1.GetOptions{}); err == nil {
		t.Fatal("cluster-2 answers with its kube-apiserver killed")
	}
	if err := two.Restart("kube-apiserver"); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := clientset(t, two).CoreV1().Namespaces().Get(ctx, ns.Name, metav1.GetOptions{})
		return err == nil, nil
	})
	if err != nil {
		t.Errorf("cluster-2's namespace after its kube-apiserver started again: %v", err)
	}
}

// BenchmarkClustersStart measures what each added target control plane costs: the time
// to start N (kube-apiserver on the host's etcd, kube-controller-manager,
// kube-scheduler, kwok with one node), the resident memory of its processes plus
// what the shared etcd grew by, and the CPU they use while idle, per cluster. CONVOY_FLEET_SIZES lists the Ns
// (default 1,2,5,10). See docs/notes/local-fleet.md.
//
//	CONVOY_KUBE_BIN_DIR=... go test -run '^$' -bench BenchmarkClustersStart -benchtime 1x ./internal/localcluster/
func BenchmarkClustersStart(b *testing.B) {
	sizes := []int{1, 2, 5, 10}
	if s := os.Getenv("CONVOY_FLEET_SIZES"); s != "" {
		sizes = nil
		for _, f := range strings.Split(s, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil {
				b.Fatalf("CONVOY_FLEET_SIZES: %v", err)
			}
			sizes = append(sizes, n)
		}
	}
	host, err := localcluster.Start(b.Context(), localcluster.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = host.Stop() })
	etcdPID := host.PID("etcd")
	for _, n := range sizes {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			for range b.N {
				etcdBefore, _ := localcluster.RSS(etcdPID)
				started := time.Now()
				f, err := localcluster.StartClusters(b.Context(), localcluster.ClustersOptions{
					Clusters: n, Etcd: host.EtcdURL(), Workloads: true, Nodes: 1, StartTimeout: 10 * time.Minute,
				})
				if err != nil {
					b.Fatal(err)
				}
				took := time.Since(started)
				// The idle cost: CPU over a window of 20 s (the controllers' first lists
				// and the nodes' heartbeats), then the memory.
				cpu := func() time.Duration {
					var sum time.Duration
					for _, c := range f.Clusters {
						for _, pid := range c.Running() {
							if t, err := localcluster.CPUTime(pid); err == nil {
								sum += t
							}
						}
					}
					return sum
				}
				const window = 20 * time.Second
				cpuBefore := cpu()
				select {
				case <-b.Context().Done():
					b.Fatal(b.Context().Err())
				case <-time.After(window):
				}
				idle := float64(cpu()-cpuBefore) / float64(window)
				byProcess := map[string]int64{}
				var total int64
				for _, c := range f.Clusters {
					for name, pid := range c.Running() {
						rss, err := localcluster.RSS(pid)
						if err != nil {
							b.Fatal(err)
						}
						byProcess[name] += rss
						total += rss
					}
				}
				etcdAfter, _ := localcluster.RSS(etcdPID)
				total += etcdAfter - etcdBefore
				if err := f.Stop(); err != nil {
					b.Fatal(err)
				}
				const mib = 1 << 20
				b.ReportMetric(took.Seconds(), "s/start")
				b.ReportMetric(took.Seconds()/float64(n), "s/cluster")
				b.ReportMetric(float64(total)/mib/float64(n), "MiB/cluster")
				b.ReportMetric(idle*1000/float64(n), "idle-millicores/cluster")
				names := make([]string, 0, len(byProcess))
				for name := range byProcess {
					names = append(names, name)
				}
				slices.Sort(names)
				for _, name := range names {
					b.Logf("N=%d %s: %.0f MiB per cluster", n, name, float64(byProcess[name])/mib/float64(n))
				}
				b.Logf("N=%d etcd grew by %.0f MiB", n, float64(etcdAfter-etcdBefore)/mib)
			}
		})
	}
}

// Clusters stop within seconds, whatever its processes do with SIGTERM: its clusters'
// processes stop together, each killed after StopGrace, the shared etcd last. Each
// cluster runs, besides its control plane with workloads, a process that ignores
// SIGTERM (as a kube-apiserver draining its requests, or a controller finishing its
// reconciles, does for up to a minute under load).
func TestClustersStopWithinSeconds(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the Kubernetes binaries")
	}
	const bound = 20 * time.Second
	f, err := localcluster.StartClusters(t.Context(), localcluster.ClustersOptions{Clusters: 2, Workloads: true, Nodes: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Stop() })
	var pids []int
	marks := t.TempDir()
	for i, c := range f.Clusters {
		// The shell marks when it ignores SIGTERM: a Stop before that would end it at once.
		mark := filepath.Join(marks, f.Name(i))
		err := c.Run(t.Context(), localcluster.Process{
			Name: "ignores-sigterm", Path: "/bin/sh", Args: []string{"-c", `trap "" TERM; : > "$0"; exec sleep 600`, mark},
		})
		if err != nil {
			t.Fatal(err)
		}
		err = wait.PollUntilContextTimeout(t.Context(), 20*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
			_, err := os.Stat(mark)
			return err == nil, nil
		})
		if err != nil {
			t.Fatalf("%s: the process that ignores SIGTERM did not start: %v", f.Name(i), err)
		}
		running := c.Running()
		for _, name := range []string{"ignores-sigterm", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok"} {
			if running[name] == 0 {
				t.Fatalf("%s runs %v, no %s", f.Name(i), running, name)
			}
		}
		for _, pid := range running {
			pids = append(pids, pid)
		}
	}

	started := time.Now()
	if err := f.Stop(); err != nil {
		t.Errorf("stop the clusters: %v", err)
	}
	took := time.Since(started)
	t.Logf("the %d clusters (%d processes) stopped in %s", len(f.Clusters), len(pids), took.Round(10*time.Millisecond))
	if took > bound {
		t.Errorf("the clusters stopped in %s, want within %s", took.Round(10*time.Millisecond), bound)
	}
	if took < localcluster.StopGrace {
		t.Errorf("the clusters stopped in %s, before the grace %s: the process that ignores SIGTERM was not waited for", took, localcluster.StopGrace)
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("process %d still exists after the clusters stopped (kill -0: %v)", pid, err)
		}
	}
}
