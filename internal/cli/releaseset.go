package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

func newReleaseSetCommand(o *Options) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "releaseset",
		Aliases: []string{"releasesets"},
		Short:   "Work with ReleaseSets: one chart to many Clusters, rolled out stage by stage",
		Args:    cobra.ArbitraryArgs,
		RunE:    helpOrUnknown,
	}
	cmd.AddCommand(newReleaseSetListCommand(o), newReleaseSetStatusCommand(o), newReleaseSetPromoteCommand(o))
	return cmd
}

func newReleaseSetListCommand(o *Options) *cobra.Command {
	var allNamespaces bool
	var output string
	cmd := &cobra.Command{
		Use:     "list [-A]",
		Aliases: []string{"ls"},
		Short:   "List ReleaseSets: revision, the stage where the rollout stands, Releases Ready at the revision, age",
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
			list, err := c.ListReleaseSets(cmd.Context(), ns)
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
				fmt.Fprintf(o.Streams.ErrOut, "No ReleaseSets found %s.\n", where)
				return nil
			}
			_, err = io.WriteString(o.Streams.Out, FormatReleaseSetList(list.Items, allNamespaces, o.Now(), o.Terminal(o.Streams.Out)))
			return err
		},
	}
	cmd.Flags().BoolVarP(&allNamespaces, "all-namespaces", "A", false, "list the ReleaseSets of every namespace")
	addOutputFlag(cmd, &output)
	return cmd
}

func newReleaseSetStatusCommand(o *Options) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "status NAME",
		Short: "Show a ReleaseSet's stages, each Cluster's Release at the revision, conditions and skipped Clusters",
		Long: "Show where a ReleaseSet's rollout stands: its revision (a digest of spec.template), its conditions " +
			"(Ready, Progressing, Halted), its stages (phase, approval, Clusters, Releases updated to the revision and " +
			"Ready at it), each Cluster's Release (the label " + v1.LabelReleaseSet + " finds them) with the revision it " +
			"holds, its state, Ready condition and rollout, the Clusters skipped with the reason, and what to do next when " +
			"the rollout waits for approval or is halted.\n\n-o yaml|json prints the ReleaseSet.",
		Args:              exactArgs("NAME"),
		ValidArgsFunction: o.completeReleaseSetNames,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutputFormat(output); err != nil {
				return err
			}
			ns, name, c, err := o.releaseArg(args)
			if err != nil {
				return err
			}
			set, err := c.GetReleaseSet(cmd.Context(), ns, name)
			if err != nil {
				return err
			}
			if output != "" {
				return printObject(o.Streams.Out, output, set)
			}
			// Without the right to list Releases (convoy-promote reads only ReleaseSets)
			// the status still shows everything the ReleaseSet says.
			releases, listErr := c.ListSetReleases(cmd.Context(), ns, name)
			if listErr != nil && !apierrors.IsForbidden(listErr) {
				return listErr
			}
			_, err = io.WriteString(o.Streams.Out, FormatReleaseSetStatus(set, releases, listErr, o.Now(), o.Terminal(o.Streams.Out)))
			return err
		},
	}
	addOutputFlag(cmd, &output)
	return cmd
}

func newReleaseSetPromoteCommand(o *Options) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "promote NAME",
		Short: "Approve the Manual stage that waits (POST releasesets/NAME/promote) and print which stage was approved",
		Long: "Approve the stage of a ReleaseSet whose phase is WaitingForApproval: POST releasesets/NAME/promote records " +
			"the approval for the current revision, and the controller starts the stage. It needs its own permission, " +
			"create on releasesets/promote.\n\n" +
			"The server refuses (409) when no stage waits for approval, or when the rollout is Halted: promote does not " +
			"override a halt; a new revision (a change to spec.template) starts over.",
		Example:           "  kubectl convoy releaseset promote podinfo -n team-a",
		Args:              exactArgs("NAME"),
		ValidArgsFunction: o.completeReleaseSetNames,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutputFormat(output); err != nil {
				return err
			}
			ns, name, c, err := o.releaseArg(args)
			if err != nil {
				return err
			}
			set, err := c.Promote(cmd.Context(), ns, name)
			if err != nil {
				return err
			}
			if output != "" {
				return printObject(o.Streams.Out, output, set)
			}
			_, err = fmt.Fprintln(o.Streams.Out, PromotedLine(set))
			return err
		},
	}
	addOutputFlag(cmd, &output)
	return cmd
}

// PromotedLine says what /promote approved: the approval it appended for the
// current revision (the last such entry of approvals).
func PromotedLine(s *v1.ReleaseSet) string {
	prefix := fmt.Sprintf("releaseset.%s/%s", v1.GroupName, s.Name)
	for i := len(s.Approvals) - 1; i >= 0; i-- {
		a := s.Approvals[i]
		if a.Revision != s.Status.Revision {
			continue
		}
		by := ""
		if a.ApprovedBy != "" {
			by = " by " + a.ApprovedBy
		}
		return fmt.Sprintf("%s promoted: stage %s approved at revision %s%s", prefix, a.Stage, ShortRef(a.Revision), by)
	}
	return prefix + " promoted"
}
