package controller

import (
	"testing"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// SP-30 and decision 0162, end to end: deleting a Release does not freeze the cluster
// waves above it. A Release of cluster wave 0 (not Healthy: no observer runs here)
// holds one of wave 1; its deletion waits for good on a failed pre-delete hook, and
// the wave-1 Release applies as soon as the deletion starts, without a resync.
func TestSP30_ADeletionThatWaitsDoesNotHoldTheHigherWaves(t *testing.T) {
	e := newEnv(t, envOptions{})
	lower := e.createRelease("pdf", automatic(), chartName("pre-delete-hooks"), values(`{"failPreDelete": true}`))
	e.waitApplied("pdf", "True", v1.ReasonApplied)
	e.createRelease("upper", automatic(), clusterWave(1))
	e.waitApplied("upper", "False", v1.ReasonWaitingForClusterWave)

	if err := e.client.Delete(e.ctx, lower); err != nil {
		t.Fatal(err)
	}
	rel := e.waitApplied("pdf", "False", v1.ReasonHookFailed)
	if rel.DeletionTimestamp == nil || rel.Generation != lower.Generation {
		t.Errorf("the Release being deleted: deletionTimestamp %v, generation %d; want set, and %d as before the deletion",
			rel.DeletionTimestamp, rel.Generation, lower.Generation)
	}
	e.waitApplied("upper", "True", v1.ReasonApplied)
}
