package policy

import (
	"fmt"
	"strings"
	"time"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// DefaultAssessmentOverdueAfter is how long a Release waits on the observer's
// assessment of its ReleaseInventory before it reports the assessment as overdue. The
// observer assesses an inventory within seconds of a write (it watches them); two
// minutes leave room for a slow target cluster and a long work queue, and are short
// enough that an operator learns of a dead observer before the users do.
const DefaultAssessmentOverdueAfter = 2 * time.Minute

// Assessment is where the observer's assessment of the Release's ReleaseInventory
// stands, as the reconcile leaves the inventory.
type Assessment struct {
	// DueSince is when the assessment fell behind the inventory (status.observedGeneration
	// behind metadata.generation, or status.renderRef not the inventory's renderRef)
	// and has stayed behind since, to the second; zero when the assessment is current.
	DueSince time.Time
	// OverdueAfter is the bound: a wait on an assessment that has been due for longer
	// is overdue. 0 or less: never.
	OverdueAfter time.Duration
}

// Overdue is a wait on the observer's assessment that has lasted longer than the bound.
type Overdue struct {
	// Since is when the assessment fell behind (Assessment.DueSince).
	Since time.Time
	// Message is the message of the condition that waits (Applied, else Healthy),
	// with the overdue note: what waits, since when, what to do.
	Message string
}

// overdueNote is what a waiting condition's message says once the assessment is
// overdue. The time is the start of the wait, fixed while it lasts, so that the
// message does not change from one reconcile to the next.
const overdueNote = "the observer has not assessed the ReleaseInventory since "

// CheckAssessment reports a wait on the observer's assessment that has lasted longer
// than the bound, on out as Finish returned it for in.
//
// A Release waits on the assessment when its Applied reason is WaitingForSyncWave (the
// next wave waits for the health of the applied ones) or when a render is applied and
// its Healthy condition is not True (the health of a new render, which a rollout and
// the Releases of higher cluster waves wait for). While the assessment is due but not
// overdue, the next reconcile comes at the bound at the latest, so that the overdue
// state is reported without any other event (a transient failure keeps its retry
// schedule). Once it is overdue, each waiting
// condition's message says since when and what to do, Ready follows, and
// out.Overdue is set (for the Warning event and the metrics); the assessment's
// arrival reconciles the Release (the inventory's status watch), so no requeue is
// added.
func CheckAssessment(in Input, a Assessment, out Outcome) Outcome {
	lastSuccessful := in.LastSuccessfulRender
	if out.Status.LastSuccessfulRender != "" {
		lastSuccessful = out.Status.LastSuccessfulRender
	}
	appliedWaits := out.Result.Reason == v1.ReasonWaitingForSyncWave
	healthWaits := lastSuccessful != "" && out.Healthy.Status != StatusTrue
	if (!appliedWaits && !healthWaits) || a.DueSince.IsZero() || a.OverdueAfter <= 0 {
		return out
	}
	if left := a.DueSince.Add(a.OverdueAfter).Sub(in.Now); left > 0 {
		// A transient failure keeps its retry schedule (the work queue's, or
		// retryBackoff's): the retry comes first or reports the wait late.
		if out.Kind != KindTransient && (out.Requeue.After == 0 || left < out.Requeue.After) {
			out.Requeue.After = left
		}
		return out
	}
	note := fmt.Sprintf("%s%s: check that convoy observer runs and can reach the Cluster.",
		overdueNote, a.DueSince.UTC().Format(time.RFC3339))
	if healthWaits {
		out.Healthy.Message = withNote(out.Healthy.Message, note)
		out.Overdue = &Overdue{Since: a.DueSince, Message: out.Healthy.Message}
	}
	if appliedWaits {
		out.Applied.Message = withNote(out.Applied.Message, note)
		out.Result.Message = out.Applied.Message
		out.Overdue = &Overdue{Since: a.DueSince, Message: out.Applied.Message}
	}
	out.Ready = ReadyCondition(out.Applied, out.Healthy)
	return out
}

// withNote appends the overdue note to a condition's message.
func withNote(message, note string) string {
	return strings.TrimSuffix(message, ".") + "; " + note
}

// OverdueSince is the start of the overdue wait that message reports (CheckAssessment);
// false when it reports none. The controller reads it back from the status it wrote,
// so that a restart neither moves the time nor reports the wait anew.
func OverdueSince(message string) (time.Time, bool) {
	_, rest, ok := strings.Cut(message, overdueNote)
	if !ok {
		return time.Time{}, false
	}
	stamp, _, _ := strings.Cut(rest, " ")
	t, err := time.Parse(time.RFC3339, strings.TrimSuffix(stamp, ":"))
	if err != nil {
		return time.Time{}, false
	}
	return t, true
}
