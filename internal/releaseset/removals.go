package releaseset

import (
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// MaxRemovals is how many of a set's n Releases may be deleted at once because their
// Cluster is no longer selected (or gone): maxRemovals as a number, or a percentage of
// n rounded down (never more than the percentage: 25% of 3 is 0); unset: 25%.
func MaxRemovals(maxRemovals *intstr.IntOrString, n int) int {
	v := intstr.FromString(v1.DefaultMaxRemovals)
	if maxRemovals != nil {
		v = *maxRemovals
	}
	limit, err := intstr.GetScaledValueFromIntOrPercent(&v, n, false)
	if err != nil || limit < 0 {
		// Validation rejects what does not scale; hold every removal rather than guess.
		return 0
	}
	return limit
}

// RemovalWindow is how long the Releases a set deleted count against maxRemovals:
// Clusters lost one after the other within it are lost at once.
const RemovalWindow = 10 * time.Minute

// massRemoval is a removal the set holds back: more Releases to delete than maxRemovals.
type massRemoval struct {
	// releases are the Releases held, sorted by name.
	releases []*v1.Release
	// recent are the Releases deleted within the window that count with them.
	recent []v1.RecentRemoval
	// limit is maxRemovals scaled to the set's Releases (of, the recent ones included).
	limit, of int
}

// recentRemovals are the entries of status.recentRemovals still within the window at now.
func recentRemovals(st v1.ReleaseSetStatus, now metav1.Time) []v1.RecentRemoval {
	var out []v1.RecentRemoval
	for _, r := range st.RecentRemovals {
		if now.Sub(r.RemovedAt.Time) < RemovalWindow {
			out = append(out, r)
		}
	}
	return out
}

// holdRemovals decides whether the removals of set (Releases whose Cluster is no longer
// selected or gone, sorted by name) go on: nil when they do, else what is held. Of
// count Releases of the set and those deleted within the window (recent), at most
// maxRemovals may go within the window; those the set's removal acknowledgement
// names, and that existed when it was recorded, do not count.
func holdRemovals(set *v1.ReleaseSet, removals []*v1.Release, count int, recent []v1.RecentRemoval) *massRemoval {
	if len(removals) == 0 {
		return nil
	}
	limit := MaxRemovals(set.Spec.Strategy.MaxRemovals, count+len(recent))
	unacknowledged := len(recent)
	for _, r := range removals {
		if !acknowledged(set.RemovalAcknowledgement, r) {
			unacknowledged++
		}
	}
	if unacknowledged <= limit {
		return nil
	}
	return &massRemoval{releases: removals, recent: recent, limit: limit, of: count + len(recent)}
}

// removed are recent with the unacknowledged removals, deleted at now, added.
func removed(set *v1.ReleaseSet, recent []v1.RecentRemoval, removals []*v1.Release, now metav1.Time) []v1.RecentRemoval {
	out := slices.Clone(recent)
	for _, r := range removals {
		if !acknowledged(set.RemovalAcknowledgement, r) {
			out = append(out, v1.RecentRemoval{Release: r.Name, RemovedAt: now})
		}
	}
	return out
}

// acknowledged says whether ack covers the removal of rel: it names rel, and rel is
// not younger than ack (a Release of the same name created since is another removal).
func acknowledged(ack *v1.RemovalAcknowledgement, rel *v1.Release) bool {
	if ack == nil || !slices.Contains(ack.Releases, rel.Name) {
		return false
	}
	return ack.AcknowledgedAt == nil || !ack.AcknowledgedAt.Before(&rel.CreationTimestamp)
}

// names are the names of m's Releases, for status.heldRemovals.
func (m *massRemoval) names() []string {
	out := make([]string, len(m.releases))
	for i, r := range m.releases {
		out[i] = r.Name
	}
	return out
}

// message says how many Releases would go, the limit, and what to do.
func (m *massRemoval) message(set *v1.ReleaseSet) string {
	const shown = 3
	var clusters []string
	for _, r := range m.releases[:min(shown, len(m.releases))] {
		clusters = append(clusters, r.Spec.Cluster)
	}
	list := strings.Join(clusters, ", ")
	if len(m.releases) > shown {
		list += fmt.Sprintf(" and %d more", len(m.releases)-shown)
	}
	if len(m.recent) > 0 {
		list += fmt.Sprintf("; with %d deleted in the last %s", len(m.recent), RemovalWindow)
	}
	maxRemovals := v1.DefaultMaxRemovals + " (default)"
	if v := set.Spec.Strategy.MaxRemovals; v != nil {
		maxRemovals = v.String()
	}
	return fmt.Sprintf("%d of the %d Releases would be deleted at once (Clusters no longer selected or gone: %s), more than "+
		"spec.strategy.maxRemovals %s allows (%d): nothing is deleted, created or updated. If the clusterSelector or the "+
		"Clusters' labels are wrong, fix them; if the removal is meant, acknowledge it: kubectl convoy releaseset promote %s -n %s.",
		len(m.releases)+len(m.recent), m.of, list, maxRemovals, m.limit, set.Name, set.Namespace)
}
