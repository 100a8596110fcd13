package health

import (
	"time"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// DefaultSettle is how long the observer holds back the first health data of a render
// whose objects are still progressing (SettleWait). A Deployment that kube-controller-
// manager rolls out at once is Available well within it (the floor of bench/e2e: 0.4 s
// at the median, 1.4 s at the 99th percentile of 10,000); written at once, its
// Progressing and then its Healthy data were two status writes and two reconciles of
// the Release where one of each does (decision 0145).
const DefaultSettle = 2 * time.Second

// SettleWait is how long the write of next, the assessed status of an inventory whose
// stored status is stored, waits: the time left of settle since firstSeen, when the
// observer first assessed the inventory's current render, if next is the first complete
// assessment of that render (it names a render that stored does not), the render is
// Progressing and no hook runs; else 0, the write goes now. Healthy, Degraded and
// Missing data, a hook's progress and any later change of a render's health are never
// held back, and a render that keeps progressing is reported once settle has passed.
func SettleWait(stored, next v1.ReleaseInventoryStatus, firstSeen, now time.Time, settle time.Duration) time.Duration {
	if settle <= 0 || next.RenderRef == "" || next.RenderRef == stored.RenderRef ||
		next.Health != v1.HealthProgressing || len(next.Hooks) > 0 {
		return 0
	}
	return max(firstSeen.Add(settle).Sub(now), 0)
}
