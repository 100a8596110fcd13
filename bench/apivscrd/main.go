// Command apivscrd benchmarks convoy's API against a CRD of the same shape served by
// kube-apiserver itself, in the same run on the same control plane. It measures:
//
//   - sequential creates, one client and one request at a time, as `kubectl create -f`
//     of a folder sends them: p50/p99 per request;
//   - creates from 16 concurrent clients;
//   - get, one at a time;
//   - list of -list objects in one namespace and across all namespaces;
//   - a watch's event latency: from the start of a write to the client's event;
//   - an update of status (a merge patch of the status subresource);
//   - one `kubectl create -f <folder>` of -kubectl objects (the measurement);
//   - /sync (POST releases/<name>/sync) against the CRD's closest equivalent, a merge
//     patch of an annotation.
//
// Both sides are reached through kube-apiserver as the same non-admin user (a client
// certificate, RBAC rights on both groups' releases), with the dynamic client (JSON,
// as kubectl sends custom resources). convoy apiserver runs with the flags convoy dev
// gives it (bench/internal/benchenv). A third column, "convoy direct", sends convoy's
// requests straight to convoy apiserver's port: the difference to "convoy" is the
// aggregator's proxy.
//
// With -profile-dir, CPU profiles of kube-apiserver and convoy apiserver are taken
// during -profile seconds of sequential creates on each side.
//
//	go run ./bench/apivscrd
//	make bench-api-vs-crd BENCH_FLAGS='-list=10000'
package main

import (
	"context"
	"flag"
	"os"
	"time"

	"kumodo.io/convoy/bench/internal/benchenv"
)

type config struct {
	seq        int
	concurrent int
	clients    int
	list       int
	repeats    int
	watches    int
	profileDir string
	profile    time.Duration
	convoyBin  string
	stateDir   string
	admin      bool
	kubectl    int
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == benchenv.APIServerCommand {
		os.Exit(serve(os.Args[2:]))
	}
	var cfg config
	flag.IntVar(&cfg.seq, "n", 500, "sequential creates (and gets, status updates, /syncs) per side")
	flag.IntVar(&cfg.concurrent, "concurrent", 1000, "creates from -clients concurrent clients per side (the objects of the one-namespace list)")
	flag.IntVar(&cfg.clients, "clients", 16, "concurrent clients of the concurrent creates")
	flag.IntVar(&cfg.list, "list", 1000, "objects in the listed namespace (at least -concurrent; 10000 for the large list)")
	flag.IntVar(&cfg.repeats, "repeats", 5, "runs of each list (the table shows the median)")
	flag.IntVar(&cfg.watches, "watch", 200, "writes whose watch event latency is measured per side")
	flag.StringVar(&cfg.profileDir, "profile-dir", "", "write CPU profiles of kube-apiserver and convoy apiserver during sequential creates here")
	flag.DurationVar(&cfg.profile, "profile", 15*time.Second, "length of each CPU profile")
	flag.StringVar(&cfg.convoyBin, "convoy", "", "run the apiserver subcommand of this convoy binary instead of re-executing this program")
	flag.StringVar(&cfg.stateDir, "state-dir", "", "keep the control plane's state and logs here (default: a temporary folder, removed)")
	flag.BoolVar(&cfg.admin, "admin", false, "send the requests as the cluster's admin (system:masters) instead of a non-admin user")
	flag.IntVar(&cfg.kubectl, "kubectl", 300, "objects created per side by one `kubectl create -f <folder>` (0: none)")
	flag.Parse()
	if cfg.list < cfg.concurrent {
		cfg.list = cfg.concurrent
	}
	benchenv.Exit("apivscrd", 45*time.Minute, func(ctx context.Context) error { return run(ctx, cfg) })
}
