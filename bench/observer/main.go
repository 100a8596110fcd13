// Command observer benchmarks convoy observer (issue 5, "Performance"): N Releases of
// a two-wave chart (testdata/waves: wave 0 a Deployment with -replicas Pods on
// simulated kwok nodes, wave 1 a ConfigMap) in manual mode, each started by one
// person's POST …/sync, on a local control plane. convoy controller and convoy
// observer run as separate processes; the observer's /syncs carry every Release
// from wave 0 to wave 1 without another request from the person. For each N it
// reports:
//
//   - the observer's RSS (steady and peak, /proc/<pid>/status) and CPU seconds
//     (/proc/<pid>/stat) while it assesses (first create → every Release Ready) and
//     in the steady window;
//   - per Release, the time from its wave-0 Deployment becoming healthy (first seen
//     kstatus Current on the bench's watch of Deployments) to the observer's /sync
//     (first change of convoy.kumodo.io/sync-requested-at seen on the bench's watch
//     of Releases after that), p50/p99/max; the same from the later of "healthy" and
//     "Release WaitingForSyncWave" (the observer's own reaction: its trigger needs
//     both); and from the person's /sync to Ready (Applied and Healthy);
//   - the writes of a steady window after every Release is Ready (default 70 s, at
//     least two observer resyncs at --resync=30s): convoy apiserver's
//     apiserver_request_total writes, the observer's own
//     convoy_observer_status_writes_total and convoy_observer_sync_requests_total,
//     and watch events on Releases and ReleaseInventories (goal 0).
//
// Each N runs on a fresh environment (bench/internal/benchenv): internal/localcluster
// with workloads, convoy apiserver, convoy controller (admin kubeconfig) and convoy
// observer (its own client certificate, user convoy-observer in system:masters: an
// admin, not its least-privilege RBAC) from ./cmd/convoy built once (or
// -convoy=<binary>), and testdata/ served as a Helm repository. Every loop is bounded
// by a count and a duration; everything stops by itself.
//
//	go run ./bench/observer -releases=100
//	make bench-observer BENCH_FLAGS='-releases=100'
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"kumodo.io/convoy/bench/internal/benchenv"
)

type config struct {
	releases          []int
	timeout           time.Duration
	steady            time.Duration
	resync            time.Duration
	concurrency       int
	createConcurrency int
	nodes             int
	replicas          int
	convoyBin         string
	stateDir          string
}

func main() {
	var cfg config
	var releases string
	flag.StringVar(&releases, "releases", "1000", "comma-separated numbers of Releases; each runs on a fresh environment")
	flag.DurationVar(&cfg.timeout, "timeout", 15*time.Minute, "upper bound of the wait for every Release to be Ready, per N")
	flag.DurationVar(&cfg.steady, "steady", 70*time.Second, "the steady window after every Release is Ready, in which writes are counted")
	flag.DurationVar(&cfg.resync, "resync", 30*time.Second, "convoy observer --resync and convoy controller --resync (the steady window should hold at least two)")
	flag.IntVar(&cfg.concurrency, "concurrency", 4, "convoy observer --concurrency and convoy controller --concurrency")
	flag.IntVar(&cfg.createConcurrency, "create-concurrency", 16, "concurrent clients creating the Releases and sending the person's /sync")
	flag.IntVar(&cfg.nodes, "nodes", 2, "simulated nodes (1,000 Pods each at most)")
	flag.IntVar(&cfg.replicas, "replicas", 1, "replicas of each wave-0 Deployment (0: Available without Pods)")
	flag.StringVar(&cfg.convoyBin, "convoy", "", "use this convoy binary instead of building ./cmd/convoy")
	flag.StringVar(&cfg.stateDir, "state-dir", "", "keep each N's control plane state and logs in <state-dir>/<N> (default: a temporary folder, removed)")
	flag.Parse()
	for _, s := range strings.Split(releases, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			fmt.Fprintf(os.Stderr, "-releases: %q is not a positive number\n", s)
			os.Exit(2)
		}
		cfg.releases = append(cfg.releases, n)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// Bounded: start-up, the wait, the quiet wait and the steady window of every N, plus slack.
	bound := time.Duration(len(cfg.releases))*(cfg.timeout+cfg.steady+10*time.Minute) + 5*time.Minute
	ctx, cancel := context.WithTimeout(ctx, bound)
	err := run(ctx, cfg)
	cancel()
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench-observer:", err)
		os.Exit(1)
	}
}

// command is the command line that reproduces this run.
func command() string {
	args := []string{"go run ./bench/observer"}
	flag.Visit(func(f *flag.Flag) { args = append(args, fmt.Sprintf("-%s=%s", f.Name, f.Value)) })
	return strings.Join(args, " ")
}

func run(ctx context.Context, cfg config) error {
	bin := cfg.convoyBin
	if bin == "" {
		dir, err := os.MkdirTemp("", "convoy-bench-observer-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		if bin, err = benchenv.BuildConvoy(ctx, dir); err != nil {
			return err
		}
	}
	var results []*result
	for _, n := range cfg.releases {
		r, err := runOne(ctx, cfg, bin, n)
		if r != nil {
			results = append(results, r)
			r.print(os.Stdout)
		}
		if err != nil {
			printSummary(os.Stdout, cfg, results)
			return fmt.Errorf("with %d Releases: %w", n, err)
		}
	}
	printSummary(os.Stdout, cfg, results)
	return nil
}
