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

// Component is one of convoy's own processes in the dev environment.
type Component struct {
	Name string
	// Process returns what to run, given the running environment.
	Process func(env *Env) (localcluster.Process, error)
	// After, when set, runs once the process is ready (for example, to
	// register an APIService).
	After func(ctx context.Context, env *Env) error
}

// Env is what a component may use of the running environment.
type Env struct {
	StateDir string
	Cluster  *localcluster.Cluster
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
	env := &Env{StateDir: stateDir, Cluster: cluster}
	for _, c := range opts.Components {
		p, err := c.Process(env)
		if err != nil {
			return fmt.Errorf("%s: %w", c.Name, err)
		}
		if err := cluster.Run(ctx, p); err != nil {
			return fmt.Errorf("start %s: %w", c.Name, err)
		}
		if c.After != nil {
			if err := c.After(ctx, env); err != nil {
				return fmt.Errorf("%s: %w", c.Name, err)
			}
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
