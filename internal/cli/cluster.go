package cli

import (
	"fmt"

	"github.com/spf13/cobra"
)

func newClusterListCommand(o *Options) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List Clusters and their readiness",
		Args:    exactArgs(),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutputFormat(output); err != nil {
				return err
			}
			c, err := o.Client()
			if err != nil {
				return err
			}
			list, err := c.ListClusters(cmd.Context())
			if err != nil {
				return err
			}
			return o.show(output, list, func() (string, error) {
				if len(list.Items) == 0 {
					fmt.Fprintln(o.Streams.ErrOut, "No Clusters found: Releases with an empty spec.cluster deliver to the host cluster.")
					return "", nil
				}
				return FormatClusterList(list.Items, o.Now(), o.Terminal(o.Streams.Out)), nil
			})
		},
	}
	addOutputFlag(cmd, &output)
	return cmd
}

func newClusterStatusCommand(o *Options) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:               "status NAME",
		Short:             "Show a Cluster's readiness, version and which namespaces may target it",
		Args:              exactArgs("NAME"),
		ValidArgsFunction: o.completeClusterNames,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutputFormat(output); err != nil {
				return err
			}
			c, err := o.Client()
			if err != nil {
				return err
			}
			cl, err := c.GetCluster(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			return o.show(output, cl, func() (string, error) {
				return FormatClusterStatus(cl, o.Now(), o.Terminal(o.Streams.Out)), nil
			})
		},
	}
	addOutputFlag(cmd, &output)
	return cmd
}
