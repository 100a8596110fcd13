package main

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"kumodo.io/convoy/internal/hostmanager"
)

// hostFlags are the flags that convoy controller and convoy observer share: the host
// cluster, the client's rate limit and the manager's options.
type hostFlags struct {
	kubeconfig   string
	kubeAPIQPS   float32
	kubeAPIBurst int
	manager      hostmanager.Options
}

// newHostFlags returns the shared defaults: the Lease in convoy-system, and 50
// requests/s with a burst of 300 (client-go's default of 5 requests/s capped the
// controller at 1.7 Releases/s in bench/controller; Flux's controllers use 50/300).
func newHostFlags(resync time.Duration, metricsAddr, probeAddr string) hostFlags {
	return hostFlags{
		kubeAPIQPS:   50,
		kubeAPIBurst: 300,
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
	fs.StringVar(&f.kubeconfig, "kubeconfig", f.kubeconfig,
		"kubeconfig of the host cluster; empty: $KUBECONFIG, else the in-cluster configuration")
	fs.DurationVar(&f.manager.Resync, "resync", f.manager.Resync, help.resync)
	fs.StringVar(&f.manager.MetricsBindAddress, "metrics-bind-address", f.manager.MetricsBindAddress,
		"address of the Prometheus /metrics endpoint; 0 disables it")
	fs.StringVar(&f.manager.HealthProbeBindAddress, "health-probe-bind-address", f.manager.HealthProbeBindAddress,
		"address of the /healthz and /readyz endpoints; 0 disables them")
	fs.BoolVar(&f.manager.LeaderElection, "leader-elect", f.manager.LeaderElection, help.leaderElect)
	fs.StringVar(&f.manager.LeaderElectionNamespace, "leader-election-namespace", f.manager.LeaderElectionNamespace,
		"namespace of the leader election's Lease")
	fs.Float32Var(&f.kubeAPIQPS, "kube-api-qps", f.kubeAPIQPS,
		"requests per second to the API servers (client-side rate limit)")
	fs.IntVar(&f.kubeAPIBurst, "kube-api-burst", f.kubeAPIBurst,
		"burst of requests to the API servers above --kube-api-qps")
	fs.StringVar(&f.manager.Shard, "shard", f.manager.Shard, help.shard)
}

// restConfig is the host cluster's configuration with the flags' rate limit.
func (f *hostFlags) restConfig() (*rest.Config, error) {
	cfg, err := hostConfig(f.kubeconfig)
	if err != nil {
		return nil, err
	}
	cfg.QPS, cfg.Burst = f.kubeAPIQPS, f.kubeAPIBurst
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
