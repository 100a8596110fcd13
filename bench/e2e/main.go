// Command e2e benchmarks convoy as a user gets it. The processes run
// exactly as `convoy dev` runs them — convoy apiserver, convoy controller and convoy
// observer as separate processes with their default flags, each with its own identity
// (a ServiceAccount's token, as in an installation: identity.go) and the rights dev
// grants it (internal/dev) — and N Releases of the podinfo-shaped
// chart of bench/controller (a Deployment at 0 replicas, a ServiceAccount, a Service
// and an Ingress; automatic mode) are created by a user who may only create and read
// Releases in their namespace (-per-namespace of them share one). For each N it reports:
//
//   - first create → every Release Ready (the Ready condition True, i.e. Applied and
//     Healthy), and p50/p99/max of each Release's create → Ready;
//   - the CPU seconds and peak RSS of every process (convoy controller, observer and
//     apiserver, kube-apiserver, etcd, kube-controller-manager, ...), from /proc;
//   - the API requests per Release, by server (kube-apiserver and convoy apiserver,
//     each from its own apiserver_request_total before and after: kube-apiserver does
//     not count what it proxies to convoy apiserver), verb, resource and code;
//   - a steady window after everything is Ready: the writes on both servers (goal 0
//     from convoy) and watch events on Releases and ReleaseInventories;
//   - before the N Releases, on the idle environment: the /sync → Applied latency of a
//     manual Release of 10 ConfigMaps (testdata/configs), -syncs times one after the
//     other (p50/p99/max), and -load-syncs more right after the N Releases are created,
//     while the controller works through them.
//
// The only flags given to the convoy processes are those dev gives them (kubeconfig,
// chart cache, health probe) plus a loopback metrics address, so that the figures are
// those of the defaults. Each N runs on a fresh environment (bench/internal/benchenv);
// every loop is bounded by a count and a duration; everything stops by itself.
//
//	go run ./bench/e2e -n=100,1000
//	make bench-e2e BENCH_FLAGS='-n=100'
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"kumodo.io/convoy/bench/internal/benchenv"
)

type config struct {
	ns                []int
	timeout           time.Duration
	steady            time.Duration
	createConcurrency int
	nodes             int
	convoyBin         string
	stateDir          string
	syncs             int
	loadSyncs         int
	profileDir        string
	shards            int
	floor             bool
	floorDryRuns      bool
	floorDesign       bool
	floorDirect       bool
	memoryLimit       int
	alerts            bool
	// perNamespace is how many Releases share a namespace (-per-namespace).
	perNamespace int
}

func main() {
	cfg := config{}
	var n string
	flag.StringVar(&n, "n", "100,1000", "comma-separated numbers of Releases; each runs on a fresh environment")
	flag.DurationVar(&cfg.timeout, "timeout", 20*time.Minute, "upper bound of the wait for every Release to be Ready, per N")
	flag.DurationVar(&cfg.steady, "steady", 150*time.Second, "the steady window after every Release is Ready, in which writes are counted (the default holds one of the controller's 2-minute resyncs)")
	flag.IntVar(&cfg.createConcurrency, "create-concurrency", 16, "concurrent clients creating the Releases")
	flag.IntVar(&cfg.nodes, "nodes", 1, "simulated nodes")
	flag.StringVar(&cfg.convoyBin, "convoy", "", "use this convoy binary instead of building ./cmd/convoy")
	flag.IntVar(&cfg.syncs, "syncs", 20, "/syncs of a manual 10-object Release timed to Applied before the N Releases are created (idle); 0: none")
	flag.IntVar(&cfg.loadSyncs, "load-syncs", 5, "/syncs of the same Release timed to Applied right after the N Releases are created, under their load; 0: none")
	flag.StringVar(&cfg.stateDir, "state-dir", "", "keep each N's control plane state and logs in <state-dir>/<N> (default: a temporary folder, removed)")
	flag.StringVar(&cfg.profileDir, "profile-dir", "", "serve the controller's and the observer's /debug/pprof/ on loopback (--pprof-bind-address) and write their heap profiles to this folder when all are Ready and after the steady window (n<N>-<process>-<phase>.heap), and CPU profiles of the first minute of the creates and of the steady window (.cpu) of those two, kube-apiserver (started with --profiling) and convoy apiserver, for go tool pprof")
	flag.IntVar(&cfg.shards, "shards", 0, "run this many controller and observer pairs, the i-th with --shard=<i> (i from 0), and label the Releases with the shards round robin; 0: one pair without --shard, every Release unlabelled")
	flag.BoolVar(&cfg.floor, "floor", false, "measure the floor instead: the chart's objects for N Releases applied by plain server-side applies (16 clients) until every Deployment is Healthy, with no convoy controller or observer (bench/e2e/floor.go)")
	flag.BoolVar(&cfg.floorDesign, "floor-design", false, "with -floor: also every request of convoy's API that the design requires of a first apply (the Release's create, its Render and inventory, their writes, the status, an event, the observer's health data and /sync), sent as the author and as convoy controller's and observer's ServiceAccounts, without their processes; implies -floor-dry-runs (bench/e2e/designfloor.go)")
	flag.BoolVar(&cfg.floorDirect, "floor-design-direct", false, "with -floor-design: convoy controller's and observer's requests of convoy's API straight to convoy apiserver's port, not through kube-apiserver's aggregator")
	flag.BoolVar(&cfg.floorDryRuns, "floor-dry-runs", false, "with -floor: also the dry runs that the sync policy requires of a first apply, one before each object's apply and one after (the reconcile that the observer's first health data starts)")
	flag.IntVar(&cfg.perNamespace, "per-namespace", 1000, "Releases per namespace: the i-th Release goes to bench-e2e when i < this, else to bench-e2e-<i / this>; the default keeps each namespace's Deployments, Pods and Services within Kubernetes' per-namespace scalability thresholds (2,000, 3,000 and 5,000), beyond which kube-controller-manager's cost per object grows with the namespace; 0: all in bench-e2e")
	flag.BoolVar(&cfg.alerts, "alerts", false, "an Alert in every namespace of the run sends the event Applied of every Release to a signed webhook served by the bench; the report adds how many notifications arrived and their delay after each Ready (bench/e2e/alerts.go), to compare with a run without")
	flag.IntVar(&cfg.memoryLimit, "memory-limit", 0, "MiB: run the convoy controller and observer with GOMEMLIMIT=<n>MiB, as the chart and deploy/ do for a container whose resources.limits.memory is <n>Mi (GOMEMLIMIT from resourceFieldRef); 0: none, the default (no limit)")
	flag.Parse()
	cfg.floorDryRuns = cfg.floorDryRuns || cfg.floorDesign
	cfg.ns = benchenv.PositiveInts("n", n)
	bound := time.Duration(len(cfg.ns))*(cfg.timeout+cfg.steady+10*time.Minute) + 5*time.Minute
	benchenv.Exit("e2e", bound, cfg.run)
}

func (cfg *config) run(ctx context.Context) error {
	bin, cleanup, err := benchenv.ConvoyBinary(ctx, cfg.convoyBin, "e2e")
	if err != nil {
		return err
	}
	defer cleanup()
	var results []*result
	defer func() { printSummary(os.Stdout, results) }()
	for _, n := range cfg.ns {
		r, err := cfg.runOne(ctx, bin, n)
		if r != nil {
			results = append(results, r)
			r.print(os.Stdout)
		}
		if err != nil {
			return fmt.Errorf("with %d Releases: %w", n, err)
		}
	}
	return nil
}
