// Command apiserver benchmarks convoy's aggregated API server through the host
// kube-apiserver's aggregator. It measures:
//
//   - POST releases/<name>/sync at 1 and 16 concurrent clients, spread over N
//     Releases and on one Release (the contention path: conflicts are retried
//     inside the server): requests per second, p50/p99 latency;
//   - 10,000 Releases: time to create them, a full LIST, a LIST paginated by
//     limit=500, a WATCH from resourceVersion 0 until it has delivered every
//     initial event, and the RSS of convoy apiserver.
//
// It starts a local control plane (internal/localcluster: etcd and
// kube-apiserver from bin/k8s/<version>/) and convoy apiserver as a separate
// process (this program re-executed with the argument "apiserver", which runs the
// same code as `convoy apiserver`; or -convoy=<binary>), registers it with an
// APIService, and sends every request to kube-apiserver over loopback.
//
// Run from the repository (see docs/performance.md):
//
//	go run ./bench/apiserver
//	make bench-apiserver BENCH_FLAGS='-requests=500 -list-releases=2000'
//
// Every loop is bounded by a count and a duration; everything stops by itself.
package main

import (
	"context"
	"flag"
	"os"
	"time"

	"kumodo.io/convoy/bench/internal/benchenv"
)

type config struct {
	requests          int
	duration          time.Duration
	concurrency       []int
	releases          int
	warmup            int
	listReleases      int
	createConcurrency int
	pageSize          int
	repeats           int
	qps               float64
	burst             int
	convoyBin         string
	stateDir          string
	skipSync          bool
	skipList          bool
}

func main() {
	// Re-executed as the server process.
	if len(os.Args) > 1 && os.Args[1] == serveArg {
		os.Exit(serve(os.Args[2:]))
	}

	var cfg config
	var levels string
	flag.IntVar(&cfg.requests, "requests", 2000, "POST /sync requests per level (a level is one concurrency on one target set)")
	flag.DurationVar(&cfg.duration, "duration", 20*time.Second, "upper bound of the time of one /sync level")
	flag.StringVar(&levels, "concurrency", "1,16", "comma-separated numbers of concurrent clients for /sync")
	flag.IntVar(&cfg.releases, "releases", 100, "Releases the spread /sync levels send to, round robin")
	flag.IntVar(&cfg.warmup, "warmup", 200, "unmeasured /sync requests before the first level")
	flag.IntVar(&cfg.listReleases, "list-releases", 10000, "Releases created for the list and watch measurements")
	flag.IntVar(&cfg.createConcurrency, "create-concurrency", 16, "concurrent creates of the list Releases")
	flag.IntVar(&cfg.pageSize, "page-size", 500, "limit of the paginated LIST")
	flag.IntVar(&cfg.repeats, "repeats", 3, "runs of each LIST and WATCH measurement (the table shows the median and the range)")
	flag.Float64Var(&cfg.qps, "qps", 5000, "client-side QPS limit of the load generator's rest.Config")
	flag.IntVar(&cfg.burst, "burst", 10000, "client-side burst of the load generator's rest.Config")
	flag.StringVar(&cfg.convoyBin, "convoy", "", "run the apiserver subcommand of this convoy binary instead of re-executing this program")
	flag.StringVar(&cfg.stateDir, "state-dir", "", "keep the control plane's state and logs here (default: a temporary folder, removed)")
	flag.BoolVar(&cfg.skipSync, "skip-sync", false, "skip the /sync measurements")
	flag.BoolVar(&cfg.skipList, "skip-list", false, "skip the list and watch measurements")
	flag.Parse()
	cfg.concurrency = benchenv.PositiveInts("concurrency", levels)

	// At most 45 minutes; Ctrl-C stops it cleanly.
	benchenv.Exit("apiserver", 45*time.Minute, func(ctx context.Context) error { return run(ctx, cfg) })
}

// command is the command line that reproduces this run.
func command() string { return benchenv.Command("apiserver") }

func run(ctx context.Context, cfg config) error {
	env, err := startEnv(ctx, cfg)
	if err != nil {
		return err
	}
	defer env.Stop()

	rep := &report{cfg: cfg, started: time.Now(), loadBefore: benchenv.LoadAvg()}
	if !cfg.skipSync {
		if err := benchSync(ctx, env, cfg, rep); err != nil {
			return err
		}
	}
	if !cfg.skipList {
		if err := benchListWatch(ctx, env, cfg, rep); err != nil {
			return err
		}
	}
	rep.loadAfter = benchenv.LoadAvg()
	rep.final = env.Snapshot()
	rep.print(os.Stdout, env)
	return nil
}
