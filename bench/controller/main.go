// Command controller benchmarks convoy controller (issue 4, "Performance"): N
// Releases of one podinfo-shaped chart (testdata/podinfo: a Deployment at 0
// replicas, a ServiceAccount, a Service and an Ingress) in automatic mode, no
// interval, on a local control plane with simulated (kwok) nodes. For each N it
// reports the time from the first create to every Release Applied=True, the
// controller's RSS and CPU, the API requests per Release (the controller's own
// client metrics, kube-apiserver's and convoy apiserver's apiserver_request_total),
// and the writes of a steady window after everything is Applied (watch events on
// Releases and ReleaseInventories; goal 0), which spans at least one informer
// resync (-resync).
//
// Each N runs on a fresh environment: internal/localcluster with workloads,
// convoy apiserver and convoy controller as separate processes (./cmd/convoy built
// once into a temporary folder, or -convoy=<binary>), and testdata/ served as a
// Helm repository by internal/render/chartrepo on a free loopback port. The
// controller gets the admin kubeconfig. Every loop is bounded by a count and a
// duration; everything stops by itself.
//
//	go run ./bench/controller -releases=100,1000
//	make bench-controller BENCH_FLAGS='-releases=100'
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
	convoyBin         string
	stateDir          string
}

func main() {
	var cfg config
	var releases string
	flag.StringVar(&releases, "releases", "100,1000", "comma-separated numbers of Releases; each runs on a fresh environment")
	flag.DurationVar(&cfg.timeout, "timeout", 10*time.Minute, "upper bound of the wait for every Release to be Applied, per N")
	flag.DurationVar(&cfg.steady, "steady", 60*time.Second, "the steady window after every Release is Applied, in which writes are counted")
	flag.DurationVar(&cfg.resync, "resync", 30*time.Second, "convoy controller --resync (the steady window should hold at least one)")
	flag.IntVar(&cfg.concurrency, "concurrency", 4, "convoy controller --concurrency")
	flag.IntVar(&cfg.createConcurrency, "create-concurrency", 16, "concurrent creates of the Releases")
	flag.IntVar(&cfg.nodes, "nodes", 1, "simulated nodes")
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
	// Bounded: start-up, the wait and the steady window of every N, plus slack.
	bound := time.Duration(len(cfg.releases))*(cfg.timeout+cfg.steady+8*time.Minute) + 5*time.Minute
	ctx, cancel := context.WithTimeout(ctx, bound)
	err := run(ctx, cfg)
	cancel()
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench-controller:", err)
		os.Exit(1)
	}
}

// command is the command line that reproduces this run.
func command() string {
	args := []string{"go run ./bench/controller"}
	flag.Visit(func(f *flag.Flag) { args = append(args, fmt.Sprintf("-%s=%s", f.Name, f.Value)) })
	return strings.Join(args, " ")
}

func run(ctx context.Context, cfg config) error {
	bin := cfg.convoyBin
	if bin == "" {
		dir, err := os.MkdirTemp("", "convoy-bench-controller-")
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
