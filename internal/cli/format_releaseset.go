package cli

import (
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"

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

// SetStatusView is what releaseset status shows besides the ReleaseSet itself.
type SetStatusView struct {
	// Releases are the set's Releases; ReleasesErr says why they could not be
	// listed (they are then not shown).
	Releases    []v1.Release
	ReleasesErr error
	// Clusters are the Clusters (read only when the set has spec.clusterOverrides,
	// to find which overrides select each); ClustersErr says why they could not be
	// listed.
	Clusters    []v1.Cluster
	ClustersErr error
	// ShowValues: print the values each Cluster's overrides give it (--show-values).
	ShowValues bool
}

// FormatReleaseSetStatus is the text of releaseset status: the revision and the
// source it resolved, why the set is paused or halted, the conditions, the stages
// (with their unavailable and baking Releases and their deadline when the strategy
// sets them), each Cluster's Release (with the clusterOverrides that select its
// Cluster when the set has some, and their values with ShowValues) and the skipped
// Clusters, then what to do next when the rollout waits for a person.
func FormatReleaseSetStatus(s *v1.ReleaseSet, v SetStatusView, now time.Time, t Terminal) string {
	var b strings.Builder
	field := func(name, format string, args ...any) {
		fmt.Fprintf(&b, "%-17s %s\n", name+":", fmt.Sprintf(format, args...))
	}
	fmt.Fprintf(&b, "%s %s/%s\n", t.paint(ansiBold, "ReleaseSet"), s.Namespace, s.Name)
	field("Revision", "%s%s", orDash(s.Status.Revision), sourceText(s.Status.Source))
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
		field("Halted", "%s", haltedWhy(s, c.Reason, now))
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
		b.WriteString(stagesTable(s, now, t))
	}

	b.WriteString("Releases:\n")
	switch {
	case v.ReleasesErr != nil:
		fmt.Fprintf(&b, "  not shown: %v\n", v.ReleasesErr)
	case len(v.Releases) == 0:
		b.WriteString("  none yet: a stage's Releases are created when the stage starts\n")
	default:
		b.WriteString(releasesTable(s, v, t))
	}
	if len(s.Spec.ClusterOverrides) > 0 && v.ClustersErr != nil {
		fmt.Fprintf(&b, "  overrides not shown: %v\n", v.ClustersErr)
	}
	if v.ShowValues && v.ReleasesErr == nil && v.ClustersErr == nil && len(s.Spec.ClusterOverrides) > 0 && len(v.Releases) > 0 {
		b.WriteString(overrideValuesText(s, v))
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

// sourceText is " (chart 6.7.2, commit 0123456789ab, values 4f1c2d3e4f)": what the
// set resolved from its template for the revision; "" before it resolved anything.
func sourceText(src *v1.ReleaseSetSource) string {
	if src == nil {
		return ""
	}
	var parts []string
	if src.ChartVersion != "" {
		parts = append(parts, "chart "+src.ChartVersion)
	}
	if src.Commit != "" {
		parts = append(parts, "commit "+ShortCommit(src.Commit))
	}
	if src.ValuesDigest != "" {
		parts = append(parts, "values "+ShortRef(src.ValuesDigest))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// specStage is the stage of spec.strategy named name; nil for the implicit "rest".
func specStage(s *v1.ReleaseSet, name string) *v1.Stage {
	for i := range s.Spec.Strategy.Stages {
		if s.Spec.Strategy.Stages[i].Name == name {
			return &s.Spec.Strategy.Stages[i]
		}
	}
	return nil
}

// stagesTable is the Stages table. UNAVAILABLE, BAKING and STARTED are there only
// when the strategy sets maxUnavailable, bakeTime or progressDeadline (or the status
// has such figures), so a plain set reads as it always did.
func stagesTable(s *v1.ReleaseSet, now time.Time, t Terminal) string {
	var unavailable, baking, started bool
	for _, st := range s.Spec.Strategy.Stages {
		unavailable = unavailable || st.MaxUnavailable != nil
		baking = baking || st.BakeTime != nil
		started = started || st.ProgressDeadline != nil
	}
	for _, st := range s.Status.Stages {
		unavailable = unavailable || st.Unavailable > 0
		baking = baking || st.Baking > 0
		started = started || st.StartedAt != nil
	}
	header := []string{"  STAGE", "PHASE", "APPROVAL", "CLUSTERS", "UPDATED", "READY"}
	if unavailable {
		header = append(header, "UNAVAILABLE")
	}
	if baking {
		header = append(header, "BAKING")
	}
	if started {
		header = append(header, "STARTED")
	}
	rows := [][]string{}
	for _, st := range s.Status.Stages {
		spec := specStage(s, st.Name)
		if spec == nil {
			spec = &v1.Stage{}
		}
		row := []string{"  " + st.Name, t.status(string(st.Phase)), stageApproval(s, st.Name, now),
			fmt.Sprint(st.Clusters), fmt.Sprint(st.Updated), fmt.Sprint(st.Ready)}
		if unavailable {
			row = append(row, unavailableCell(st, spec.MaxUnavailable))
		}
		if baking {
			row = append(row, bakingCell(st, spec.BakeTime))
		}
		if started {
			row = append(row, StageTiming(st, spec.ProgressDeadline, now))
		}
		rows = append(rows, row)
	}
	return table(header, rows)
}

// unavailableCell is "1 (max 2)": the stage's Releases counted unavailable and how
// many maxUnavailable allows ("max 50% = 1" for a percentage, rounded down).
func unavailableCell(st v1.StageStatus, maxUnavailable *intstr.IntOrString) string {
	if maxUnavailable == nil {
		return fmt.Sprintf("%d (max 0)", st.Unavailable)
	}
	n, err := intstr.GetScaledValueFromIntOrPercent(maxUnavailable, int(st.Clusters), false)
	if err != nil {
		return fmt.Sprintf("%d (max %s: %v)", st.Unavailable, maxUnavailable.String(), err)
	}
	if maxUnavailable.Type == intstr.String {
		return fmt.Sprintf("%d (max %s = %d)", st.Unavailable, maxUnavailable.StrVal, n)
	}
	return fmt.Sprintf("%d (max %d)", st.Unavailable, n)
}

// bakingCell is "2 (bake 10m)": the stage's Releases Ready at the revision for less
// than bakeTime, and bakeTime.
func bakingCell(st v1.StageStatus, bakeTime *metav1.Duration) string {
	if bakeTime == nil {
		if st.Baking == 0 {
			return "-"
		}
		return fmt.Sprint(st.Baking)
	}
	return fmt.Sprintf("%d (bake %s)", st.Baking, shortDuration(bakeTime.Duration))
}

// StageTiming says when a stage started and, until it completes, how long its
// progressDeadline leaves: "5m ago, deadline in 3m12s", "20m ago, deadline
// passed", "12m ago, completed 2m ago", "-" before it started. The deadline is
// startedAt + progressDeadline, computed from the stored fields.
func StageTiming(st v1.StageStatus, progressDeadline *metav1.Duration, now time.Time) string {
	if st.StartedAt == nil {
		return "-"
	}
	out := ago(st.StartedAt, now)
	switch {
	case st.CompletedAt != nil:
		out += ", completed " + ago(st.CompletedAt, now)
	case progressDeadline != nil:
		left := st.StartedAt.Add(progressDeadline.Duration).Sub(now)
		if left <= 0 {
			out += ", deadline passed"
		} else {
			out += ", deadline in " + remaining(left)
		}
	}
	return out
}

// remaining is a time left as people count it down: 3m12s, 45s, 1h5m.
func remaining(d time.Duration) string {
	if d >= time.Hour {
		return shortDuration(d.Truncate(time.Minute))
	}
	if d < time.Second {
		return "1s"
	}
	return shortDuration(d.Truncate(time.Second))
}

// releasesTable is the Releases table: one row per Cluster's Release, with
// OVERRIDES (the indexes of the spec.clusterOverrides that select the Cluster)
// when the set has overrides.
func releasesTable(s *v1.ReleaseSet, v SetStatusView, t Terminal) string {
	withOverrides := len(s.Spec.ClusterOverrides) > 0
	header := []string{"  CLUSTER", "RELEASE", "REVISION", "STATE", "READY", "ROLLOUT"}
	if withOverrides {
		header = append(header, "OVERRIDES")
	}
	header = append(header, "MESSAGE")
	rows := [][]string{}
	for i := range v.Releases {
		r := &v.Releases[i]
		row := []string{"  " + clusterName(r.Spec.Cluster), r.Name, releaseRevision(r, s.Status.Revision),
			t.status(SetReleaseState(r, s.Status.Revision)), conditionCell(r, v1.ConditionReady, t), rolloutCell(r, t)}
		if withOverrides {
			row = append(row, overridesCell(s, v, r.Spec.Cluster))
		}
		rows = append(rows, append(row, releaseMessage(r)))
	}
	return table(header, rows)
}

// clusterOf is the Cluster name among v.Clusters; nil when it is not there.
func clusterOf(v SetStatusView, name string) *v1.Cluster {
	for i := range v.Clusters {
		if v.Clusters[i].Name == name {
			return &v.Clusters[i]
		}
	}
	return nil
}

// overridesCell is "0,2" (the overrides that select the Cluster), "none", or why
// it is not known.
func overridesCell(s *v1.ReleaseSet, v SetStatusView, cluster string) string {
	if v.ClustersErr != nil {
		return "?"
	}
	c := clusterOf(v, cluster)
	if c == nil {
		return "? (Cluster not found)"
	}
	idx, err := OverridesFor(s, c.Labels)
	if err != nil {
		return "? (" + err.Error() + ")"
	}
	return indexList(idx)
}

func indexList(idx []int) string {
	if len(idx) == 0 {
		return "none"
	}
	parts := make([]string, len(idx))
	for i, n := range idx {
		parts[i] = fmt.Sprint(n)
	}
	return strings.Join(parts, ",")
}

// overrideValuesText is the section of --show-values: per Cluster of a Release,
// the values its overrides give it, merged in order, with $(cluster.name) and
// $(cluster.labels['<key>']) replaced (over the template's values, which it does not
// repeat).
func overrideValuesText(s *v1.ReleaseSet, v SetStatusView) string {
	var b strings.Builder
	b.WriteString("Override values (spec.clusterOverrides merged over spec.template.spec.values, per Cluster):\n")
	seen := map[string]bool{}
	for i := range v.Releases {
		name := v.Releases[i].Spec.Cluster
		if seen[name] {
			continue
		}
		seen[name] = true
		c := clusterOf(v, name)
		if c == nil {
			fmt.Fprintf(&b, "  %s: not known (no such Cluster)\n", clusterName(name))
			continue
		}
		idx, err := OverridesFor(s, c.Labels)
		if err == nil && len(idx) == 0 {
			fmt.Fprintf(&b, "  %s: no override selects it\n", clusterName(name))
			continue
		}
		var vals map[string]any
		if err == nil {
			vals, err = OverrideValues(s, idx, c.Name, c.Labels)
		}
		if err != nil {
			fmt.Fprintf(&b, "  %s: %v\n", clusterName(name), err)
			continue
		}
		fmt.Fprintf(&b, "  %s (overrides %s):\n", clusterName(name), indexList(idx))
		out, err := yaml.Marshal(vals)
		if err != nil {
			fmt.Fprintf(&b, "    %v\n", err)
			continue
		}
		for _, line := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
			b.WriteString("    " + line + "\n")
		}
	}
	return b.String()
}

// haltedWhy says in a few words why a set is halted, by the Halted reason.
func haltedWhy(s *v1.ReleaseSet, reason string, now time.Time) string {
	switch reason {
	case v1.ReasonMassRemoval:
		return "MassRemoval: more Releases would be deleted at once than spec.strategy.maxRemovals allows; nothing is written"
	case v1.ReasonReleaseFailed:
		return "ReleaseFailed: a Release failed at the revision (its rollout ended Failed or RolledBack, or it cannot be applied); no other Release gets it"
	case v1.ReasonStageDeadlineExceeded:
		if st, pd := overdueStage(s, now); st != nil {
			return fmt.Sprintf("StageDeadlineExceeded: stage %s started %s and did not complete within its progressDeadline %s; no other Release gets the revision",
				st.Name, ago(st.StartedAt, now), shortDuration(pd.Duration))
		}
		return "StageDeadlineExceeded: a stage did not complete within its progressDeadline; no other Release gets the revision"
	default:
		return reason
	}
}

// overdueStage is the first stage not complete whose progressDeadline passed, with
// the deadline; nil when none.
func overdueStage(s *v1.ReleaseSet, now time.Time) (*v1.StageStatus, *metav1.Duration) {
	for i := range s.Status.Stages {
		st := &s.Status.Stages[i]
		spec := specStage(s, st.Name)
		if st.StartedAt == nil || st.CompletedAt != nil || spec == nil || spec.ProgressDeadline == nil {
			continue
		}
		if !st.StartedAt.Add(spec.ProgressDeadline.Duration).After(now) {
			return st, spec.ProgressDeadline
		}
	}
	return nil, nil
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
		if c.Reason == v1.ReasonStageDeadlineExceeded {
			return "the rollout is halted and promote does not resume it: see why the stage's Releases are not Ready (above), fix that, " +
				"then change spec.template or spec.clusterOverrides (a new revision starts over)"
		}
		return "the rollout is halted and promote does not resume it: fix what failed, then change spec.template or spec.clusterOverrides (a new revision starts over)"
	}
	for _, st := range s.Status.Stages {
		if st.Phase == v1.StageWaitingForApproval {
			return fmt.Sprintf("stage %s waits for approval: kubectl convoy releaseset promote %s -n %s", st.Name, s.Name, s.Namespace)
		}
	}
	return ""
}
