package cli

import (
	"io"

	"github.com/spf13/cobra"
)

func newReleaseStatusCommand(o *Options) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:               "status NAME",
		Short:             "Show a Release's conditions, renders, pending syncs, rollout, waves, hooks, health and drift",
		Args:              exactArgs("NAME"),
		ValidArgsFunction: o.completeReleaseNames,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutputFormat(output); err != nil {
				return err
			}
			ns, name, c, err := o.releaseArg(args)
			if err != nil {
				return err
			}
			rel, err := c.GetRelease(cmd.Context(), ns, name)
			if err != nil {
				return err
			}
			if output != "" {
				return printObject(o.Streams.Out, output, rel)
			}
			// The inventory adds health and drift; without it (none yet, or no
			// permission) the status still shows everything the Release says.
			inv, _ := c.GetInventory(cmd.Context(), ns, name)
			_, err = io.WriteString(o.Streams.Out, FormatReleaseStatus(rel, inv, o.Now(), o.Terminal(o.Streams.Out)))
			return err
		},
	}
	addOutputFlag(cmd, &output)
	return cmd
}
