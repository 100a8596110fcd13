package localcluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"time"
)

// ClustersOptions say what StartClusters starts.
type ClustersOptions struct {
	// Clusters is the number of control planes, at least 1.
	Clusters int
	// Name names the i-th cluster, i from 1; default "cluster-<i>". Names are unique
	// and fit a path segment: the cluster's state is in <Dir>/<name> and its keys in
	// etcd under /clusters/<name>.
	Name func(i int) string
	// Etcd is the client URL of the etcd every cluster keeps its data in, such as a
	// host cluster's EtcdURL. Empty: the first cluster runs an etcd of its own and the
	// others use it (stop them with Clusters.Stop, which stops that one last).
	Etcd string
	// Dir holds a folder per cluster; empty: a temporary one each, removed by Stop.
	Dir string
	// BinDir holds the binaries (default: BinDir()).
	BinDir string
	// Workloads and Nodes are each cluster's (Options.Workloads, Options.Nodes).
	Workloads bool
	Nodes     int
	// Parallel is how many clusters start at once (default: one per CPU; a
	// kube-apiserver's start is CPU-bound).
	Parallel int
	// Progress receives one line per step, each prefixed with the cluster's name.
	Progress io.Writer
	// StartTimeout bounds the start of each cluster (default 3 minutes).
	StartTimeout time.Duration
}

// Clusters is a set of local control planes that share one etcd: target clusters for
// multi-cluster tests, benchmarks and `convoy dev --clusters N`.
type Clusters struct {
	// Clusters are in the order of their names' index (Clusters[0] is cluster 1).
	Clusters []*Cluster
	names    []string
}

// Name is the name of Clusters[i].
func (f *Clusters) Name(i int) string { return f.names[i] }

// Cluster is the cluster of that name; nil when none has it.
func (f *Clusters) Cluster(name string) *Cluster {
	for i, n := range f.names {
		if n == name {
			return f.Clusters[i]
		}
	}
	return nil
}

// ClusterEtcdPrefix is where the cluster name of a Clusters keeps its keys in a shared etcd.
func ClusterEtcdPrefix(name string) string { return "/clusters/" + name }

// StartClusters starts opts.Clusters control planes on one etcd and returns once each
// answers (and, with workloads, has its nodes Ready). On error nothing it started is
// left running.
func StartClusters(ctx context.Context, opts ClustersOptions) (_ *Clusters, err error) {
	if opts.Clusters < 1 {
		return nil, fmt.Errorf("StartClusters needs at least 1 cluster, not %d", opts.Clusters)
	}
	if opts.Name == nil {
		opts.Name = func(i int) string { return "cluster-" + strconv.Itoa(i) }
	}
	if opts.Parallel < 1 {
		opts.Parallel = runtime.NumCPU()
	}
	if opts.Progress == nil {
		opts.Progress = io.Discard
	}
	var progressMu sync.Mutex // one line at a time from the clusters that start at once
	f := &Clusters{Clusters: make([]*Cluster, opts.Clusters), names: make([]string, opts.Clusters)}
	seen := map[string]bool{}
	for i := range opts.Clusters {
		name := opts.Name(i + 1)
		if name == "" || seen[name] || filepath.Base(name) != name || name == "." || name == ".." {
			return nil, fmt.Errorf("cluster %d: name %q is empty, repeated or not a folder name", i+1, name)
		}
		seen[name] = true
		f.names[i] = name
	}
	defer func() {
		if err != nil {
			_ = f.Stop()
		}
	}()
	options := func(i int) Options {
		o := Options{
			BinDir:       opts.BinDir,
			Workloads:    opts.Workloads,
			Nodes:        opts.Nodes,
			Progress:     &prefixWriter{prefix: "[" + f.names[i] + "] ", mu: &progressMu, w: opts.Progress},
			StartTimeout: opts.StartTimeout,
			Etcd:         opts.Etcd,
			EtcdPrefix:   ClusterEtcdPrefix(f.names[i]),
		}
		if opts.Dir != "" {
			o.Dir = filepath.Join(opts.Dir, f.names[i])
		}
		return o
	}
	first := 0
	if opts.Etcd == "" {
		// The first cluster runs the etcd that the others share.
		o := options(0)
		o.Etcd, o.EtcdPrefix = "", ""
		if f.Clusters[0], err = Start(ctx, o); err != nil {
			return nil, fmt.Errorf("start cluster %s: %w", f.names[0], err)
		}
		opts.Etcd = f.Clusters[0].EtcdURL()
		first = 1
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
		sem  = make(chan struct{}, opts.Parallel)
	)
	for i := first; i < opts.Clusters; i++ {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			c, err := Start(ctx, options(i))
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, fmt.Errorf("start cluster %s: %w", f.names[i], err))
				return
			}
			f.Clusters[i] = c
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err // the deferred Stop stops the clusters that started
	}
	return f, nil
}

// Stop stops every cluster together (StopClusters: in seconds, whatever
// the number of clusters; the shared etcd, if one of them runs it, last). It is safe
// to call more than once.
func (f *Clusters) Stop() error {
	if err := StopClusters(f.Clusters...); err != nil {
		return fmt.Errorf("stop the clusters: %w", err)
	}
	return nil
}

// prefixWriter writes each Write (one progress line) with a prefix.
type prefixWriter struct {
	prefix string
	mu     *sync.Mutex // shared by the writers of one underlying w
	w      io.Writer
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, err := io.WriteString(p.w, p.prefix+string(b)); err != nil {
		return 0, err
	}
	return len(b), nil
}
