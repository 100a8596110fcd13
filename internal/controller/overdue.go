package controller

import (
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/policy"
)

// assessment is where the observer's assessment of the Release's ReleaseInventory
// stands after this reconcile (policy.CheckAssessment decides what a wait on it
// says): due since when, or current.
//
// Nothing in the API records when an inventory fell behind its assessment (its
// generation has no time), so the controller remembers it: the time of the reconcile
// that first found it behind, or that raised its generation. The wait lasts while the
// inventory stays behind, also across further writes of it. After a restart of the
// controller, an overdue wait that the Release's status reports keeps the time it
// reports (policy.OverdueSince); a wait not reported yet starts anew, so it is
// reported at most one bound late.
func (r *Reconciler) assessment(key policy.Key, st *state, ap applied) policy.Assessment {
	a := policy.Assessment{OverdueAfter: r.overdueAfter}
	inv := st.inventory
	if ap.inventory != nil {
		inv = ap.inventory
	}
	if !assessmentDue(inv) {
		r.dueSince.forget(key)
		return a
	}
	uid := st.rel.UID
	since, ok := r.dueSince.get(key, uid)
	switch {
	case !assessmentDue(st.inventory):
		// This reconcile's apply put the inventory behind: the wait starts now.
		since = st.now
	case ok:
	default:
		since = st.now
		if reported, ok := reportedOverdue(st.rel); ok {
			since = reported
		}
	}
	since = since.Truncate(time.Second).UTC()
	r.dueSince.put(key, uid, since)
	a.DueSince = since
	return a
}

// assessmentDue says whether the observer's assessment of inv is behind inv: inv names
// a render and its status assesses another render or an older generation (an
// observedGeneration of 0, from an observer that does not record it, counts as
// current, as for the sync waves: currentHealth). An inventory being deleted is not
// assessed any more.
func assessmentDue(inv *v1.ReleaseInventory) bool {
	if inv == nil || inv.RenderRef == "" || inv.DeletionTimestamp != nil {
		return false
	}
	if inv.Status.RenderRef != inv.RenderRef {
		return true
	}
	g := inv.Status.ObservedGeneration
	return g != 0 && g < inv.Generation
}

// reportedOverdue is the start of the overdue wait that rel's status reports in its
// Applied or Healthy condition; false when it reports none.
func reportedOverdue(rel *v1.Release) (time.Time, bool) {
	for _, t := range []string{v1.ConditionApplied, v1.ConditionHealthy} {
		if c := apimeta.FindStatusCondition(rel.Status.Conditions, t); c != nil {
			if since, ok := policy.OverdueSince(c.Message); ok {
				return since, true
			}
		}
	}
	return time.Time{}, false
}

// overdueIsNew says whether o, an overdue wait, is one that rel's status does not
// report yet: its Warning event is recorded once, in the reconcile that first reports
// it.
func overdueIsNew(rel *v1.Release, o *policy.Overdue) bool {
	reported, ok := reportedOverdue(rel)
	return !ok || !reported.Equal(o.Since)
}
