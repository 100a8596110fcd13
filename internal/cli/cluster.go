package cli

import (
	"fmt"
	"io"

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
			if output != "" {
				return printObject(o.Streams.Out, output, list)
			}
			if len(list.Items) == 0 {
				fmt.Fprintln(o.Streams.ErrOut, "No Clusters found: Releases with an empty spec.cluster deliver to the host cluster.")
				return nil
			}
			_, err = io.WriteString(o.Streams.Out, FormatClusterList(list.Items, o.Now(), o.Terminal(o.Streams.Out)))
			return err
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
			if output != "" {
				return printObject(o.Streams.Out, output, cl)
			}
			_, err = io.WriteString(o.Streams.Out, FormatClusterStatus(cl, o.Now(), o.Terminal(o.Streams.Out)))
			return err
		},
	}
	addOutputFlag(cmd, &output)
	return cmd
}
