package policy

import (
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// msgReassessing is the Healthy message of a render re-assessed after convoy applied
// it again.
const msgReassessing = "Every object of the last applied render was Healthy at the observer's last assessment; " +
	"convoy applied the render again (it put back a change made on the cluster) and the observer re-assesses it. " +
	"Nothing to do."

// Reassessing says, in out's Healthy condition, that the observer only re-assesses a
// render it last reported Healthy: Unknown/Reassessing in place of
// Unknown/NotAssessed. That is the case when the render stays the one applied last
// (status.lastSuccessful, no new rollout), the Healthy condition before this reconcile
// (prev) was True or already Reassessing, and the observer's last assessment of the
// render, older than the ReleaseInventory as this reconcile leaves it, says Healthy: a
// reconcile re-applied the render with a changed object (a drift put back), which
// leaves the assessment behind until the observer looks again. The higher cluster
// waves go on through it (LowerWaveReady). A new render, a render never assessed
// Healthy, or an assessment of the current inventory (Progressing, Degraded, Missing,
// Unknown) is left as Finish reports it. Ready follows Healthy.
func Reassessing(prev *Condition, in Input, out Outcome) Outcome {
	if prev == nil || !(prev.Status == StatusTrue && prev.Reason == v1.ReasonHealthy) && prev.Reason != v1.ReasonReassessing {
		return out
	}
	ref := in.LastSuccessfulRender
	switch {
	case ref == "",
		out.Status.LastSuccessfulRender != "" && out.Status.LastSuccessfulRender != ref,
		out.Status.Rollout != nil,
		out.Healthy.Status != StatusUnknown || out.Healthy.Reason != v1.ReasonNotAssessed,
		in.Health == nil || in.Health.RenderRef != ref || in.Health.State != v1.HealthHealthy:
		return out
	}
	out.Healthy = Condition{Type: v1.ConditionHealthy, Status: StatusUnknown, Reason: v1.ReasonReassessing, Message: msgReassessing}
	out.Ready = ReadyCondition(out.Applied, out.Healthy)
	return out
}

// LowerWaveReady says whether a Release of a lower cluster wave lets the higher waves
// of its Cluster apply, from its generation, whether it is being deleted, and its
// conditions. It does when its Applied condition is True and its Healthy condition is
// True — or Unknown/Reassessing: the render it last reported Healthy, re-applied, is
// only being re-assessed — both for its current generation. A condition observed at an
// older generation says nothing of the spec the Release has now (kstatus' rule): an
// edited lower wave holds the higher ones from the edit on. A lower wave that applies
// a new render (Healthy Unknown/NotAssessed), or whose render is Progressing, Degraded
// or Missing, holds them. A Release being deleted no longer holds them: it goes away
// with what it applied, and the higher waves do not wait for the end of a deletion
// that may wait for good.
func LowerWaveReady(generation int64, deleting bool, conditions []metav1.Condition) bool {
	if deleting {
		return true
	}
	applied := apimeta.FindStatusCondition(conditions, v1.ConditionApplied)
	healthy := apimeta.FindStatusCondition(conditions, v1.ConditionHealthy)
	if applied == nil || healthy == nil || applied.ObservedGeneration != generation || healthy.ObservedGeneration != generation {
		return false
	}
	if applied.Status != metav1.ConditionTrue {
		return false
	}
	return healthy.Status == metav1.ConditionTrue ||
		healthy.Status == metav1.ConditionUnknown && healthy.Reason == v1.ReasonReassessing
}
