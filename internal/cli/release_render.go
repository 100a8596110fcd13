package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/manifest"
	"kumodo.io/convoy/internal/store"
)

func newReleaseRenderCommand(o *Options) *cobra.Command {
	var ref, output string
	cmd := &cobra.Command{
		Use:               "render NAME [--ref REF]",
		Short:             "Print the manifests of a render (default: the current render)",
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
			rd, err := o.findRender(cmd.Context(), c, ns, name, ref)
			if err != nil {
				return err
			}
			return o.show(output, rd, func() (string, error) {
				manifests, err := manifest.Decompress(rd.Manifests)
				if err != nil {
					return "", fmt.Errorf("render %s of %s/%s: reading the manifests: %w", rd.RenderRef, ns, name, err)
				}
				return string(manifests), nil
			})
		},
	}
	cmd.Flags().StringVar(&ref, "ref", "", "the render ref (sha256:<64 hex>); default: status.render.ref")
	addOutputFlag(cmd, &output)
	return cmd
}

// findRender reads the Render ref of a Release, the current one when ref is empty.
func (o *Options) findRender(ctx context.Context, c *Client, ns, name, ref string) (*v1.Render, error) {
	if ref == "" {
		rel, err := c.GetRelease(ctx, ns, name)
		if err != nil {
			return nil, err
		}
		if rel.Status.Render == nil || rel.Status.Render.Ref == "" {
			return nil, fmt.Errorf("release %s/%s has no render yet (status.render is empty): the controller has not rendered it; see kubectl convoy release status %s", ns, name, name)
		}
		ref = rel.Status.Render.Ref
	}
	return store.FindRender(ctx, c.Reader(), ns, name, ref)
}
