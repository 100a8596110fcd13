package cli

import (
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
)

// completeReleaseNames completes the first argument with the namespace's Releases.
func (o *Options) completeReleaseNames(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	return o.completeNames(args, toComplete, func(c *Client) (runtime.Object, error) {
		ns, err := o.Namespace()
		if err != nil {
			return nil, err
		}
		return c.ListReleases(cmd.Context(), ns)
	})
}

// completeReleaseSetNames completes the first argument with the namespace's ReleaseSets.
func (o *Options) completeReleaseSetNames(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	return o.completeNames(args, toComplete, func(c *Client) (runtime.Object, error) {
		ns, err := o.Namespace()
		if err != nil {
			return nil, err
		}
		return c.ListReleaseSets(cmd.Context(), ns)
	})
}

// completeClusterNames completes the first argument with the Clusters.
func (o *Options) completeClusterNames(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	return o.completeNames(args, toComplete, func(c *Client) (runtime.Object, error) {
		return c.ListClusters(cmd.Context())
	})
}

// completeNames completes the first argument with the names of the objects that list
// reads; nothing after the first.
func (o *Options) completeNames(args []string, toComplete string, list func(*Client) (runtime.Object, error)) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	c, err := o.Client()
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	objs, err := list(c)
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	var names []string
	err = meta.EachListItem(objs, func(obj runtime.Object) error {
		m, err := meta.Accessor(obj)
		if err != nil {
			return err
		}
		names = append(names, m.GetName())
		return nil
	})
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	return withPrefix(names, toComplete), cobra.ShellCompDirectiveNoFileComp
}

// completeNamespaces completes -n with the host cluster's namespaces.
func (o *Options) completeNamespaces(cmd *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	c, err := o.Client()
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	names, err := c.ListNamespaces(cmd.Context())
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	return withPrefix(names, toComplete), cobra.ShellCompDirectiveNoFileComp
}

func withPrefix(names []string, prefix string) []string {
	var out []string
	for _, n := range names {
		if strings.HasPrefix(n, prefix) {
			out = append(out, n)
		}
	}
	return out
}
