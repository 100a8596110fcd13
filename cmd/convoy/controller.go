package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"kumodo.io/convoy/internal/controller"
	"kumodo.io/convoy/internal/render"
)

// controllerFlags are the flags of convoy controller.
type controllerFlags struct {
	kubeconfig              string
	resync                  time.Duration
	metricsBindAddress      string
	healthProbeBindAddress  string
	leaderElect             bool
	leaderElectionNamespace string
	shard                   string
	chartCacheDir           string
	concurrency             int
	kubeAPIQPS              float32
	kubeAPIBurst            int
}

func newControllerCommand() *cobra.Command {
	f := controllerFlags{
		resync:                  controller.DefaultResync,
		metricsBindAddress:      ":8080",
		healthProbeBindAddress:  ":8081",
		leaderElectionNamespace: "convoy-system",
		chartCacheDir:           filepath.Join(os.TempDir(), "convoy-charts"),
		concurrency:             4,
		// client-go's default (5 requests/s) capped the controller at 1.7
		// Releases/s (bench/controller); Flux's controllers default to 50/300.
		kubeAPIQPS:   50,
		kubeAPIBurst: 300,
	}
	cmd := &cobra.Command{
		Use:   "controller",
		Short: "Run the release controller: render, apply and prune Releases under their sync policy",
		Long: `controller reconciles the Releases of the convoy API (served by convoy apiserver
through the host cluster's aggregation layer): it renders each Release's Helm chart,
applies the render to the target cluster as the sync policy says, prunes what a new
render dropped, and reports in the Release's status.

A Release is reconciled when it is created, when its spec (generation) changes, when
its convoy.kumodo.io/sync-requested-at annotation changes (/sync and the /pin,
/mutations and /lifecycle subresources write it), when the observer writes new health
data to its ReleaseInventory, when a Release of a lower cluster wave on the same
Cluster changes its Applied or Healthy status, at each informer resync (--resync) and
when a requeue that the sync policy schedules arrives.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return runController(ctx, f)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&f.kubeconfig, "kubeconfig", f.kubeconfig,
		"kubeconfig of the host cluster; empty: $KUBECONFIG, else the in-cluster configuration")
	fs.DurationVar(&f.resync, "resync", f.resync,
		"informer resync period: every Release is reconciled at least this often")
	fs.StringVar(&f.metricsBindAddress, "metrics-bind-address", f.metricsBindAddress,
		"address of the Prometheus /metrics endpoint; 0 disables it")
	fs.StringVar(&f.healthProbeBindAddress, "health-probe-bind-address", f.healthProbeBindAddress,
		"address of the /healthz and /readyz endpoints; 0 disables them")
	fs.BoolVar(&f.leaderElect, "leader-elect", f.leaderElect,
		"elect a leader, so that only one replica (per shard) reconciles")
	fs.StringVar(&f.leaderElectionNamespace, "leader-election-namespace", f.leaderElectionNamespace,
		"namespace of the leader election's Lease")
	fs.Float32Var(&f.kubeAPIQPS, "kube-api-qps", f.kubeAPIQPS,
		"requests per second to the API servers (client-side rate limit)")
	fs.IntVar(&f.kubeAPIBurst, "kube-api-burst", f.kubeAPIBurst,
		"burst of requests to the API servers above --kube-api-qps")
	fs.StringVar(&f.shard, "shard", f.shard,
		"reconcile only the Releases labelled convoy.kumodo.io/shard=<shard>; empty: every Release")
	fs.StringVar(&f.chartCacheDir, "chart-cache-dir", f.chartCacheDir,
		"folder of the chart archive cache")
	fs.IntVar(&f.concurrency, "concurrency", f.concurrency,
		"number of Releases reconciled at the same time")
	return cmd
}

func runController(ctx context.Context, f controllerFlags) error {
	ctrllog.SetLogger(klog.NewKlogr())
	cfg, err := hostConfig(f.kubeconfig)
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = f.kubeAPIQPS, f.kubeAPIBurst
	mgr, err := controller.NewManager(cfg, controller.ManagerOptions{
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
	renderer, err := render.New(render.Options{CacheDir: f.chartCacheDir})
	if err != nil {
		return err
	}
	if _, err := controller.Setup(ctx, mgr, controller.Options{Renderer: renderer, Concurrency: f.concurrency}); err != nil {
		return err
	}
	return mgr.Start(ctx)
}

// hostConfig is the configuration of the host cluster: --kubeconfig, else
// $KUBECONFIG and the default kubeconfig, else the in-cluster configuration.
func hostConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig == "" && os.Getenv("KUBERNETES_SERVICE_HOST") != "" && os.Getenv(clientcmd.RecommendedConfigPathEnvVar) == "" {
		return rest.InClusterConfig()
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("load the kubeconfig: %w", err)
	}
	return cfg, nil
}
