package cli

import (
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// FormatReleaseSetList is the table of releaseset list: NAMESPACE (with -A), NAME,
// REVISION (short), STAGE (where the rollout stands), READY (Releases Ready at the
// revision / Clusters), AGE. REVISION, STAGE and READY say what `kubectl get
// releasesets` says.
func FormatReleaseSetList(items []v1.ReleaseSet, allNamespaces bool, now time.Time, t Terminal) string {
	header := []string{"NAME", "REVISION", "STAGE", "READY", "AGE"}
	if allNamespaces {
		header = append([]string{"NAMESPACE"}, header...)
	}
	rows := make([][]string, 0, len(items))
	for i := range items {
		s := &items[i]
		stage := "-"
		if name, phase := RolloutStage(s.Status); phase == v1.StageComplete && name == "" {
			stage = t.status(string(phase))
		} else if name != "" {
			stage = name + " (" + t.status(string(phase)) + ")"
		}
		ready := "-"
		if len(s.Status.Stages) > 0 {
			r, c := setReady(s.Status)
			ready = fmt.Sprintf("%d/%d", r, c)
		}
		row := []string{s.Name, ShortRef(s.Status.Revision), stage, ready, age(&s.CreationTimestamp, now)}
		if allNamespaces {
			row = append([]string{s.Namespace}, row...)
		}
		rows = append(rows, row)
	}
	if len(rows) == 0 {
		return ""
	}
	return table(header, rows)
}

// RolloutStage is where the rollout of the revision stands: the first stage that
// is not Complete, with its phase; phase Complete and no name when every stage is;
// nothing before the controller wrote stages. (Stages complete in order, so a
// Halted stage is the first that is not Complete.)
func RolloutStage(st v1.ReleaseSetStatus) (string, v1.StagePhase) {
	for _, s := range st.Stages {
		if s.Phase != v1.StageComplete {
			return s.Name, s.Phase
		}
	}
	if len(st.Stages) > 0 {
		return "", v1.StageComplete
	}
	return "", ""
}

// setReady is the number of Releases Ready at the revision and of Clusters, over
// every stage.
func setReady(st v1.ReleaseSetStatus) (ready, clusters int32) {
	for _, s := range st.Stages {
		ready += s.Ready
		clusters += s.Clusters
	}
	return ready, clusters
}

// SetReleaseState is where a Release of a ReleaseSet stands at the set's revision,
// in the words of the contract between the set and its Releases: Failed (updated,
// observed, its rollout of the current render Failed or RolledBack), Ready (updated,
// observed, Ready True), Updating (updated, not Ready yet) or Outdated (it holds an
// earlier revision).
func SetReleaseState(r *v1.Release, revision string) string {
	if revision == "" || r.Annotations[v1.AnnotationReleaseSetRevision] != revision {
		return "Outdated"
	}
	if r.Generation != r.Status.ObservedGeneration {
		return "Updating"
	}
	if ro := r.Status.Rollout; ro != nil && (ro.Phase == v1.RolloutFailed || ro.Phase == v1.RolloutRolledBack) &&
		r.Status.Render != nil && ro.RenderRef == r.Status.Render.Ref {
		return "Failed"
	}
	if meta.IsStatusConditionTrue(r.Status.Conditions, v1.ConditionReady) {
		return "Ready"
	}
	return "Updating"
}

// stageApproval says how a stage starts: Automatic, Manual, or Manual and approved
// at the revision (by whom, when).
func stageApproval(s *v1.ReleaseSet, stage string, now time.Time) string {
	mode := v1.ApprovalAutomatic
	for _, st := range s.Spec.Strategy.Stages {
		if st.Name == stage && st.Approval != "" {
			mode = st.Approval
		}
	}
	if mode != v1.ApprovalManual {
		return string(mode)
	}
	for _, a := range s.Approvals {
		if a.Stage == stage && a.Revision == s.Status.Revision && s.Status.Revision != "" {
			by := ""
			if a.ApprovedBy != "" {
				by = " by " + a.ApprovedBy
			}
			return fmt.Sprintf("Manual, approved%s %s", by, ago(a.ApprovedAt, now))
		}
	}
	return "Manual"
}

// FormatReleaseSetStatus is the text of releaseset status: the revision, the
// conditions, the stages, each Cluster's Release and the skipped Clusters, then
// what to do next when the rollout waits for a person. releasesErr says why the
// Releases could not be listed (they are then not shown); nil when they were.
func FormatReleaseSetStatus(s *v1.ReleaseSet, releases []v1.Release, releasesErr error, now time.Time, t Terminal) string {
	var b strings.Builder
	field := func(name, format string, args ...any) {
		fmt.Fprintf(&b, "%-17s %s\n", name+":", fmt.Sprintf(format, args...))
	}
	fmt.Fprintf(&b, "%s %s/%s\n", t.paint(ansiBold, "ReleaseSet"), s.Namespace, s.Name)
	field("Revision", "%s", orDash(s.Status.Revision))
	sel := "none (an empty selector selects no Cluster)"
	if cs := s.Spec.ClusterSelector; cs != nil && (len(cs.MatchLabels) > 0 || len(cs.MatchExpressions) > 0) {
		sel = metav1.FormatLabelSelector(cs)
	}
	field("Clusters", "%s", sel)
	ch := s.Spec.Template.Spec.Chart
	chart := ch.Name
	if ch.Version != "" {
		chart += " " + ch.Version
	}
	field("Chart", "%s from %s", chart, ch.Repository)
	if s.Spec.Paused {
		field("Paused", "yes: no Release is created, updated or deleted until kubectl convoy releaseset resume %s -n %s", s.Name, s.Namespace)
	}
	if c := meta.FindStatusCondition(s.Status.Conditions, v1.ConditionHalted); c != nil && c.Status == metav1.ConditionTrue {
		field("Halted", "%s", haltedWhy(c.Reason))
	}
	if len(s.Status.HeldRemovals) > 0 {
		field("Held removals", "%s", strings.Join(s.Status.HeldRemovals, ", "))
	}
	if s.Status.ObservedGeneration != s.Generation {
		field("Generation", "%d, status describes %d (the controller has not seen the latest spec yet)", s.Generation, s.Status.ObservedGeneration)
	}

	b.WriteString("Conditions:\n")
	if len(s.Status.Conditions) == 0 {
		b.WriteString("  none yet: the controller has not reconciled this ReleaseSet\n")
	} else {
		rows := [][]string{}
		for _, typ := range []string{v1.ConditionReady, v1.ConditionProgressing, v1.ConditionHalted} {
			c := meta.FindStatusCondition(s.Status.Conditions, typ)
			if c == nil {
				continue
			}
			rows = append(rows, []string{"  " + c.Type, t.status(string(c.Status)), orDash(c.Reason), age(&c.LastTransitionTime, now), orDash(c.Message)})
		}
		b.WriteString(table([]string{"  TYPE", "STATUS", "REASON", "SINCE", "MESSAGE"}, rows))
	}

	b.WriteString("Stages:\n")
	if len(s.Status.Stages) == 0 {
		b.WriteString("  none yet\n")
	} else {
		rows := [][]string{}
		for _, st := range s.Status.Stages {
			rows = append(rows, []string{"  " + st.Name, t.status(string(st.Phase)), stageApproval(s, st.Name, now),
				fmt.Sprint(st.Clusters), fmt.Sprint(st.Updated), fmt.Sprint(st.Ready)})
		}
		b.WriteString(table([]string{"  STAGE", "PHASE", "APPROVAL", "CLUSTERS", "UPDATED", "READY"}, rows))
	}

	b.WriteString("Releases:\n")
	switch {
	case releasesErr != nil:
		fmt.Fprintf(&b, "  not shown: %v\n", releasesErr)
	case len(releases) == 0:
		b.WriteString("  none yet: a stage's Releases are created when the stage starts\n")
	default:
		rows := [][]string{}
		for i := range releases {
			r := &releases[i]
			rows = append(rows, []string{"  " + clusterName(r.Spec.Cluster), r.Name, releaseRevision(r, s.Status.Revision),
				t.status(SetReleaseState(r, s.Status.Revision)), conditionCell(r, v1.ConditionReady, t), rolloutCell(r, t), releaseMessage(r)})
		}
		b.WriteString(table([]string{"  CLUSTER", "RELEASE", "REVISION", "STATE", "READY", "ROLLOUT", "MESSAGE"}, rows))
	}

	if len(s.Status.Skipped) > 0 {
		b.WriteString("Skipped Clusters:\n")
		rows := [][]string{}
		for _, sk := range s.Status.Skipped {
			rows = append(rows, []string{"  " + sk.Name, orDash(sk.Reason), orDash(sk.Message)})
		}
		b.WriteString(table([]string{"  CLUSTER", "REASON", "MESSAGE"}, rows))
	}
	if next := nextStep(s); next != "" {
		field("Next", "%s", next)
	}
	return b.String()
}

// releaseRevision is the revision a Release holds, and whether it is the set's.
func releaseRevision(r *v1.Release, revision string) string {
	rev := r.Annotations[v1.AnnotationReleaseSetRevision]
	switch {
	case rev == "":
		return "-"
	case rev == revision:
		return ShortRef(rev) + " (updated)"
	default:
		return ShortRef(rev) + " (not updated)"
	}
}

func rolloutCell(r *v1.Release, t Terminal) string {
	if r.Status.Rollout == nil {
		return "-"
	}
	return t.status(string(r.Status.Rollout.Phase))
}

// releaseMessage is why a Release is not Ready (its Ready message), or its
// rollout's message.
func releaseMessage(r *v1.Release) string {
	if c := meta.FindStatusCondition(r.Status.Conditions, v1.ConditionReady); c != nil && c.Status != metav1.ConditionTrue && c.Message != "" {
		return c.Message
	}
	if ro := r.Status.Rollout; ro != nil && ro.Phase != v1.RolloutSucceeded && ro.Message != "" {
		return ro.Message
	}
	return "-"
}

// haltedWhy says in a few words why a set is halted, by the Halted reason.
func haltedWhy(reason string) string {
	switch reason {
	case v1.ReasonMassRemoval:
		return "MassRemoval: more Releases would be deleted at once than spec.strategy.maxRemovals allows; nothing is written"
	case v1.ReasonReleaseFailed:
		return "ReleaseFailed: a Release failed at the revision; no other Release gets it"
	default:
		return reason
	}
}

// nextStep says what a person can do when the rollout waits for one.
func nextStep(s *v1.ReleaseSet) string {
	if len(s.Status.HeldRemovals) > 0 {
		return fmt.Sprintf("%d Releases are held back: if the clusterSelector or the Clusters' labels are wrong, fix them; "+
			"if the removal is meant, acknowledge it: kubectl convoy releaseset promote %s -n %s", len(s.Status.HeldRemovals), s.Name, s.Namespace)
	}
	if s.Spec.Paused {
		return fmt.Sprintf("the ReleaseSet is paused: kubectl convoy releaseset resume %s -n %s", s.Name, s.Namespace)
	}
	if c := meta.FindStatusCondition(s.Status.Conditions, v1.ConditionHalted); c != nil && c.Status == metav1.ConditionTrue {
		return "the rollout is halted and promote does not resume it: fix what failed, then change spec.template (a new revision starts over)"
	}
	for _, st := range s.Status.Stages {
		if st.Phase == v1.StageWaitingForApproval {
			return fmt.Sprintf("stage %s waits for approval: kubectl convoy releaseset promote %s -n %s", st.Name, s.Name, s.Namespace)
		}
	}
	return ""
}
