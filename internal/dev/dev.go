// Package dev runs convoy on one machine for trying it out: a local
// Kubernetes control plane with simulated nodes (internal/localcluster) and
// convoy's own processes beside it, all under one state folder. It is what
// `convoy dev` (and `make dev`) runs; nothing in production imports it.
package dev

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"kumodo.io/convoy/internal/localcluster"
	"kumodo.io/convoy/internal/render/chartrepo"
)

// Options configure Run.
type Options struct {
	// StateDir holds the PKI, etcd data, logs, kubeconfig and the ready file.
	StateDir string
	// Nodes is the number of simulated nodes.
	Nodes int
	// Clusters is the number of local target clusters beside the host (the local
	// clusters, clusters.go): control planes on the host's etcd, each with one simulated
	// node, registered as the Clusters dev-1 … dev-<Clusters>. 0: none.
	Clusters int
	// Out receives progress and the usage notes.
	Out io.Writer
	// Components are convoy's own processes, started in order once the
	// control plane answers (see components.go).
	Components []Component
	// ExamplesDir, when set, is the repository's examples/ folder: dev serves
	// <ExamplesDir>/charts/ as a Helm chart repository on ChartsAddr and, once
	// everything is ready, applies <ExamplesDir>/release-manual.yaml into its
	// namespace if that Release is not there yet.
	ExamplesDir string
	// ChartsAddr is the address of the chart repository; default
	// chartrepo.DefaultAddr, the one the examples name.
	ChartsAddr string
	// DefaultServiceAccount, when set, is the lockdown of the controller and the
	// observer (--default-service-account), as the chart's
	// controller.defaultServiceAccount: a Release without spec.serviceAccountName
	// acts as this ServiceAccount of its namespace. dev creates it in the example's
	// namespace, bound to the ClusterRole admin there.
	DefaultServiceAccount string
	// Convoy is the convoy binary that runs the components; empty: this executable.
	Convoy string
	// ConvoyEnv is added to the environment of the components (tests).
	ConvoyEnv []string
	// ReceiverAddr is the controller's --receiver-bind-address: where Receivers are
	// served (DefaultReceiverAddr in `convoy dev`); empty: no receiver server.
	ReceiverAddr string
}

// DefaultReceiverAddr is where `convoy dev` serves Receivers (--receiver-addr).
const DefaultReceiverAddr = "127.0.0.1:8880"

// Component is one of convoy's own processes in the dev environment. Start
// starts it (usually with StartAPIServer, StartController,
// StartObserver or StartProcess) and returns once it is ready.
type Component struct {
	Name  string
	Start func(ctx context.Context, env *Env) error
}

// Env is what a component may use of the running environment.
type Env struct {
	StateDir string
	Cluster  *localcluster.Cluster
	// Convoy is the convoy binary that runs the components, with ConvoyEnv added to
	// its environment.
	Convoy    string
	ConvoyEnv []string
	// ChartsURL is the URL of the local chart repository; empty without one.
	ChartsURL string
	// DefaultServiceAccount is Options.DefaultServiceAccount.
	DefaultServiceAccount string
	// ReceiverAddr is Options.ReceiverAddr.
	ReceiverAddr string
}

// File names in the state folder.
const (
	ReadyFile      = "ready"
	KubeconfigFile = "kubeconfig"
)

// Run starts everything, writes <state-dir>/kubeconfig and <state-dir>/ready,
// prints how to use it, and blocks until ctx ends; then it stops everything
// and removes the ready file. Meanwhile it supervises every process it started:
// one that exits is started again with a back-off (localcluster.Supervise), dev
// prints why, and the ready file is removed until it is ready again.
func Run(ctx context.Context, opts Options) error {
	out := opts.Out
	if out == nil {
		out = io.Discard
	}
	if err := validateClusters(opts.Clusters); err != nil {
		return err
	}
	stateDir, err := filepath.Abs(opts.StateDir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(stateDir, 0o755); err != nil {
		return err
	}
	readyPath := filepath.Join(stateDir, ReadyFile)
	// A ready file left by a killed run would lie until this one is ready.
	if err := os.Remove(readyPath); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}

	started := time.Now()
	// The chart repository runs in this process; it starts first so that a
	// taken port fails at once, not after the control plane started.
	var charts *chartrepo.Server
	if opts.ExamplesDir != "" {
		if charts, err = serveCharts(filepath.Join(opts.ExamplesDir, "charts"), opts.ChartsAddr); err != nil {
			return err
		}
		defer charts.Close()
		fmt.Fprintf(out, "Serving the charts of %s at %s\n", filepath.Join(opts.ExamplesDir, "charts"), charts.URL)
	}
	binDir, err := localcluster.EnsureBinaries(ctx, out)
	if err != nil {
		return err
	}
	cluster, err := localcluster.Start(ctx, localcluster.Options{
		Dir:       filepath.Join(stateDir, "cluster"),
		BinDir:    binDir,
		Workloads: true,
		Nodes:     opts.Nodes,
		Progress:  out,
	})
	if err != nil {
		return fmt.Errorf("start the local control plane: %w", err)
	}
	// The local clusters, once started: it stops with the host (stopAll).
	var devClusters *localcluster.Clusters
	defer func() {
		_ = os.Remove(readyPath)
		stopAll(cluster, devClusters, out)
	}()

	kubeconfig := filepath.Join(stateDir, KubeconfigFile)
	if err := copyFile(cluster.KubeconfigPath(), kubeconfig); err != nil {
		return err
	}
	self := opts.Convoy
	if self == "" {
		if self, err = os.Executable(); err != nil {
			return err
		}
	}
	env := &Env{StateDir: stateDir, Cluster: cluster, Convoy: self, ConvoyEnv: opts.ConvoyEnv, DefaultServiceAccount: opts.DefaultServiceAccount,
		ReceiverAddr: opts.ReceiverAddr}
	if charts != nil {
		env.ChartsURL = charts.URL
	}
	for _, c := range opts.Components {
		fmt.Fprintf(out, "Starting %s\n", c.Name)
		if err := c.Start(ctx, env); err != nil {
			return fmt.Errorf("start %s: %w", c.Name, err)
		}
	}
	// From here on every process that exits is started again (supervise.go), and the
	// ready file says whether everything runs.
	ready := newReadiness(readyPath, out)
	defer ready.close()
	ready.supervise(ctx, "", cluster)
	if devClusters, err = runClusters(ctx, cluster, stateDir, opts.Clusters, ready, out); err != nil {
		return err
	}
	var example *ExampleRelease
	if opts.ExamplesDir != "" {
		if example, err = ApplyExample(ctx, cluster.RestConfig(), filepath.Join(opts.ExamplesDir, ExampleFile), env.ChartsURL); err != nil {
			return err
		}
		if example.Created {
			fmt.Fprintf(out, "Applied %s (Release %s/%s)\n", filepath.Join(opts.ExamplesDir, ExampleFile), example.Namespace, example.Name)
		}
		if opts.DefaultServiceAccount != "" {
			if err := CreateDeployer(ctx, cluster.RestConfig(), example.Namespace, opts.DefaultServiceAccount); err != nil {
				return err
			}
			fmt.Fprintf(out, "Lockdown: Releases act as the ServiceAccount %[2]s of their namespace; created %[1]s/%[2]s, bound to admin in %[1]s\n",
				example.Namespace, opts.DefaultServiceAccount)
			if err := createClusterDeployers(ctx, devClusters, opts.DefaultServiceAccount, out); err != nil {
				return err
			}
		}
	}
	path := binDir
	if root, err := localcluster.RepoRoot(); err == nil {
		// `make dev` builds the kubectl-convoy plugin into <repo>/bin.
		if _, err := os.Stat(filepath.Join(root, "bin", "kubectl-convoy")); err == nil {
			path = filepath.Join(root, "bin") + ":" + path
		}
	}
	fmt.Fprintf(out, `
convoy dev is ready (%s). Use it with:

  export KUBECONFIG=%s
  export PATH=%s:$PATH   # kubectl %s (matching the server) and kubectl-convoy
  kubectl get nodes

%s%sLogs: %s
Press Ctrl-C to stop.
`, time.Since(started).Round(time.Second), kubeconfig, path, localcluster.KubernetesVersion, example.usage(), clustersUsage(devClusters, stateDir), cluster.LogDir())
	// The ready file comes last: whoever waits for it can also read the notes above.
	if err := ready.markReady(); err != nil {
		return err
	}

	<-ctx.Done()
	return nil
}

// stopAll stops the host control plane with convoy's processes and the local clusters
// (nil: none) together, in seconds (localcluster.StopClusters: every process at
// once, the clients first and the host's etcd, which the local clusters share, last; a
// process still there StopGrace after SIGTERM is killed), and says how long it took.
func stopAll(host *localcluster.Cluster, devClusters *localcluster.Clusters, out io.Writer) {
	fmt.Fprintln(out, "Stopping convoy dev...")
	started := time.Now()
	clusters := []*localcluster.Cluster{host}
	if devClusters != nil {
		clusters = append(clusters, devClusters.Clusters...)
	}
	if err := localcluster.StopClusters(clusters...); err != nil {
		fmt.Fprintf(out, "Stop: %v\n", err)
	}
	fmt.Fprintf(out, "Stopped in %s.\n", time.Since(started).Round(100*time.Millisecond))
}

// serveCharts packages and serves the chart folders of dir on addr.
func serveCharts(dir, addr string) (*chartrepo.Server, error) {
	if addr == "" {
		addr = chartrepo.DefaultAddr
	}
	repo, err := chartrepo.NewFolder(dir)
	if err != nil {
		return nil, err
	}
	srv, err := chartrepo.Serve(addr, repo)
	if errors.Is(err, chartrepo.ErrAddrInUse) {
		return nil, fmt.Errorf("the chart repository cannot listen on %s: another process (another convoy dev?) uses it; "+
			"stop it or choose another address with --charts-addr (e.g. --charts-addr 127.0.0.1:0): %w", addr, err)
	}
	return srv, err
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o600)
}
