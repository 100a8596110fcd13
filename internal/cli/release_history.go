package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

func newReleaseHistoryCommand(o *Options) *cobra.Command {
	var output string
	return o.named(&cobra.Command{
		Use:   "history NAME",
		Short: "List a Release's Renders: ref, chart version, created, current, last successful, pinned, rolled back",
	}, o.completeReleaseNames, &output, func(ctx context.Context, ns, name string, c *Client) error {
		rel, err := c.GetRelease(ctx, ns, name)
		if err != nil {
			return err
		}
		renders, err := c.ListRenders(ctx, ns, name)
		if err != nil {
			return err
		}
		return o.show(output, &v1.RenderList{Items: renders}, func() (string, error) {
			if len(renders) == 0 {
				fmt.Fprintf(o.Streams.ErrOut, "Release %s/%s has no Renders yet.\n", ns, name)
				return "", nil
			}
			return FormatHistory(rel, renders, o.Now(), o.Terminal(o.Streams.Out)), nil
		})
	})
}
