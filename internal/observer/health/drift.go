package health

import (
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// Drift is the drift status for the result of a check: the drifted objects (those with
// fields, sorted, fields sorted) and since, the time this result first showed: the
// stored since when the result is the same as the stored one, else now. A check that
// finds nothing gives a status with no drifted objects, since when that first showed.
func Drift(stored *v1.DriftStatus, drifted []v1.DriftedObject, now time.Time) *v1.DriftStatus {
	var objs []v1.DriftedObject
	for _, d := range drifted {
		if len(d.Fields) == 0 {
			continue
		}
		d.Fields = slices.Clone(d.Fields)
		slices.Sort(d.Fields)
		d.Fields = slices.Compact(d.Fields)
		objs = append(objs, d)
	}
	slices.SortFunc(objs, func(a, b v1.DriftedObject) int { return compareRefs(a.ObjectReference, b.ObjectReference) })
	if stored != nil && stored.Since != nil && equality.Semantic.DeepEqual(stored.Drifted, objs) {
		return &v1.DriftStatus{Since: stored.Since.DeepCopy(), Drifted: objs}
	}
	t := metav1.NewTime(now).Rfc3339Copy()
	return &v1.DriftStatus{Since: &t, Drifted: objs}
}

// DriftCheckInput is what NextDriftCheck decides from.
type DriftCheckInput struct {
	// Interval is the Release's spec.syncPolicy.interval.
	Interval *metav1.Duration
	// LastSuccessful is the Release's status.lastSuccessful.renderRef: the render a
	// check compares the live objects with.
	LastSuccessful string
	// Applied is the ReleaseInventory's renderRef, the render whose apply began last
	// (empty: not known), and Holding says its apply holds at a sync wave (the
	// inventory's syncWave is set).
	Applied string
	Holding bool
	// Checked is the render of the last check since the observer started (empty: none),
	// made at LastCheck.
	Checked   string
	LastCheck time.Time
	// Now is the time of the assessment.
	Now time.Time
}

// DriftCheck is what NextDriftCheck decided.
type DriftCheck struct {
	// Off: no checks and no drift data (the interval is unset or 0).
	Off bool
	// Held: the apply of a render is under way (another render than LastSuccessful
	// began, or an apply holds at a sync wave): the live objects are partly of that
	// render, and a check would report them as drift. No check; the last result
	// stands. The end of the apply changes the Release or the inventory, which brings
	// the next assessment: no time to look again.
	Held bool
	// After is the delay until the check is due; 0: now.
	After time.Duration
}

// NextDriftCheck says when the next drift check is due. Every interval, and at once
// when the observer has not checked since it started, or when its last check was of
// another render than LastSuccessful (that result compares the live objects with a
// render the Release no longer has); none while an apply is under way (Held), none at
// all with the interval unset or 0 (Off).
func NextDriftCheck(in DriftCheckInput) DriftCheck {
	if in.Interval == nil || in.Interval.Duration <= 0 {
		return DriftCheck{Off: true}
	}
	if in.Holding || (in.Applied != "" && in.Applied != in.LastSuccessful) {
		return DriftCheck{Held: true}
	}
	if in.LastCheck.IsZero() || in.Checked != in.LastSuccessful {
		return DriftCheck{}
	}
	return DriftCheck{After: max(in.LastCheck.Add(in.Interval.Duration).Sub(in.Now), 0)}
}
