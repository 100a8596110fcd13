package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/klog/v2"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"kumodo.io/convoy/internal/observer"
	"kumodo.io/convoy/internal/observer/drift"
)

// observerFlags are the flags of convoy observer.
type observerFlags struct {
	kubeconfig              string
	resync                  time.Duration
	metricsBindAddress      string
	healthProbeBindAddress  string
	leaderElect             bool
	leaderElectionNamespace string
	shard                   string
	concurrency             int
	kubeAPIQPS              float32
	kubeAPIBurst            int
}

func newObserverCommand() *cobra.Command {
	f := observerFlags{
		resync:                  observer.DefaultResync,
		metricsBindAddress:      ":8082",
		healthProbeBindAddress:  ":8083",
		leaderElectionNamespace: "convoy-system",
		concurrency:             4,
		kubeAPIQPS:              50,
		kubeAPIBurst:            300,
	}
	cmd := &cobra.Command{
		Use:   "observer",
		Short: "Run the observer: assess what each Release applied, report drift, send /sync for waves, renders and hooks",
		Long: `observer watches what each Release applied (its ReleaseInventory) on the target
cluster through shared informers filtered by convoy's labels, assesses each object with
kstatus, and writes the health per object, per sync wave and per render to the
ReleaseInventory's status, only when it changed. It checks drift every
spec.syncPolicy.interval of the Release. It sends POST releases/<name>/sync when a sync
wave completes while the Release waits for it, when its assessment first covers a new
render, and when a batch of lifecycle hooks completes. It applies nothing.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return runObserver(ctx, f)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&f.kubeconfig, "kubeconfig", f.kubeconfig,
		"kubeconfig of the host cluster; empty: $KUBECONFIG, else the in-cluster configuration")
	fs.DurationVar(&f.resync, "resync", f.resync,
		"resync period of the host informers: every ReleaseInventory is assessed at least this often (no write unless something changed)")
	fs.StringVar(&f.metricsBindAddress, "metrics-bind-address", f.metricsBindAddress,
		"address of the Prometheus /metrics endpoint; 0 disables it")
	fs.StringVar(&f.healthProbeBindAddress, "health-probe-bind-address", f.healthProbeBindAddress,
		"address of the /healthz and /readyz endpoints; 0 disables them")
	fs.BoolVar(&f.leaderElect, "leader-elect", f.leaderElect,
		"elect a leader, so that only one replica (per shard) observes")
	fs.StringVar(&f.leaderElectionNamespace, "leader-election-namespace", f.leaderElectionNamespace,
		"namespace of the leader election's Lease")
	fs.Float32Var(&f.kubeAPIQPS, "kube-api-qps", f.kubeAPIQPS,
		"requests per second to the API servers (client-side rate limit)")
	fs.IntVar(&f.kubeAPIBurst, "kube-api-burst", f.kubeAPIBurst,
		"burst of requests to the API servers above --kube-api-qps")
	fs.StringVar(&f.shard, "shard", f.shard,
		"observe only the Releases labelled convoy.kumodo.io/shard=<shard>; empty: every Release")
	fs.IntVar(&f.concurrency, "concurrency", f.concurrency,
		"number of ReleaseInventories assessed at the same time")
	return cmd
}

func runObserver(ctx context.Context, f observerFlags) error {
	ctrllog.SetLogger(klog.NewKlogr())
	cfg, err := hostConfig(f.kubeconfig)
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = f.kubeAPIQPS, f.kubeAPIBurst
	mgr, err := observer.NewManager(cfg, observer.ManagerOptions{
		Resync:                  f.resync,
		Shard:                   f.shard,
		MetricsBindAddress:      f.metricsBindAddress,
		HealthProbeBindAddress:  f.healthProbeBindAddress,
		LeaderElection:          f.leaderElect,
		LeaderElectionNamespace: f.leaderElectionNamespace,
	})
	if err != nil {
		return err
	}
	// Drift checks by server-side apply dry run, every spec.syncPolicy.interval.
	if _, err := observer.Setup(mgr, observer.Options{Concurrency: f.concurrency, Drift: drift.New(drift.Options{})}); err != nil {
		return err
	}
	return mgr.Start(ctx)
}
