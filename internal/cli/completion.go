package cli

import (
	"strings"

	"github.com/spf13/cobra"
)

// completeReleaseNames completes the first argument with the namespace's Releases.
func (o *Options) completeReleaseNames(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	ns, err := o.Namespace()
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	c, err := o.Client()
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	list, err := c.ListReleases(cmd.Context(), ns)
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	var names []string
	for _, r := range list.Items {
		names = append(names, r.Name)
	}
	return withPrefix(names, toComplete), cobra.ShellCompDirectiveNoFileComp
}

// completeReleaseSetNames completes the first argument with the namespace's ReleaseSets.
func (o *Options) completeReleaseSetNames(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	ns, err := o.Namespace()
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	c, err := o.Client()
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	list, err := c.ListReleaseSets(cmd.Context(), ns)
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	var names []string
	for _, s := range list.Items {
		names = append(names, s.Name)
	}
	return withPrefix(names, toComplete), cobra.ShellCompDirectiveNoFileComp
}

// completeClusterNames completes the first argument with the Clusters.
func (o *Options) completeClusterNames(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	c, err := o.Client()
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	list, err := c.ListClusters(cmd.Context())
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	var names []string
	for _, cl := range list.Items {
		names = append(names, cl.Name)
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
