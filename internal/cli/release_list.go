package cli

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

func newReleaseListCommand(o *Options) *cobra.Command {
	return listCommand[*v1.ReleaseList]{
		kinds: "Releases",
		short: "List Releases: cluster, wave, mode, Applied, Healthy, render, age",
		list: func(ctx context.Context, c *Client, ns string) (*v1.ReleaseList, error) {
			return c.ListReleases(ctx, ns)
		},
		format: func(list *v1.ReleaseList, allNamespaces bool, now time.Time, t Terminal) string {
			return FormatReleaseList(list.Items, allNamespaces, now, t)
		},
	}.command(o)
}
