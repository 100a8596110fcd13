package controller

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/policy"
)

// Event reasons besides the Applied reasons.
const (
	eventInvalidAnnotation = "InvalidAnnotation"
	eventRenderWarning     = "RenderWarning"
	eventConfigured        = "Configured"
	// eventRollout prefixes the rollout's phase: RolloutProgressing, RolloutSucceeded,
	// RolloutFailed, RolloutRolledBack.
	eventRollout = "Rollout"
)

// emitEvents records what changed or failed in this reconcile, and nothing else: a
// steady Release records no event. Each event is an API write, so one reconcile makes
// as few as it can: what the apply changed goes into the event of the Applied change.
func (r *Reconciler) emitEvents(_ context.Context, st *state, plan policy.Plan, ap applied, out policy.Outcome) {
	rel := st.rel
	for _, w := range plan.Warnings {
		r.events.Eventf(rel, nil, corev1.EventTypeWarning, eventInvalidAnnotation, "Reconcile", "%s", w.Message)
	}
	if st.newRender {
		for _, w := range st.render.Warnings {
			r.events.Eventf(rel, nil, corev1.EventTypeWarning, eventRenderWarning, "Render", "%s", w)
		}
	}
	changes := ""
	if c := ap.changes; c.created+c.configured+c.pruned > 0 {
		changes = fmt.Sprintf(" Objects: %d created, %d changed, %d pruned.", c.created, c.configured, c.pruned)
	}

	if f := out.ForceSpent; f != nil {
		r.events.Eventf(rel, nil, corev1.EventTypeWarning, v1.EventForceSpent, "Sync", "%s", f.Message)
	}
	if o := out.Overdue; o != nil && overdueIsNew(rel, o) {
		r.events.Eventf(rel, nil, corev1.EventTypeWarning, v1.EventObserverAssessmentOverdue, "Reconcile", "%s", o.Message)
	}

	if ro := out.Status.Rollout; ro != nil {
		r.events.Eventf(rel, nil, corev1.EventTypeNormal, eventRollout+string(v1.RolloutProgressing), "Rollout",
			"Rollout of render %s started; it has until %s to become Healthy.", ro.RenderRef, ro.Deadline.UTC().Format(time.RFC3339))
	}
	// The phase of the rollout status.rollout held, or of the new one when it ended as
	// it started (Succeeded: its render was Healthy as applied).
	if p := out.Status.RolloutPhase; p != nil {
		if f := out.Status.RolloutFailure; f != nil {
			r.events.Eventf(rel, nil, corev1.EventTypeWarning, eventRollout+string(f.Phase), "Rollout", "%s", f.Message)
		}
		kind := corev1.EventTypeNormal
		if p.Phase != v1.RolloutSucceeded {
			kind = corev1.EventTypeWarning
		}
		r.events.Eventf(rel, nil, kind, eventRollout+string(p.Phase), "Rollout", "%s", p.Message)
	}

	switch out.Kind {
	case policy.KindTransient, policy.KindFailure:
		r.events.Eventf(rel, nil, corev1.EventTypeWarning, out.Result.Reason, "Reconcile", "%s%s", out.Applied.Message, changes)
		return
	}
	old := apimeta.FindStatusCondition(rel.Status.Conditions, v1.ConditionApplied)
	switch {
	case old == nil || string(old.Status) != out.Applied.Status || old.Reason != out.Applied.Reason:
		r.events.Eventf(rel, nil, corev1.EventTypeNormal, out.Result.Reason, "Reconcile", "%s%s", out.Applied.Message, changes)
	case changes != "" && plan.Apply != nil:
		// The same outcome, but the apply changed objects: drift corrected, a new render.
		r.events.Eventf(rel, nil, corev1.EventTypeNormal, eventConfigured, "Apply", "Applied render %s.%s", plan.Apply.RenderRef, changes)
	}
}
