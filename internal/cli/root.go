package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// Run runs kubectl-convoy with args (without the program name) and returns the exit
// code: 0 ok, 1 failure, 2 usage error. Errors are written to streams.ErrOut.
func Run(ctx context.Context, args []string, streams genericiooptions.IOStreams, getenv func(string) string) int {
	o := &Options{
		ConfigFlags:  genericclioptions.NewConfigFlags(true),
		Streams:      streams,
		Getenv:       getenv,
		Now:          time.Now,
		PollInterval: time.Second,
	}
	return o.Execute(ctx, args)
}

// Execute runs the command line args with o and returns the exit code.
func (o *Options) Execute(ctx context.Context, args []string) int {
	root := NewCommand(o)
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return ExitOK
	}
	if strings.HasPrefix(err.Error(), "unknown command") {
		err = &UsageError{Err: err}
	}
	fmt.Fprintf(o.Streams.ErrOut, "error: %v\n", err)
	if ExitCode(err) == ExitUsage && cmd != nil {
		fmt.Fprintf(o.Streams.ErrOut, "See '%s --help' for usage.\n", cmd.CommandPath())
	}
	return ExitCode(err)
}

// NewCommand returns the root command, kubectl-convoy, with every subcommand.
func NewCommand(o *Options) *cobra.Command {
	root := &cobra.Command{
		Use:   "kubectl-convoy",
		Short: "Sync, inspect and pin convoy Releases; follow and promote ReleaseSets",
		Long: "kubectl convoy works with convoy's Releases (convoy.kumodo.io/v1alpha1): request a sync, " +
			"follow it, and show status, history, renders and diffs; and with ReleaseSets: where a rollout " +
			"across Clusters stands, and promote its next stage.\n\n" +
			"Exit codes: 0 ok, 1 failure (also a --wait that saw a failure or timed out), 2 usage error.",
		Annotations:   map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl convoy"},
		SilenceErrors: true,
		SilenceUsage:  true,
		Args:          noArgs,
		RunE:          helpOrUnknown,
	}
	root.SetIn(o.Streams.In)
	root.SetOut(o.Streams.Out)
	root.SetErr(o.Streams.ErrOut)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &UsageError{Err: err} })
	o.ConfigFlags.AddFlags(root.PersistentFlags())
	_ = root.RegisterFlagCompletionFunc("namespace", o.completeNamespaces)

	release := &cobra.Command{
		Use:     "release",
		Aliases: []string{"releases", "rel"},
		Short:   "Work with Releases",
		Args:    cobra.ArbitraryArgs,
		RunE:    helpOrUnknown,
	}
	release.AddCommand(
		newReleaseSyncCommand(o),
		newReleaseListCommand(o),
		newReleaseStatusCommand(o),
		newReleaseHistoryCommand(o),
		newReleaseRenderCommand(o),
		newReleaseDiffCommand(o),
		newReleasePinCommand(o),
		newReleaseUnpinCommand(o),
		newReleaseMutateCommand(o),
		newReleaseFromHelmCommand(o),
	)
	cluster := &cobra.Command{
		Use:     "cluster",
		Aliases: []string{"clusters"},
		Short:   "Work with Clusters",
		Args:    cobra.ArbitraryArgs,
		RunE:    helpOrUnknown,
	}
	cluster.AddCommand(newClusterListCommand(o), newClusterStatusCommand(o))
	root.AddCommand(release, newReleaseSetCommand(o), cluster, newAlertCommand(o), newReceiverCommand(o), newOrphansCommand(o), newUICommand(o), newVersionCommand(o))
	return root
}

// helpOrUnknown is the RunE of a command group: help without arguments, a usage error
// with suggestions for an unknown subcommand.
func helpOrUnknown(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return cmd.Help()
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
	if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
		msg += "; did you mean " + orList(s) + "?"
	}
	return usageErrorf("%s", msg)
}

// noArgs accepts any arguments: helpOrUnknown reports an unknown command itself.
func noArgs(_ *cobra.Command, _ []string) error { return nil }

// exactArgs is cobra.ExactArgs with the names of the arguments and a usage error.
func exactArgs(names ...string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != len(names) {
			return usageErrorf("%s takes %d argument(s), %s; got %d", cmd.CommandPath(), len(names), strings.Join(names, ", "), len(args))
		}
		return nil
	}
}

// releaseArg is what a command on one Release starts with: its namespace, name and
// the client.
func (o *Options) releaseArg(args []string) (ns, name string, c *Client, err error) {
	if ns, err = o.Namespace(); err != nil {
		return "", "", nil, err
	}
	if c, err = o.Client(); err != nil {
		return "", "", nil, err
	}
	return ns, args[0], c, nil
}
