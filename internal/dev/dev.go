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
)

// Options configure Run.
type Options struct {
	// StateDir holds the PKI, etcd data, logs, kubeconfig and the ready file.
	StateDir string
	// Nodes is the number of simulated nodes.
	Nodes int
	// Out receives progress and the usage notes.
	Out io.Writer
	// Components are convoy's own processes, started in order once the
	// control plane answers (see components.go).
	Components []Component
}

// Component is one of convoy's own processes in the dev environment. Start
// starts it (usually with Env.RunConvoy) and returns once it is ready.
type Component struct {
	Name  string
	Start func(ctx context.Context, env *Env) error
}

// Env is what a component may use of the running environment.
type Env struct {
	StateDir string
	Cluster  *localcluster.Cluster
	// Convoy is the convoy binary that runs the components.
	Convoy string
}

// RunConvoy runs `convoy <args>` beside the cluster as the process name; its
// log is <state-dir>/cluster/logs/<name>.log. ready, when set, is polled
// until it returns true.
func (e *Env) RunConvoy(ctx context.Context, name string, args []string, ready func(context.Context) bool) error {
	return e.Cluster.Run(ctx, localcluster.Process{Name: name, Path: e.Convoy, Args: args, Ready: ready})
}

// File names in the state folder.
const (
	ReadyFile      = "ready"
	KubeconfigFile = "kubeconfig"
)

// Run starts everything, writes <state-dir>/kubeconfig and <state-dir>/ready,
// prints how to use it, and blocks until ctx ends; then it stops everything
// and removes the ready file.
func Run(ctx context.Context, opts Options) error {
	out := opts.Out
	if out == nil {
		out = io.Discard
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
	defer func() {
		_ = os.Remove(readyPath)
		fmt.Fprintln(out, "Stopping convoy dev...")
		if err := cluster.Stop(); err != nil {
			fmt.Fprintf(out, "Stop: %v\n", err)
		}
		fmt.Fprintln(out, "Stopped.")
	}()

	kubeconfig := filepath.Join(stateDir, KubeconfigFile)
	if err := copyFile(cluster.KubeconfigPath(), kubeconfig); err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	env := &Env{StateDir: stateDir, Cluster: cluster, Convoy: self}
	for _, c := range opts.Components {
		fmt.Fprintf(out, "Starting %s\n", c.Name)
		if err := c.Start(ctx, env); err != nil {
			return fmt.Errorf("start %s: %w", c.Name, err)
		}
	}
	if err := os.WriteFile(readyPath, []byte(time.Now().UTC().Format(time.RFC3339)+"\n"), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(out, `
convoy dev is ready (%s). Use it with:

  export KUBECONFIG=%s
  export PATH=%s:$PATH   # kubectl %s, matching the server
  kubectl get nodes

Logs: %s
Press Ctrl-C to stop.
`, time.Since(started).Round(time.Second), kubeconfig, binDir, localcluster.KubernetesVersion, cluster.LogDir())

	<-ctx.Done()
	return nil
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o600)
}
