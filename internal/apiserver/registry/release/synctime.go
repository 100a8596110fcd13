package release

import (
	"maps"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/apiserver/validation"
)

// NextSyncRequest returns the time a sync request made at now writes to
// sync-requested-at: max(now, previous annotation + 1s, status.lastHandledSyncAt + 1s),
// to the second (api.md, "No lost request"). So a request in the same second as the
// one just handled, or from a replica whose clock is behind, is still later than every
// request already handled. A forced request also stays later than the previous forced
// one and than status.lastHandledForceSyncAt, since it writes the same value to both
// annotations.
func NextSyncRequest(now time.Time, r *convoyv1alpha1.Release, force bool) time.Time {
	next := now.UTC().Truncate(time.Second)
	after := func(value string) {
		if t, err := convoyv1alpha1.ParseSyncTime(value); err == nil {
			next = latest(next, t.Add(time.Second))
		}
	}
	afterTime := func(t *metav1.Time) {
		if t != nil && !t.IsZero() {
			next = latest(next, t.UTC().Truncate(time.Second).Add(time.Second))
		}
	}
	after(r.Annotations[convoyv1alpha1.AnnotationSyncRequestedAt])
	afterTime(r.Status.LastHandledSyncAt)
	if force {
		after(r.Annotations[convoyv1alpha1.AnnotationSyncForceRequestedAt])
		afterTime(r.Status.LastHandledForceSyncAt)
	}
	// Past the last RFC 3339 second the time could not be written: stay there (a
	// Release whose annotation someone set to 9999-12-31T23:59:59Z takes no later
	// /sync; the validation rejects anything later).
	if next.After(validation.LatestSyncTime) {
		next = validation.LatestSyncTime
	}
	return next
}

func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// requestSync writes sync-requested-at (and, with force, sync-force-requested-at) on r
// by the NextSyncRequest rule. It copies the annotation map first: r may share it
// with the stored object.
func requestSync(r *convoyv1alpha1.Release, now time.Time, force bool) {
	value := convoyv1alpha1.FormatSyncTime(NextSyncRequest(now, r, force))
	annotations := maps.Clone(r.Annotations)
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[convoyv1alpha1.AnnotationSyncRequestedAt] = value
	if force {
		annotations[convoyv1alpha1.AnnotationSyncForceRequestedAt] = value
	}
	r.Annotations = annotations
}
