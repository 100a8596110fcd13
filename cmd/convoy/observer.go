package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"k8s.io/klog/v2"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"kumodo.io/convoy/internal/observer"
	"kumodo.io/convoy/internal/observer/drift"
)

// observerFlags are the flags of convoy observer.
type observerFlags struct {
	hostFlags
	concurrency int
	// defaultServiceAccount is --default-service-account (lockdown).
	defaultServiceAccount string
}

func newObserverCommand() *cobra.Command {
	f := observerFlags{
		hostFlags:   newHostFlags(observer.DefaultResync, ":8082", ":8083"),
		concurrency: defaultObserverConcurrency,
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
	f.bind(fs, hostFlagHelp{
		resync:      "resync period of the host informers: every ReleaseInventory is assessed at least this often (no write unless something changed)",
		leaderElect: "elect a leader, so that only one replica (per shard) observes",
		shard:       "observe only the Releases labelled convoy.kumodo.io/shard=<shard>; empty: every Release",
	})
	bindDefaultServiceAccount(fs, &f.defaultServiceAccount)
	fs.IntVar(&f.concurrency, "concurrency", f.concurrency,
		"number of ReleaseInventories assessed at the same time")
	return cmd
}

func runObserver(ctx context.Context, f observerFlags) error {
	setDefaultGCPercent()
	if err := f.logs.apply("observer"); err != nil {
		return err
	}
	ctrllog.SetLogger(klog.NewKlogr())
	cfg, err := f.restConfig()
	if err != nil {
		return err
	}
	mgr, err := f.startManager(ctx, "convoy observer", cfg, observer.NewManager)
	if err != nil {
		return err
	}
	// Drift checks by server-side apply dry run, every spec.syncPolicy.interval.
	if _, err := observer.Setup(mgr, observer.Options{Concurrency: f.concurrency, Drift: drift.New(drift.Options{}),
		DefaultServiceAccount: f.defaultServiceAccount}); err != nil {
		return err
	}
	return mgr.Start(ctx)
}
