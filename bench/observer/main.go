// Command observer benchmarks convoy observer: N Releases of
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
	"flag"
	"time"

	"kumodo.io/convoy/bench/internal/benchenv"
)

type config struct {
	benchenv.Flags
	replicas int
}

func main() {
	cfg := config{Flags: benchenv.Flags{
		Timeout: 15 * time.Minute,
		Steady:  70 * time.Second,
		Nodes:   2,
	}}
	cfg.Register(flag.CommandLine, "1000", benchenv.FlagHelp{
		Timeout:           "upper bound of the wait for every Release to be Ready, per N",
		Steady:            "the steady window after every Release is Ready, in which writes are counted",
		Resync:            "convoy observer --resync and convoy controller --resync (the steady window should hold at least two)",
		Concurrency:       "convoy observer --concurrency and convoy controller --concurrency",
		CreateConcurrency: "concurrent clients creating the Releases and sending the person's /sync",
		Nodes:             "simulated nodes (1,000 Pods each at most)",
	})
	flag.IntVar(&cfg.replicas, "replicas", 1, "replicas of each wave-0 Deployment (0: Available without Pods)")
	flag.Parse()
	benchenv.Bench[result]{
		Name:      "observer",
		Flags:     &cfg.Flags,
		Namespace: namespace,
		Slack:     10 * time.Minute, // start-up and the quiet wait
		Measure:   cfg.runOne,
		Print:     (*result).print,
		Summary:   cfg.printSummary,
	}.Main()
}

// command is the command line that reproduces this run.
func command() string { return benchenv.Command("observer") }
