package controller

import (
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/policy"
)

// newStatus computes the Release's status after a reconcile from the status it read,
// what the reconcile observed (st) and applied (ap) and the outcome. It is a pure function: equal
// inputs give an equal status, so a steady Release gives back the status it had and
// no write is made. Every time field says when something changed; none is rewritten
// by a reconcile that found nothing new.
func newStatus(rel *v1.Release, st *state, ap applied, out policy.Outcome) v1.ReleaseStatus {
	s := *rel.Status.DeepCopy()
	now := st.now
	s.ObservedGeneration = rel.Generation
	for _, c := range []policy.Condition{out.Applied, out.Healthy, out.Ready} {
		setCondition(&s.Conditions, c, rel.Generation, now)
	}
	if st.renderStatus != nil {
		s.Render = st.renderStatus
	}
	if ref := out.Status.LastSuccessfulRender; ref != "" {
		switch {
		case s.LastSuccessful == nil || s.LastSuccessful.RenderRef != ref:
			s.LastSuccessful = &v1.LastSuccessful{RenderRef: ref, ChartVersion: ap.chart.Version, Commit: ap.chart.Commit, AppliedAt: timestamp(now)}
		case ap.chart.Version != "":
			// Another chart version (or commit) may render the same objects: the
			// render (and appliedAt) stay, the version and commit follow the chart.
			s.LastSuccessful.ChartVersion, s.LastSuccessful.Commit = ap.chart.Version, ap.chart.Commit
		}
	}
	if t := out.Status.LastHandledSyncAt; t != nil {
		s.LastHandledSyncAt = &metav1.Time{Time: *t}
	}
	if t := out.Status.LastHandledForceSyncAt; t != nil {
		s.LastHandledForceSyncAt = &metav1.Time{Time: *t}
	}
	if ro := out.Status.Rollout; ro != nil {
		s.Rollout = &v1.RolloutStatus{
			Phase:             v1.RolloutProgressing,
			RenderRef:         ro.RenderRef,
			PreviousRenderRef: ro.PreviousRenderRef,
			StartedAt:         timestamp(ro.StartedAt),
			Deadline:          timestamp(ro.Deadline),
		}
	}
	if p := out.Status.RolloutPhase; p != nil && s.Rollout != nil {
		// Of the rollout status.rollout holds, or of the new one, which ended at once.
		s.Rollout.Phase, s.Rollout.Message = v1.RolloutPhase(p.Phase), p.Message
	}
	if ap.syncWave.set {
		s.SyncWave = ap.syncWave.to
	}
	if ap.hooks.set {
		s.Hooks = ap.hooks.to
	}
	if out.Status.HooksForcedDone {
		s.Hooks = unforced(s.Hooks)
	}
	return s
}

// unforced is hooks without the forced mark (status.hooks[].forced): the forced
// sync's apply that the batches carried on has begun.
func unforced(hooks []v1.HookStatus) []v1.HookStatus {
	for i := range hooks {
		hooks[i].Forced = false
	}
	return hooks
}

// setCondition sets c on conditions: lastTransitionTime changes only when the status
// does, so a condition that stays as it was is not rewritten.
func setCondition(conditions *[]metav1.Condition, c policy.Condition, generation int64, now time.Time) {
	apimeta.SetStatusCondition(conditions, metav1.Condition{
		Type:               c.Type,
		Status:             metav1.ConditionStatus(c.Status),
		Reason:             c.Reason,
		Message:            c.Message,
		ObservedGeneration: generation,
		LastTransitionTime: *timestamp(now),
	})
}

// timestamp is t as status stores it: to the second, UTC.
func timestamp(t time.Time) *metav1.Time {
	return &metav1.Time{Time: t.Truncate(time.Second).UTC()}
}

// capitalize makes a message start with a capital letter.
func capitalize(s string) string {
	s = strings.TrimSuffix(strings.TrimSpace(s), ".")
	r, n := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError {
		return s
	}
	return string(unicode.ToUpper(r)) + s[n:]
}
