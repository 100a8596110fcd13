package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"kumodo.io/convoy/internal/dev"
)

func newDevCommand() *cobra.Command {
	opts := dev.Options{StateDir: ".convoy/dev", Nodes: 3}
	cmd := &cobra.Command{
		Use:   "dev",
		Short: "Run convoy on a local Kubernetes control plane with simulated nodes",
		Long: `dev builds the Kubernetes binaries when they are missing (bin/k8s/), starts
etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok with
simulated nodes, then convoy's own processes. It writes <state-dir>/kubeconfig,
creates <state-dir>/ready once everything answers, and stops everything on
Ctrl-C or SIGTERM.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			opts.Out = cmd.OutOrStdout()
			opts.Components = dev.Components()
			return dev.Run(ctx, opts)
		},
	}
	cmd.Flags().StringVar(&opts.StateDir, "state-dir", opts.StateDir, "folder for the state of the dev environment")
	cmd.Flags().IntVar(&opts.Nodes, "nodes", opts.Nodes, "number of simulated nodes")
	return cmd
}
