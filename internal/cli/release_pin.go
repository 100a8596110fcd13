package cli

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

func newReleasePinCommand(o *Options) *cobra.Command {
	var ref, reason, output string
	cmd := &cobra.Command{
		Use:   "pin NAME [--render REF] [--reason TEXT]",
		Short: "Hold a Release at one render (default: its last successful render), through /pin",
		Long: "Pin a Release: convoy keeps applying the pinned render, whatever the chart and values render now. " +
			"Without --render the server pins status.lastSuccessful.renderRef. The write also requests a sync.",
		Example:           "  kubectl convoy release pin podinfo --reason 'incident 4711'\n  kubectl convoy release pin podinfo --render sha256:4f1c…",
		Args:              exactArgs("NAME"),
		ValidArgsFunction: o.completeReleaseNames,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutputFormat(output); err != nil {
				return err
			}
			if ref != "" {
				if err := ValidateRenderRef(ref); err != nil {
					return err
				}
			}
			ns, name, c, err := o.releaseArg(args)
			if err != nil {
				return err
			}
			pin := map[string]any{"renderRef": nil, "reason": nil}
			if ref != "" {
				pin["renderRef"] = ref
			}
			if reason != "" {
				pin["reason"] = reason
			}
			patch, _ := json.Marshal(map[string]any{"pin": pin})
			rel, err := c.MergePatch(cmd.Context(), ns, name, v1.SubresourcePin, patch)
			if err != nil {
				return err
			}
			return o.show(output, rel, func() (string, error) {
				got := ""
				if rel.Pin != nil {
					got = rel.Pin.RenderRef
				}
				return fmt.Sprintf("release.%s/%s pinned to %s\n", v1.GroupName, name, got), nil
			})
		},
	}
	cmd.Flags().StringVar(&ref, "render", "", "the render ref to pin (sha256:<64 hex>); default: the last successful render")
	cmd.Flags().StringVar(&reason, "reason", "", "why, for people")
	addOutputFlag(cmd, &output)
	return cmd
}

func newReleaseUnpinCommand(o *Options) *cobra.Command {
	var output string
	return o.named(&cobra.Command{
		Use:   "unpin NAME",
		Short: "Remove a Release's pin, through /pin",
	}, o.completeReleaseNames, &output, func(ctx context.Context, ns, name string, c *Client) error {
		rel, err := c.MergePatch(ctx, ns, name, v1.SubresourcePin, []byte(`{"pin":null}`))
		if err != nil {
			return err
		}
		return o.show(output, rel, func() (string, error) {
			return fmt.Sprintf("release.%s/%s unpinned\n", v1.GroupName, name), nil
		})
	})
}
