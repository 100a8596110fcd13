// Command storage measures what convoy keeps in its etcd, for sizing:
// N Releases of a chart shaped like real ones (testdata/webapp: 20 objects — two
// Deployments at 0 replicas, their ServiceAccounts, Roles and RoleBindings, three
// ConfigMaps, two Secrets, two Services, an Ingress, a PodDisruptionBudget, two
// NetworkPolicies and a suspended CronJob; automatic mode) are created and brought to
// Ready by convoy controller and convoy observer running with their default flags
// (only the kubeconfig, the chart cache and loopback probe and metrics addresses are
// given, as in bench/e2e); then every Release is upgraded once (a new image tag: a
// new render of the same 20 objects) and brought to Ready again. -chart and
// -upgrade-values measure another chart put in testdata.
//
// convoy apiserver gets an etcd of its own, started with the chart's flags
// (--quota-backend-bytes and --auto-compaction-*, -quota and -auto-compaction), so
// that what etcd holds is convoy's alone. At each phase the bench reads, through the
// etcd client:
//
//   - etcd's Status: dbSize (the file) and dbSizeInUse (the pages that hold live
//     revisions), and the revision;
//   - every key under convoy's prefix, grouped by resource (releases, renders,
//     releaseinventories, events, ...): count, total, average and largest value;
//   - the leases etcd holds (events are stored with a TTL);
//
// the phases being: every Release Ready; then compacted at the current revision and
// defragmented; every Release Ready after the upgrade; compacted and defragmented
// again. With -manual (the lighter run for large N) the Releases are in manual mode:
// convoy controller renders each and stores its Render, applies nothing, and the
// bench waits for the render instead of Ready. Each N runs on a fresh environment (bench/internal/benchenv); every loop is
// bounded by a count and a duration; everything stops by itself.
//
//	go run ./bench/storage -releases=1000,10000
//	make bench-storage BENCH_FLAGS='-releases=1000'
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"kumodo.io/convoy/bench/internal/benchenv"
)

// The chart's etcd flags (charts/convoy values.yaml, etcd.quotaBackendBytes and
// etcd.autoCompaction): the defaults of -quota and -auto-compaction.
const (
	chartQuota          = 4 * 1024 * 1024 * 1024
	chartAutoCompaction = "periodic/1h"
)

type config struct {
	releases          []int
	timeout           time.Duration
	createConcurrency int
	nodes             int
	perNamespace      int
	upgrade           bool
	manual            bool
	chart             string // -chart: name:version in testdata
	upgradeValues     string // -upgrade-values: the upgrade's spec.values, merged
	quota             int64
	autoCompaction    string
	convoyBin         string
	stateDir          string
}

func main() {
	cfg := config{}
	var releases string
	flag.StringVar(&releases, "releases", "1000", "comma-separated numbers of Releases; each runs on a fresh environment")
	flag.DurationVar(&cfg.timeout, "timeout", 30*time.Minute, "upper bound of each wait for every Release to be Ready (after the creates, after the upgrade), per N")
	flag.IntVar(&cfg.createConcurrency, "create-concurrency", 16, "concurrent clients creating and upgrading the Releases")
	flag.IntVar(&cfg.nodes, "nodes", 1, "simulated nodes")
	flag.IntVar(&cfg.perNamespace, "per-namespace", 1000, "Releases per namespace (bench-storage, bench-storage-1, ...), as bench/e2e")
	flag.BoolVar(&cfg.upgrade, "upgrade", true, "upgrade every Release once (-upgrade-values) and measure again")
	flag.BoolVar(&cfg.manual, "manual", false, "the lighter run, for large N: the Releases in manual mode, so convoy controller renders each (and stores its Render) but applies nothing until a /sync, which the bench never sends: no objects on the target, no ReleaseInventories; the bench waits for every Release's status.render instead of Ready")
	flag.StringVar(&cfg.chart, "chart", "webapp:1.4.2", "the chart of the Releases, name:version, from bench/storage/testdata (put your own chart there to size for it)")
	flag.StringVar(&cfg.upgradeValues, "upgrade-values", `{"image":{"tag":"2.9.0"}}`, "the upgrade: JSON merged into every Release's spec.values; it must change the render")
	flag.Int64Var(&cfg.quota, "quota", chartQuota, "convoy's etcd --quota-backend-bytes")
	flag.StringVar(&cfg.autoCompaction, "auto-compaction", chartAutoCompaction, "convoy's etcd --auto-compaction-mode/--auto-compaction-retention; empty: none")
	flag.StringVar(&cfg.convoyBin, "convoy", "", "use this convoy binary instead of building ./cmd/convoy")
	flag.StringVar(&cfg.stateDir, "state-dir", "", "keep each N's control plane state and logs in <state-dir>/<N> (default: a temporary folder, removed)")
	flag.Parse()
	cfg.releases = benchenv.PositiveInts("releases", releases)
	waits := 1
	if cfg.upgrade {
		waits = 2
	}
	bound := time.Duration(len(cfg.releases))*(time.Duration(waits)*cfg.timeout+15*time.Minute) + 5*time.Minute
	benchenv.Exit("storage", bound, cfg.run)
}

func (cfg *config) run(ctx context.Context) error {
	bin, cleanup, err := benchenv.ConvoyBinary(ctx, cfg.convoyBin, "storage")
	if err != nil {
		return err
	}
	defer cleanup()
	var results []*result
	defer func() { printSummary(os.Stdout, results) }()
	for _, n := range cfg.releases {
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
