package main

import (
	"context"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"

	"kumodo.io/convoy/internal/dev"
	"kumodo.io/convoy/internal/localcluster"
	"kumodo.io/convoy/internal/render/chartrepo"
)

func newDevCommand() *cobra.Command {
	opts := dev.Options{StateDir: ".convoy/dev", Nodes: 3, ChartsAddr: chartrepo.DefaultAddr, ReceiverAddr: dev.DefaultReceiverAddr}
	// The examples of the repository that holds the working directory, if any.
	if root, err := localcluster.RepoRoot(); err == nil {
		opts.ExamplesDir = filepath.Join(root, "examples")
	}
	cmd := &cobra.Command{
		Use:   "dev",
		Short: "Run convoy on a local Kubernetes control plane with simulated nodes",
		Long: `dev builds the Kubernetes binaries when they are missing (bin/k8s/), starts
etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok with
simulated nodes, then convoy's own processes (convoy apiserver, convoy
controller, which serves Receivers on --receiver-addr, and convoy observer). It serves <examples-dir>/charts/ as a Helm
chart repository on --charts-addr, following changes to the folder (a copy of
a chart folder with a new version publishes that version; a chart that does
not load is a 500 saying why), and, once everything answers, applies the
example Release <examples-dir>/release-manual.yaml into namespace demo unless
it is there. It writes <state-dir>/kubeconfig, creates <state-dir>/ready once
everything is ready, and stops everything on Ctrl-C or SIGTERM, in seconds:
every process at once (convoy's and the controllers first, then the
kube-apiservers, then etcd), each killed if it has not exited 5 s after
SIGTERM. A second Ctrl-C ends dev at once; its processes die with it.

--clusters N starts a local fleet beside it: N more control planes (on the same
etcd, each with one simulated node, state in <state-dir>/clusters/dev-<i>/),
registered as the Clusters dev-1 … dev-N with their kubeconfig Secrets in
convoy-system and the labels convoy.kumodo.io/dev=true, env=dev, ring=canary
(dev-1) or ring=main (the others), region=local and zone=local-a|b|c, for a
ReleaseSet's clusterSelector and stages. dev is ready once the controller finds
each of them Ready; Clusters of an earlier, larger fleet are deleted.

dev supervises every process it started: one that exits is started again after
a back-off (1 s, doubling up to 30 s, back to 1 s once it ran a minute), and dev
prints how it exited and the end of its log. <state-dir>/ready is removed while
a process is down and written again once it is ready; it holds the time it was
written and a line "<process> pid=<pid> restarts=<n>" per process (a fleet's
as "dev-1/kube-apiserver").`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			go func() {
				// Once stopping, a second Ctrl-C or SIGTERM ends dev at once (its
				// processes die with it: localcluster's Pdeathsig).
				<-ctx.Done()
				stop()
			}()
			opts.Out = cmd.OutOrStdout()
			opts.Components = dev.Components()
			return dev.Run(ctx, opts)
		},
	}
	cmd.Flags().StringVar(&opts.StateDir, "state-dir", opts.StateDir, "folder for the state of the dev environment")
	cmd.Flags().IntVar(&opts.Nodes, "nodes", opts.Nodes, "number of simulated nodes")
	cmd.Flags().IntVar(&opts.Clusters, "clusters", opts.Clusters,
		"number of local target clusters to start beside the host and register as the Clusters dev-1 … dev-N (a local fleet)")
	cmd.Flags().StringVar(&opts.ChartsAddr, "charts-addr", opts.ChartsAddr,
		"address of the local Helm chart repository (the examples name "+chartrepo.DefaultAddr+")")
	cmd.Flags().StringVar(&opts.ReceiverAddr, "receiver-addr", opts.ReceiverAddr,
		"address of the controller's receiver server (--receiver-bind-address), where Receivers are called; empty: none")
	cmd.Flags().StringVar(&opts.ExamplesDir, "examples-dir", opts.ExamplesDir,
		"folder with charts/ to serve and release-manual.yaml to apply; empty: neither")
	// As the chart's controller.defaultServiceAccount: the controller's and the
	// observer's lockdown; dev creates the ServiceAccount in the example's namespace.
	bindDefaultServiceAccount(cmd.Flags(), &opts.DefaultServiceAccount)
	return cmd
}
