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

// NextDriftCheck says when the next drift check is due, from spec.syncPolicy.interval
// and the time of the last check (zero: none since the observer started): false when
// the interval is unset or 0 (no drift checks), else the delay from now, 0 when due.
func NextDriftCheck(interval *metav1.Duration, lastCheck, now time.Time) (time.Duration, bool) {
	if interval == nil || interval.Duration <= 0 {
		return 0, false
	}
	if lastCheck.IsZero() {
		return 0, true
	}
	return max(lastCheck.Add(interval.Duration).Sub(now), 0), true
}
