// Command fleet benchmarks convoy across a fleet of target clusters: a
// host control plane with convoy apiserver, convoy
// controller and convoy observer as processes with their default flags (./cmd/convoy
// built once, or -convoy=<binary>), and -clusters target control planes on the host's
// etcd (localcluster.StartClusters, with kwok nodes so that workloads become ready), each
// registered as a Cluster whose kubeconfig points at a testenv.Link in front of it (the
// Link counts the connections).
//
// In one run, with the same number of Releases (-releases, of the podinfo-shaped chart
// of testdata/, automatic):
//
//  1. single: every Release on one target cluster, create → all Ready;
//  2. fleet: the Releases spread over every cluster (after the single run's are
//     deleted), create → all Ready;
//  3. revision: a new revision of every fleet Release (new values) → all Ready, the
//     canary cluster's first, then the rest (two stages);
//  4. sets (-sets): releases/clusters ReleaseSets, each a Release on every cluster in
//     two stages (ring=canary, then the rest), create → every set Ready, then a new
//     revision of every set → every set Ready again.
//
// It reports each time, the RSS and goroutines of the controller and the observer with
// one cluster in use and with all of them (so per added cluster), the connections per
// cluster, and the requests per Release per target cluster (the controller's and the
// observer's rest_client_requests_total by host: each cluster has its Link's address).
// Goals: the fleet within 1.5× the single cluster's time; RSS per added cluster under
// 5 MiB in each process.
//
//	go run ./bench/fleet -clusters=10 -releases=100
//	make bench-fleet BENCH_FLAGS='-clusters=10 -releases=20'
package main

import (
	"flag"
	"time"

	"kumodo.io/convoy/bench/internal/benchenv"
)

type config struct {
	clusters, releases int
	timeout            time.Duration
	settle             time.Duration
	sets               bool
	convoyBin          string
	stateDir           string
}

func main() {
	var cfg config
	flag.IntVar(&cfg.clusters, "clusters", 10, "target clusters of the fleet (≈ 530 MiB each: docs/notes/local-fleet.md)")
	flag.IntVar(&cfg.releases, "releases", 100, "Releases of each run (single cluster, fleet)")
	flag.DurationVar(&cfg.timeout, "timeout", 10*time.Minute, "upper bound of each wait for every Release to be Ready")
	flag.DurationVar(&cfg.settle, "settle", 15*time.Second, "idle window before each memory and goroutine reading")
	flag.BoolVar(&cfg.sets, "sets", true, "also run ReleaseSets: releases/clusters sets over the fleet, canary stage then the rest, create → all Ready and a new revision → all Ready")
	flag.StringVar(&cfg.convoyBin, "convoy", "", "use this convoy binary instead of building ./cmd/convoy")
	flag.StringVar(&cfg.stateDir, "state-dir", "", "keep the control planes' state and logs here (default: temporary folders, removed)")
	flag.Parse()
	if cfg.clusters < 2 || cfg.releases < 1 {
		flag.Usage()
		return
	}
	bound := 3*cfg.timeout + time.Duration(cfg.clusters)*time.Minute + 10*time.Minute
	benchenv.Exit("fleet", bound, cfg.run)
}

// command is the command line that reproduces this run.
func command() string { return benchenv.Command("fleet") }
