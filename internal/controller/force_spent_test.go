package controller

import (
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// Decision 0165, end to end: a forced /sync handled by a reconcile that waits for
// a lower cluster wave is used up (SP-22: "also when the reconcile ... waits"), and
// the Release says so: a Warning event ForceSpent and the Applied message name why and
// ask for a new forced /sync. Nothing is applied.
func TestAForceUsedUpWhileWaitingForAClusterWaveIsReported(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.createRelease("lower", automatic()) // Applied, never Healthy: no observer runs here
	e.waitApplied("lower", "True", v1.ReasonApplied)
	e.createRelease("upper", automatic(), clusterWave(1), values(`{"greeting":"upper"}`))
	e.waitApplied("upper", "False", v1.ReasonWaitingForClusterWave)

	forceAt := e.sync("upper", true).Annotations[v1.AnnotationSyncForceRequestedAt]
	rel := e.waitForceHandled("upper", forceAt)
	msg := appliedMessage(rel)
	for _, want := range []string{"Waiting for Release", "forced /sync was used up", "lower cluster wave", "sync --force again"} {
		if !strings.Contains(msg, want) {
			t.Errorf("Applied message %q does not say %q", msg, want)
		}
	}
	e.waitEvent(v1.EventForceSpent, "waited for a lower cluster wave")
	if cm := e.configMap("upper-config"); cm != nil {
		t.Errorf("ConfigMap upper-config applied while its cluster wave waits")
	}
}

// Decision 0165, end to end: a forced apply that fails uses the force up; the
// Release says so, and the next reconcile runs the dry run again (SP-21).
func TestAForceUsedUpByAFailedApplyIsReported(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.createRelease("web", automatic(), interval(time.Second), missingNamespace(e))
	e.waitApplied("web", "False", v1.ReasonUnappliable)

	forceAt := e.sync("web", true).Annotations[v1.AnnotationSyncForceRequestedAt]
	e.waitForceHandled("web", forceAt)
	e.waitEvent(v1.EventForceSpent, "its apply failed (DeployFailed)")
	// The next reconcile is not forced: the dry run rejects the render again, and the
	// message no longer speaks of the force.
	e.eventually("Unappliable without the note of the force", func() (bool, string) {
		rel := e.release("web")
		msg := appliedMessage(rel)
		return strings.Contains(msg, "dry run") && !strings.Contains(msg, "forced /sync"), msg
	})
}

// waitForceHandled waits until status.lastHandledForceSyncAt of name is forceAt.
func (e *env) waitForceHandled(name, forceAt string) *v1.Release {
	e.t.Helper()
	if forceAt == "" {
		e.t.Fatal("/sync?force=true wrote no sync-force-requested-at")
	}
	var rel *v1.Release
	e.eventually("lastHandledForceSyncAt "+forceAt, func() (bool, string) {
		rel = e.release(name)
		got := rel.Status.LastHandledForceSyncAt
		return got != nil && got.UTC().Format(time.RFC3339) == forceAt, fmt.Sprintf("lastHandledForceSyncAt %v", got)
	})
	return rel
}
