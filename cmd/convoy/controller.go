package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/spf13/cobra"
	"k8s.io/klog/v2"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"kumodo.io/convoy/internal/controller"
	"kumodo.io/convoy/internal/receiver"
	"kumodo.io/convoy/internal/source"
	"kumodo.io/convoy/internal/verify"
	"kumodo.io/convoy/internal/wiring"
)

// controllerFlags are the flags of convoy controller.
type controllerFlags struct {
	hostFlags
	chartCacheDir string
	concurrency   int
	// defaultServiceAccount is --default-service-account (lockdown).
	defaultServiceAccount string
	// gitCacheBytes bounds the Git commits cached on disk; allowGitFileURLs accepts
	// file:// in spec.chart.git.url.
	gitCacheBytes    int64
	allowGitFileURLs bool
	// receiverBindAddress serves Receivers (webhooks in); empty: no receiver server.
	receiverBindAddress string
	// requireVerifiedCharts refuses Releases without chart verification.
	requireVerifiedCharts bool
	// sigstoreTrustedRoot is the trusted_root.json keyless cosign signatures are
	// checked against.
	sigstoreTrustedRoot string
}

func newControllerCommand() *cobra.Command {
	f := controllerFlags{
		hostFlags:     newHostFlags(controller.DefaultResync, ":8080", ":8081"),
		chartCacheDir: filepath.Join(os.TempDir(), "convoy-charts"),
		concurrency:   defaultControllerConcurrency,
		gitCacheBytes: source.DefaultGitCacheBytes,
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
Cluster changes its Applied or Healthy status, when a Receiver that selects it is
called (--receiver-bind-address; its chart source is read again at once), at each
informer resync (--resync) and when a requeue that the sync policy schedules arrives.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return runController(ctx, f)
		},
	}
	fs := cmd.Flags()
	f.bind(fs, hostFlagHelp{
		resync:      "informer resync period: every Release is reconciled at least this often",
		leaderElect: "elect a leader, so that only one replica (per shard) reconciles",
		shard:       "reconcile only the Releases labelled convoy.kumodo.io/shard=<shard>; empty: every Release",
	})
	fs.StringVar(&f.chartCacheDir, "chart-cache-dir", f.chartCacheDir,
		"folder of the chart archive cache (and of the Git commits of charts from Git, in git/)")
	fs.Int64Var(&f.gitCacheBytes, "git-cache-max-bytes", f.gitCacheBytes,
		"bound of the Git commits kept in the chart cache folder: beyond it, the least recently used go")
	fs.BoolVar(&f.allowGitFileURLs, "allow-git-file-urls", f.allowGitFileURLs,
		"read charts from file:// Git repositories on the controller's disk (spec.chart.git.url); convoy apiserver needs the same flag")
	bindDefaultServiceAccount(fs, &f.defaultServiceAccount)
	fs.BoolVar(&f.requireVerifiedCharts, "require-verified-charts", f.requireVerifiedCharts,
		"refuse to render and apply a Release whose chart is not verified: without spec.chart.verify (spec.chart.git.verify for a chart from Git) "+
			"it is not Applied (VerificationFailed); docs/verified-charts.md")
	fs.StringVar(&f.sigstoreTrustedRoot, "sigstore-trusted-root", f.sigstoreTrustedRoot,
		"path of the Sigstore trusted root (trusted_root.json: Fulcio CAs, Rekor logs, timestamp authorities) that keyless cosign "+
			"signatures (spec.chart.verify.keyless) are checked against; empty: keyless verification fails (VerificationFailed, Misconfigured)")
	fs.IntVar(&f.concurrency, "concurrency", f.concurrency,
		"number of Releases reconciled at the same time")
	fs.StringVar(&f.receiverBindAddress, "receiver-bind-address", f.receiverBindAddress,
		"address of the receiver server, which answers the calls of Git hosts and registries at each Receiver's status.webhookPath "+
			"(e.g. :8880); empty: none, and Receivers are not Ready (ReceiverServerDisabled)")
	return cmd
}

func runController(ctx context.Context, f controllerFlags) error {
	setDefaultGCPercent()
	if err := f.logs.apply("controller"); err != nil {
		return err
	}
	ctrllog.SetLogger(klog.NewKlogr())
	cfg, err := f.restConfig()
	if err != nil {
		return err
	}
	mgr, err := f.startManager(ctx, "convoy controller", cfg, controller.NewManager)
	if err != nil {
		return err
	}
	fetcher, err := source.New(source.Options{CacheDir: f.chartCacheDir, GitCacheBytes: f.gitCacheBytes,
		AllowGitFileURLs: f.allowGitFileURLs})
	if err != nil {
		return err
	}
	var sigstoreRoot root.TrustedMaterial
	if f.sigstoreTrustedRoot != "" {
		if sigstoreRoot, err = verify.LoadTrustedRoot(f.sigstoreTrustedRoot); err != nil {
			return fmt.Errorf("--sigstore-trusted-root: %w", err)
		}
	}
	if _, err := wiring.Setup(ctx, mgr, wiring.Options{
		Release: controller.Options{Source: fetcher, Concurrency: f.concurrency,
			DefaultServiceAccount: f.defaultServiceAccount, RequireVerifiedCharts: f.requireVerifiedCharts,
			SigstoreTrustedRoot: sigstoreRoot},
		Receiver: receiver.Options{BindAddress: f.receiverBindAddress},
	}); err != nil {
		return err
	}
	return mgr.Start(ctx)
}
