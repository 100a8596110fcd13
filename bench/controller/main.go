// Command controller benchmarks convoy controller: N
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
	"flag"
	"time"

	"kumodo.io/convoy/bench/internal/benchenv"
)

type config struct {
	benchenv.Flags
}

func main() {
	cfg := config{Flags: benchenv.Flags{
		Timeout: 10 * time.Minute,
		Steady:  60 * time.Second,
		Nodes:   1,
	}}
	cfg.Register(flag.CommandLine, "100,1000", benchenv.FlagHelp{
		Timeout:           "upper bound of the wait for every Release to be Applied, per N",
		Steady:            "the steady window after every Release is Applied, in which writes are counted",
		Resync:            "convoy controller --resync (the steady window should hold at least one)",
		Concurrency:       "convoy controller --concurrency",
		CreateConcurrency: "concurrent creates of the Releases",
		Nodes:             "simulated nodes",
	})
	flag.Parse()
	benchenv.Bench[result]{
		Name:      "controller",
		Flags:     &cfg.Flags,
		Namespace: namespace,
		Slack:     8 * time.Minute, // start-up
		Measure:   cfg.runOne,
		Print:     (*result).print,
		Summary:   cfg.printSummary,
	}.Main()
}

// command is the command line that reproduces this run.
func command() string { return benchenv.Command("controller") }
