package main

import (
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"kumodo.io/convoy/internal/apiserver"
)

// newAPIServerCommand is `convoy apiserver`: the extension API server of
// convoy.kumodo.io/v1alpha1, with the standard flags of an aggregated API server
// (--etcd-servers, --etcd-prefix, --secure-port, --tls-cert-file,
// --authentication-kubeconfig, --authorization-kubeconfig, --kubeconfig, ...).
func newAPIServerCommand() *cobra.Command {
	opts := apiserver.NewOptions()
	var logs logFlags
	cmd := &cobra.Command{
		Use:   "apiserver",
		Short: "Serve the convoy.kumodo.io/v1alpha1 API from etcd, behind the host cluster's aggregator",
		Long: `apiserver serves Releases, Renders, ReleaseInventories and Clusters from etcd.
It is registered with the host cluster's kube-apiserver by an APIService and
delegates authentication and authorization to it. Without --tls-cert-file it
serves a self-signed certificate (add the aggregator's name with
--tls-alternate-dns <service>.<namespace>.svc).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			if err := logs.apply("apiserver"); err != nil {
				return err
			}
			return opts.Run(ctx)
		},
	}
	opts.AddFlags(cmd.Flags())
	logs.bind(cmd.Flags())
	return cmd
}
