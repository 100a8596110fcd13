package cli

import (
	"context"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"kumodo.io/convoy/internal/store"
)

func newReleaseStatusCommand(o *Options) *cobra.Command {
	var output string
	return o.named(&cobra.Command{
		Use:   "status NAME",
		Short: "Show a Release's conditions, renders, pending syncs, rollout, waves, hooks, health and drift",
	}, o.completeReleaseNames, &output, func(ctx context.Context, ns, name string, c *Client) error {
		rel, err := c.GetRelease(ctx, ns, name)
		if err != nil {
			return err
		}
		return o.show(output, rel, func() (string, error) {
			// The inventory adds health and drift; without it (none yet, or no
			// permission) the status still shows everything the Release says.
			inv, _ := store.GetInventory(ctx, c.Reader(), client.ObjectKey{Namespace: ns, Name: name})
			return FormatReleaseStatus(rel, inv, o.Now(), o.Terminal(o.Streams.Out)), nil
		})
	})
}
