package cli

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// hostCluster is how tables show an empty spec.cluster.
const hostCluster = "(host)"

// FormatReleaseList is the table of release list: NAMESPACE (with -A), NAME, CLUSTER,
// WAVE, MODE, APPLIED (reason), HEALTHY, RENDER (short), AGE.
func FormatReleaseList(items []v1.Release, allNamespaces bool, now time.Time, t Terminal) string {
	header := []string{"NAME", "CLUSTER", "WAVE", "MODE", "APPLIED", "HEALTHY", "RENDER", "AGE"}
	if allNamespaces {
		header = append([]string{"NAMESPACE"}, header...)
	}
	rows := make([][]string, 0, len(items))
	for i := range items {
		r := &items[i]
		render := ""
		if r.Status.Render != nil {
			render = r.Status.Render.Ref
		}
		row := []string{
			r.Name,
			clusterName(r.Spec.Cluster),
			fmt.Sprint(r.Spec.ClusterWave),
			mode(r),
			conditionCell(r, v1.ConditionApplied, t),
			conditionCell(r, v1.ConditionHealthy, t),
			ShortRef(render),
			age(&r.CreationTimestamp, now),
		}
		if allNamespaces {
			row = append([]string{r.Namespace}, row...)
		}
		rows = append(rows, row)
	}
	if len(rows) == 0 {
		return ""
	}
	return table(header, rows)
}

func clusterName(c string) string {
	if c == "" {
		return hostCluster
	}
	return c
}

// mode is Automatic or Manual (spec.syncPolicy.automatic, unset: Manual).
func mode(r *v1.Release) string {
	if a := r.Spec.SyncPolicy.Automatic; a != nil && *a {
		return "Automatic"
	}
	return "Manual"
}

// conditionCell is "True", or "False (Reason)"; "-" when the condition is missing.
func conditionCell(r *v1.Release, typ string, t Terminal) string {
	c := meta.FindStatusCondition(r.Status.Conditions, typ)
	if c == nil {
		return "-"
	}
	s := t.status(string(c.Status))
	if c.Status != metav1.ConditionTrue && c.Reason != "" {
		s += " (" + c.Reason + ")"
	}
	return s
}

// FormatReleaseStatus is the text of release status: conditions, renders, pending
// requests, rollout, sync wave, hooks, drift and when convoy looks again. inv may be
// nil (no inventory yet, or not readable).
func FormatReleaseStatus(r *v1.Release, inv *v1.ReleaseInventory, now time.Time, t Terminal) string {
	var b strings.Builder
	field := func(name, format string, args ...any) {
		fmt.Fprintf(&b, "%-17s %s\n", name+":", fmt.Sprintf(format, args...))
	}
	fmt.Fprintf(&b, "%s %s/%s\n", t.paint(ansiBold, "Release"), r.Namespace, r.Name)
	field("Cluster", "%s, cluster wave %d", clusterName(r.Spec.Cluster), r.Spec.ClusterWave)
	if g := r.Spec.Chart.Git; g != nil {
		field("Chart", "%s of %s at %s", orDot(g.Path), g.URL, gitRefString(g.Ref))
	} else {
		chart := r.Spec.Chart.Name
		if r.Spec.Chart.Version != "" {
			chart += " " + r.Spec.Chart.Version
		}
		field("Chart", "%s from %s", chart, r.Spec.Chart.Repository)
	}
	field("Mode", "%s", modeSentence(r))
	if r.Status.ObservedGeneration != r.Generation {
		field("Generation", "%d, status describes %d (the controller has not seen the latest spec yet)", r.Generation, r.Status.ObservedGeneration)
	}

	writeConditions(&b, r, now, t)
	writeRenders(&b, field, r, now)
	field("Sync request", "%s", requestLine(r.Annotations[v1.AnnotationSyncRequestedAt], r.Status.LastHandledSyncAt, mode(r) == "Automatic"))
	if v := r.Annotations[v1.AnnotationSyncForceRequestedAt]; v != "" {
		field("Force request", "%s", requestLine(v, r.Status.LastHandledForceSyncAt, false))
	}
	if ro := r.Status.Rollout; ro != nil {
		field("Rollout", "%s", rolloutLine(ro, now, t))
	}
	if sw := r.Status.SyncWave; sw != nil {
		field("Sync wave", "%d/%d", sw.Current, sw.Total)
	}
	writeHooks(&b, field, r.Status.Hooks, t)
	if inv != nil {
		writeInventory(&b, field, inv, now, t)
	}
	field("Next reconcile", "%s", nextReconcile(r))
	return b.String()
}

// writeConditions writes the Applied, Healthy and Ready conditions as a table.
func writeConditions(b *strings.Builder, r *v1.Release, now time.Time, t Terminal) {
	b.WriteString("Conditions:\n")
	if len(r.Status.Conditions) == 0 {
		b.WriteString("  none yet: the controller has not reconciled this Release\n")
		return
	}
	rows := [][]string{}
	for _, typ := range []string{v1.ConditionApplied, v1.ConditionHealthy, v1.ConditionReady} {
		c := meta.FindStatusCondition(r.Status.Conditions, typ)
		if c == nil {
			continue
		}
		rows = append(rows, []string{"  " + c.Type, t.status(string(c.Status)), orDash(c.Reason), age(&c.LastTransitionTime, now), orDash(c.Message)})
	}
	b.WriteString(table([]string{"  TYPE", "STATUS", "REASON", "SINCE", "MESSAGE"}, rows))
}

// writeRenders writes the current render, the last successful one and the pin.
func writeRenders(b *strings.Builder, field func(string, string, ...any), r *v1.Release, now time.Time) {
	current, last := "", ""
	if rs := r.Status.Render; rs != nil {
		current = rs.Ref
		field("Current render", "%s chart %s%s, rendered %s", rs.Ref, orDash(rs.ChartVersion), atCommit(rs.Commit), ago(rs.RenderedAt, now))
	} else {
		field("Current render", "none yet")
	}
	if ls := r.Status.LastSuccessful; ls != nil {
		last = ls.RenderRef
		same := ""
		if ls.RenderRef == current {
			same = " (the current render)"
		}
		field("Last successful", "%s chart %s%s, applied %s%s", ls.RenderRef, orDash(ls.ChartVersion), atCommit(ls.Commit), ago(ls.AppliedAt, now), same)
	} else {
		field("Last successful", "none: nothing applied yet")
	}
	if current != "" && last != "" && current != last {
		b.WriteString("                  the current render differs from the last successful one\n")
	}
	if p := r.Pin; p != nil {
		field("Pin", "%s (%s), pinned %s", orDash(p.RenderRef), orDash(p.Reason), ago(p.PinnedAt, now))
	}
}

// rolloutLine is the Rollout line: phase, render, previous render, deadline, message.
func rolloutLine(ro *v1.RolloutStatus, now time.Time, t Terminal) string {
	line := fmt.Sprintf("%s %s", t.status(string(ro.Phase)), ShortRef(ro.RenderRef))
	if ro.PreviousRenderRef != "" {
		line += ", previous " + ShortRef(ro.PreviousRenderRef)
	}
	if ro.Phase == v1.RolloutProgressing && ro.Deadline != nil {
		line += ", deadline " + ago(ro.Deadline, now)
	}
	if ro.Message != "" {
		line += ": " + ro.Message
	}
	return line
}

// writeHooks writes one line a hook of the running batch, the first one named Hooks.
func writeHooks(b *strings.Builder, field func(string, string, ...any), hooks []v1.HookStatus, t Terminal) {
	for i, h := range hooks {
		line := fmt.Sprintf("%s (batch %d): %s", h.Name, h.Batch, t.status(string(h.Phase)))
		if h.Job != "" {
			line += ", job " + h.Job
		}
		if h.Message != "" {
			line += ": " + h.Message
		}
		if i == 0 {
			field("Hooks", "%s", line)
		} else {
			fmt.Fprintf(b, "%-17s %s\n", "", line)
		}
	}
}

func modeSentence(r *v1.Release) string {
	s := "manual: convoy applies only after a /sync request"
	if mode(r) == "Automatic" {
		s = "automatic: convoy applies at every reconcile"
	}
	if iv := r.Spec.SyncPolicy.Interval; iv != nil && iv.Duration > 0 {
		s += ", interval " + shortDuration(iv.Duration)
	}
	return s
}

// requestLine says whether a sync annotation is still pending.
func requestLine(value string, handled *metav1.Time, automatic bool) string {
	if value == "" {
		return "none"
	}
	at, err := v1.ParseSyncTime(value)
	if err != nil {
		return fmt.Sprintf("%s (invalid, ignored by convoy)", value)
	}
	switch {
	case automatic:
		return value + " (automatic mode: a request only starts a reconcile)"
	case handled != nil && !handled.UTC().Truncate(time.Second).Before(at):
		return value + " (handled)"
	default:
		return value + " (pending)"
	}
}

// writeInventory writes the observer's health, waves and drift.
func writeInventory(b *strings.Builder, field func(string, string, ...any), inv *v1.ReleaseInventory, now time.Time, t Terminal) {
	st := inv.Status
	if st.Health != "" {
		line := fmt.Sprintf("%s (%d objects of %s, assessed %s)", t.status(string(st.Health)), len(inv.Objects), ShortRef(st.RenderRef), ago(st.AssessedAt, now))
		field("Health", "%s", line)
		for _, o := range st.Objects {
			if o.Health == v1.HealthHealthy {
				continue
			}
			fmt.Fprintf(b, "%-17s %s %s: %s\n", "", describe(o.ObjectReference), t.status(string(o.Health)), o.Message)
		}
	}
	if len(st.Waves) > 0 {
		parts := make([]string, 0, len(st.Waves))
		for _, w := range st.Waves {
			parts = append(parts, fmt.Sprintf("%d %s", w.Wave, t.status(string(w.Health))))
		}
		field("Wave health", "%s", strings.Join(parts, ", "))
	}
	switch d := st.Drift; {
	case d == nil:
	case len(d.Drifted) == 0:
		field("Drift", "none (checked, since %s)", ago(d.Since, now))
	default:
		field("Drift", "%d object(s) differ from the render since %s", len(d.Drifted), ago(d.Since, now))
		for _, o := range d.Drifted {
			fmt.Fprintf(b, "%-17s %s: %s\n", "", describe(o.ObjectReference), strings.Join(o.Fields, ", "))
		}
	}
}

// describe names an object: Kind namespace/name.
func describe(o v1.ObjectReference) string {
	if o.Namespace == "" {
		return o.Kind + " " + o.Name
	}
	return o.Kind + " " + o.Namespace + "/" + o.Name
}

// nextReconcile says when convoy looks at the Release again, from its reason and
// interval (the retry count lives in the controller's memory, so only the kind of
// retry can be told).
func nextReconcile(r *v1.Release) string {
	interval := "on a change or the informer resync (no interval)"
	if iv := r.Spec.SyncPolicy.Interval; iv != nil && iv.Duration > 0 {
		interval = "every " + shortDuration(iv.Duration) + " (interval), and on a change"
	}
	c := meta.FindStatusCondition(r.Status.Conditions, v1.ConditionApplied)
	if c == nil || c.Status == metav1.ConditionTrue {
		return interval
	}
	switch c.Reason {
	case v1.ReasonSourceNotReady, v1.ReasonValuesNotReady, v1.ReasonClusterNotReady, v1.ReasonDeployFailed, v1.ReasonPruneFailed:
		if rb := r.Spec.SyncPolicy.RetryBackoff; rb != nil && rb.Initial != nil {
			return fmt.Sprintf("retry with backoff (%s initial) after the transient failure %s", shortDuration(rb.Initial.Duration), c.Reason)
		}
		return "retry with the default backoff (5ms doubling up to 1000s) after the transient failure " + c.Reason
	default:
		return interval
	}
}

// FormatHistory is the table of release history: the Renders, newest first, with
// which is current, last successful, pinned, rolled out or rolled back; with a
// COMMIT column when a Render's chart came from Git, and a VERIFIED column when a
// Render's chart was verified (its provider and the signer's key or identity).
func FormatHistory(r *v1.Release, renders []v1.Render, now time.Time, t Terminal) string {
	withCommit := slices.ContainsFunc(renders, func(rd v1.Render) bool { return rd.Chart.Commit != "" })
	withVerified := slices.ContainsFunc(renders, func(rd v1.Render) bool { return rd.Annotations[v1.AnnotationVerified] != "" })
	rows := make([][]string, 0, len(renders))
	for _, rd := range renders {
		row := []string{ShortRef(rd.RenderRef), rd.Chart.Name + " " + orDash(rd.Chart.Version)}
		if withCommit {
			row = append(row, orDash(ShortCommit(rd.Chart.Commit)))
		}
		if withVerified {
			row = append(row, orDash(verifiedBy(rd.Annotations[v1.AnnotationVerified])))
		}
		rows = append(rows, append(row,
			fmt.Sprint(rd.ObjectCount),
			age(&rd.CreationTimestamp, now),
			strings.Join(renderMarks(r, rd.RenderRef, t), ", "),
		))
	}
	if len(rows) == 0 {
		return ""
	}
	header := []string{"RENDER", "CHART"}
	if withCommit {
		header = append(header, "COMMIT")
	}
	if withVerified {
		header = append(header, "VERIFIED")
	}
	return table(append(header, "OBJECTS", "CREATED", "STATE"), rows)
}

// verifiedBy names what verified a render's chart, from a Render's
// AnnotationVerified: "helm 3F1C8A2B9D0E4F67" (the key's fingerprint, shortened to
// 16 hex digits) or "cosign ci@example.com"; "" when it records nothing.
func verifiedBy(annotation string) string {
	var v v1.VerifiedStatus
	if annotation == "" || json.Unmarshal([]byte(annotation), &v) != nil || v.Provider == "" {
		return ""
	}
	id := v.Identity
	if len(id) > 16 && strings.Trim(strings.ToUpper(id), "0123456789ABCDEF") == "" {
		id = id[:16]
	}
	return strings.TrimSpace(v.Provider + " " + id)
}

// gitRefString names a Git ref for people: "branch main", "tag v1", "semver ^1",
// "commit 0123456789ab".
func gitRefString(ref v1.GitRef) string {
	switch {
	case ref.Branch != "":
		return "branch " + ref.Branch
	case ref.Tag != "":
		return "tag " + ref.Tag
	case ref.Semver != "":
		return "semver " + ref.Semver
	default:
		return "commit " + ShortCommit(ref.Commit)
	}
}

func orDot(path string) string {
	if path == "" {
		return "."
	}
	return path
}

// ShortCommit is the first 12 hex digits of a Git commit hash.
func ShortCommit(commit string) string {
	if len(commit) > 12 {
		return commit[:12]
	}
	return commit
}

// atCommit is " at commit <short>" for a chart from Git, "" otherwise.
func atCommit(commit string) string {
	if commit == "" {
		return ""
	}
	return " at commit " + ShortCommit(commit)
}

// renderMarks are the roles of a render ref in a Release.
func renderMarks(r *v1.Release, ref string, t Terminal) []string {
	var marks []string
	if rs := r.Status.Render; rs != nil && rs.Ref == ref {
		marks = append(marks, t.paint(ansiBold, "current"))
	}
	if ls := r.Status.LastSuccessful; ls != nil && ls.RenderRef == ref {
		marks = append(marks, t.paint(ansiGreen, "last successful"))
	}
	if p := r.Pin; p != nil && p.RenderRef == ref {
		marks = append(marks, t.paint(ansiYellow, "pinned"))
	}
	if ro := r.Status.Rollout; ro != nil {
		switch {
		case ro.RenderRef == ref && ro.Phase == v1.RolloutRolledBack:
			marks = append(marks, t.paint(ansiRed, "rolled back"))
		case ro.RenderRef == ref && ro.Phase == v1.RolloutFailed:
			marks = append(marks, t.paint(ansiRed, "rollout failed"))
		case ro.RenderRef == ref && ro.Phase == v1.RolloutProgressing:
			marks = append(marks, "rolling out")
		}
	}
	if len(marks) == 0 {
		marks = append(marks, "-")
	}
	return marks
}
