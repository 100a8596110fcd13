package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

func newReleaseHistoryCommand(o *Options) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:               "history NAME",
		Short:             "List a Release's Renders: ref, chart version, created, current, last successful, pinned, rolled back",
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
			renders, err := c.ListRenders(cmd.Context(), ns, name)
			if err != nil {
				return err
			}
			if output != "" {
				return printObject(o.Streams.Out, output, &v1.RenderList{Items: renders})
			}
			if len(renders) == 0 {
				fmt.Fprintf(o.Streams.ErrOut, "Release %s/%s has no Renders yet.\n", ns, name)
				return nil
			}
			_, err = io.WriteString(o.Streams.Out, FormatHistory(rel, renders, o.Now(), o.Terminal(o.Streams.Out)))
			return err
		},
	}
	addOutputFlag(cmd, &output)
	return cmd
}
