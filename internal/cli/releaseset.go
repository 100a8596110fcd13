package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

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
	cmd.AddCommand(newReleaseSetListCommand(o), newReleaseSetStatusCommand(o), newReleaseSetPromoteCommand(o),
		newReleaseSetPauseCommand(o, true), newReleaseSetPauseCommand(o, false))
	return cmd
}

func newReleaseSetListCommand(o *Options) *cobra.Command {
	return listCommand[*v1.ReleaseSetList]{
		kinds: "ReleaseSets",
		short: "List ReleaseSets: revision, the stage where the rollout stands, Releases Ready at the revision, age",
		list: func(ctx context.Context, c *Client, ns string) (*v1.ReleaseSetList, error) {
			return c.ListReleaseSets(ctx, ns)
		},
		format: func(list *v1.ReleaseSetList, allNamespaces bool, now time.Time, t Terminal) string {
			return FormatReleaseSetList(list.Items, allNamespaces, now, t)
		},
	}.command(o)
}

func newReleaseSetStatusCommand(o *Options) *cobra.Command {
	var output string
	var showValues bool
	cmd := o.named(&cobra.Command{
		Use:   "status NAME",
		Short: "Show a ReleaseSet's stages, each Cluster's Release at the revision, conditions and skipped Clusters",
		Long: "Show where a ReleaseSet's rollout stands: its revision (a digest of spec.template, spec.clusterOverrides and " +
			"status.source) with the source it resolved (chart version, commit, values digest), why it is paused or halted, " +
			"its conditions (Ready, Progressing, Halted), its stages (phase, approval, Clusters, Releases updated to the " +
			"revision and Ready at it; with maxUnavailable, bakeTime or progressDeadline also the Releases unavailable and " +
			"baking and when the stage started and its deadline), each Cluster's Release (the label " + v1.LabelReleaseSet +
			" finds them) with the revision it holds, its state, Ready condition and rollout and, when the set has " +
			"spec.clusterOverrides, the indexes of the overrides that select its Cluster (by the Cluster's labels), the " +
			"Clusters skipped with the reason, and what to do next when the rollout waits for approval, is paused or " +
			"is halted.\n\n--show-values (or -o wide) also prints the values each Cluster's overrides give it, merged in order, with " +
			"$(cluster.name) and $(cluster.labels['<key>']) replaced.\n\n-o yaml|json prints the ReleaseSet.",
		Example: "  kubectl convoy releaseset status podinfo -n team-a\n  kubectl convoy releaseset status podinfo -n team-a --show-values",
	}, o.completeReleaseSetNames, &output, func(ctx context.Context, ns, name string, c *Client) error {
		set, err := c.GetReleaseSet(ctx, ns, name)
		if err != nil {
			return err
		}
		return o.show(output, set, func() (string, error) {
			view := SetStatusView{ShowValues: showValues}
			// Without the right to list Releases (convoy-promote reads only ReleaseSets)
			// the status still shows everything the ReleaseSet says.
			view.Releases, view.ReleasesErr = c.ListSetReleases(ctx, ns, name)
			if view.ReleasesErr != nil && !apierrors.IsForbidden(view.ReleasesErr) {
				return "", view.ReleasesErr
			}
			// The Clusters' labels say which overrides select each; read only for a
			// set with overrides, and shown without them when they may not be listed.
			if len(set.Spec.ClusterOverrides) > 0 {
				list, err := c.ListClusters(ctx)
				if err != nil && !apierrors.IsForbidden(err) {
					return "", err
				}
				if list != nil {
					view.Clusters = list.Items
				}
				view.ClustersErr = err
			}
			return FormatReleaseSetStatus(set, view, o.Now(), o.Terminal(o.Streams.Out)), nil
		})
	})
	cmd.Flags().BoolVar(&showValues, "show-values", false, "also print the values each Cluster's spec.clusterOverrides give it, with $(cluster.name) and $(cluster.labels['<key>']) replaced")
	// -o wide is the text with --show-values, as kubectl's wide adds columns.
	cmd.Flags().Lookup("output").Usage = "output format: yaml or json, or wide (the text with --show-values) (default: text for people)"
	run := cmd.RunE
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if output == "wide" {
			output, showValues = "", true
		}
		return run(c, args)
	}
	return cmd
}

func newReleaseSetPromoteCommand(o *Options) *cobra.Command {
	var output string
	return o.named(&cobra.Command{
		Use:   "promote NAME",
		Short: "Approve the Manual stage that waits, or acknowledge a held mass removal (POST releasesets/NAME/promote)",
		Long: "Approve the stage of a ReleaseSet whose phase is WaitingForApproval: POST releasesets/NAME/promote records " +
			"the approval for the current revision, and the controller starts the stage. It needs its own permission, " +
			"create on releasesets/promote.\n\n" +
			"When the set is Halted with reason MassRemoval (more Releases would be deleted at once than " +
			"spec.strategy.maxRemovals allows), promote acknowledges the removal of exactly the Releases that " +
			"status.heldRemovals lists, and the controller deletes them; it approves nothing else in the same request.\n\n" +
			"The server refuses (409) when no stage waits for approval, or when the rollout is Halted because a Release " +
			"failed: promote does not override that halt; a new revision (a change to spec.template) starts over.",
		Example: "  kubectl convoy releaseset promote podinfo -n team-a",
	}, o.completeReleaseSetNames, &output, func(ctx context.Context, ns, name string, c *Client) error {
		set, err := c.Promote(ctx, ns, name)
		if err != nil {
			return err
		}
		return o.show(output, set, func() (string, error) { return PromotedLine(set) + "\n", nil })
	})
}

func newReleaseSetPauseCommand(o *Options, pause bool) *cobra.Command {
	var output string
	verb, done := "resume", "resumed"
	short := "Resume a paused ReleaseSet (spec.paused: false): the rollout goes on through the stages"
	long := "Set spec.paused of a ReleaseSet to false (a merge patch of the ReleaseSet). The controller goes back to " +
		"creating, updating and deleting its Releases: a template changed while the set was paused rolls out as a new " +
		"revision, stage by stage from the first, as usual."
	if pause {
		verb, done = "pause", "paused"
		short = "Pause a ReleaseSet (spec.paused: true): it creates, updates and deletes no Release until resumed"
		long = "Set spec.paused of a ReleaseSet to true (a merge patch of the ReleaseSet), to freeze a fleet in an " +
			"incident without touching its template. The controller still observes the Releases and writes the " +
			"status (Progressing=False, reason Paused) but creates, updates and deletes no Release, whatever changes: " +
			"the template, the selectors or the Clusters. kubectl convoy releaseset resume NAME undoes it."
	}
	return o.named(&cobra.Command{
		Use:     verb + " NAME",
		Short:   short,
		Long:    long + "\n\nIt needs patch on releasesets.",
		Example: "  kubectl convoy releaseset " + verb + " podinfo -n team-a",
	}, o.completeReleaseSetNames, &output, func(ctx context.Context, ns, name string, c *Client) error {
		patch := []byte(fmt.Sprintf(`{"spec":{"paused":%t}}`, pause))
		set, err := c.PatchReleaseSet(ctx, ns, name, patch)
		if err != nil {
			return err
		}
		return o.show(output, set, func() (string, error) {
			return fmt.Sprintf("releaseset.%s/%s %s\n", v1.GroupName, set.Name, done), nil
		})
	})
}

// PromotedLine says what /promote did: the removal it acknowledged (the set holds
// removals back), or else the approval it appended for the current revision (the
// last such entry of approvals).
func PromotedLine(s *v1.ReleaseSet) string {
	prefix := fmt.Sprintf("releaseset.%s/%s", v1.GroupName, s.Name)
	if ack := s.RemovalAcknowledgement; ack != nil && len(s.Status.HeldRemovals) > 0 {
		by := ""
		if ack.AcknowledgedBy != "" {
			by = " by " + ack.AcknowledgedBy
		}
		return fmt.Sprintf("%s promoted: removal of %d Releases acknowledged%s (%s)", prefix, len(ack.Releases), by,
			strings.Join(ack.Releases, ", "))
	}
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
