package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
)

func newReleaseListCommand(o *Options) *cobra.Command {
	var allNamespaces bool
	var output string
	cmd := &cobra.Command{
		Use:     "list [-A]",
		Aliases: []string{"ls"},
		Short:   "List Releases: cluster, wave, mode, Applied, Healthy, render, age",
		Args:    exactArgs(),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutputFormat(output); err != nil {
				return err
			}
			ns := ""
			if !allNamespaces {
				var err error
				if ns, err = o.Namespace(); err != nil {
					return err
				}
			}
			c, err := o.Client()
			if err != nil {
				return err
			}
			list, err := c.ListReleases(cmd.Context(), ns)
			if err != nil {
				return err
			}
			if output != "" {
				return printObject(o.Streams.Out, output, list)
			}
			if len(list.Items) == 0 {
				where := "in namespace " + ns
				if allNamespaces {
					where = "in any namespace"
				}
				fmt.Fprintf(o.Streams.ErrOut, "No Releases found %s.\n", where)
				return nil
			}
			_, err = io.WriteString(o.Streams.Out, FormatReleaseList(list.Items, allNamespaces, o.Now(), o.Terminal(o.Streams.Out)))
			return err
		},
	}
	cmd.Flags().BoolVarP(&allNamespaces, "all-namespaces", "A", false, "list the Releases of every namespace")
	addOutputFlag(cmd, &output)
	return cmd
}
