package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"kumodo.io/convoy/internal/hostmanager"
	"kumodo.io/convoy/internal/startup"
)

// hostFlags are the flags that convoy controller and convoy observer share: the host
// cluster, the client's rate limit and the manager's options.
type hostFlags struct {
	kubeconfig   string
	kubeAPIQPS   float32
	kubeAPIBurst int
	// kubeAPICompression asks the host API servers to gzip their answers
	// (defaultKubeAPICompression).
	kubeAPICompression bool
	manager            hostmanager.Options
	logs               logFlags
	// startupTimeout bounds the wait at start for the host (--startup-timeout).
	startupTimeout time.Duration
}

// Defaults of the flags that size the work of convoy controller and convoy observer
// (docs/performance.md, "Defaults"; docs/decisions/0103-no-client-rate-limit.md,
// docs/decisions/0104-controller-concurrency.md). convoy dev, the chart and
// deploy/ pass none of these flags, so these are what every user runs.
const (
	// defaultKubeAPIQPS is no client-side rate limit: the requests in flight are
	// bounded by the workers (each sends one request at a time), and kube-apiserver's
	// API Priority and Fairness queues or rejects (429, retried by client-go) what it
	// cannot take. A limit per kind (controller-runtime makes one client, hence one
	// token bucket, per GroupVersionKind) of 50/s would throttle the resync of 10,000
	// Releases (a GET and a dry run per object every 2 minutes: ~167 requests/s per
	// kind).
	defaultKubeAPIQPS = -1
	// defaultKubeAPIBurst only matters with a positive --kube-api-qps.
	defaultKubeAPIBurst = 300
	// defaultKubeAPICompression is no gzip of the host API servers' answers. client-go
	// asks for it unless told not to, and the API servers then gzip every watch that
	// began as a streaming list (client-go's informers, since 1.35) at each event they
	// send: 5 % of the observer's CPU and ~1 % of the controller's went to unzipping
	// them in the first minute of 1,000 creates (docs/notes/performance-log.md, ninth round), to
	// save bandwidth between a Pod and its own cluster's API server, which is not what
	// is scarce there (kubeconfig's disable-compression exists for the same case).
	// Targets reached through a Cluster's kubeconfig keep what that kubeconfig says.
	defaultKubeAPICompression = false
	// defaultControllerConcurrency is the controller's workers. A reconcile is a chain
	// of serial round trips (render, dry run, apply, inventory, status: ~0.3 s under
	// load, 37 ms for a resync that changes nothing), so the throughput is workers /
	// latency: 16 workers resync 10,000 Releases in 2 minutes with room to spare, and
	// take the first applies and the health updates after them together.
	defaultControllerConcurrency = 16
	// defaultObserverConcurrency is the observer's workers: an assessment reads its
	// caches (about a millisecond) and writes only a change. Its queue waited ~25 ms on
	// average at 1,000 creates with 4; 8 workers wrote about one more ReleaseInventory
	// status per Release (4.1 instead of 3.2: events coalesce less in a shorter queue).
	defaultObserverConcurrency = 4
)

// newHostFlags returns the shared defaults: the Lease in convoy-system and no
// client-side rate limit (defaultKubeAPIQPS).
func newHostFlags(resync time.Duration, metricsAddr, probeAddr string) hostFlags {
	return hostFlags{
		kubeAPIQPS:         defaultKubeAPIQPS,
		kubeAPIBurst:       defaultKubeAPIBurst,
		kubeAPICompression: defaultKubeAPICompression,
		startupTimeout:     startup.DefaultTimeout,
		manager: hostmanager.Options{
			Resync:                  resync,
			MetricsBindAddress:      metricsAddr,
			HealthProbeBindAddress:  probeAddr,
			LeaderElectionNamespace: "convoy-system",
		},
	}
}

// hostFlagHelp is the help that differs between the processes.
type hostFlagHelp struct {
	resync, leaderElect, shard string
}

func (f *hostFlags) bind(fs *pflag.FlagSet, help hostFlagHelp) {
	f.logs.bind(fs)
	fs.StringVar(&f.kubeconfig, "kubeconfig", f.kubeconfig,
		"kubeconfig of the host cluster; empty: $KUBECONFIG, else the in-cluster configuration")
	fs.DurationVar(&f.manager.Resync, "resync", f.manager.Resync, help.resync)
	fs.StringVar(&f.manager.MetricsBindAddress, "metrics-bind-address", f.manager.MetricsBindAddress,
		"address of the Prometheus /metrics endpoint; 0 disables it")
	fs.StringVar(&f.manager.HealthProbeBindAddress, "health-probe-bind-address", f.manager.HealthProbeBindAddress,
		"address of the /healthz and /readyz endpoints; 0 disables them")
	fs.StringVar(&f.manager.PprofBindAddress, "pprof-bind-address", f.manager.PprofBindAddress,
		"address of Go's /debug/pprof/ profiles (heap, CPU, goroutines) for performance work; empty or 0 disables them. "+
			"The profiles are not authenticated: bind them to loopback")
	fs.BoolVar(&f.manager.LeaderElection, "leader-elect", f.manager.LeaderElection, help.leaderElect)
	fs.StringVar(&f.manager.LeaderElectionNamespace, "leader-election-namespace", f.manager.LeaderElectionNamespace,
		"namespace of the leader election's Lease")
	fs.Float32Var(&f.kubeAPIQPS, "kube-api-qps", f.kubeAPIQPS,
		"requests per second to the host API servers, per kind (client-side rate limit); negative: no client-side limit, the "+
			"API server's priority and fairness protects it and --concurrency bounds the requests in flight; 0: client-go's 5")
	fs.IntVar(&f.kubeAPIBurst, "kube-api-burst", f.kubeAPIBurst,
		"burst of requests to the host API servers above a positive --kube-api-qps")
	fs.BoolVar(&f.kubeAPICompression, "kube-api-compression", f.kubeAPICompression,
		"ask the host API servers to gzip their answers, watch events included; off: between a Pod and its own "+
			"cluster's API server the gzip costs CPU on both sides and saves bandwidth that is not scarce "+
			"(a kubeconfig's disable-compression: true still turns it off)")
	fs.StringVar(&f.manager.Shard, "shard", f.manager.Shard, help.shard)
	bindStartupTimeout(fs, &f.startupTimeout)
}

// bindStartupTimeout binds --startup-timeout, the bound of the wait at start for the
// host (convoy apiserver has its own, in internal/apiserver).
func bindStartupTimeout(fs *pflag.FlagSet, d *time.Duration) {
	fs.DurationVar(d, startup.FlagName, *d,
		"how long the process waits at start for kube-apiserver to answer and serve convoy's API before it exits; "+
			"it retries with a back-off up to 10 s and logs what it waits for")
}

// restConfig is the host cluster's configuration with the flags' rate limit and
// compression.
func (f *hostFlags) restConfig() (*rest.Config, error) {
	cfg, err := hostConfig(f.kubeconfig)
	if err != nil {
		return nil, err
	}
	cfg.QPS, cfg.Burst = f.kubeAPIQPS, f.kubeAPIBurst
	cfg.DisableCompression = cfg.DisableCompression || !f.kubeAPICompression
	return cfg, nil
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

// startManager waits at start for the host (hostmanager.Start: kube-apiserver answers
// and serves convoy's API) for at most --startup-timeout, retrying with a back-off and
// logging what it waits for, then returns the manager that newManager builds. Started
// while kube-apiserver restarts, or together with convoy apiserver as at an
// installation, the process waits instead of exiting.
func (f *hostFlags) startManager(ctx context.Context, process string, cfg *rest.Config,
	newManager func(*rest.Config, hostmanager.Options) (manager.Manager, error)) (manager.Manager, error) {
	return hostmanager.Start(ctx, cfg, f.manager, startup.Wait{
		Process: process,
		Timeout: f.startupTimeout,
		Log:     ctrllog.Log.WithName("startup"),
	}, newManager)
}
