package policy

import (
	"fmt"
	"strings"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// ForceSpent is a forced /sync that a reconcile used up without acting on it: the
// seed spends a force after the one reconcile that handles it, "also when the
// reconcile fails or waits" (SP-21, SP-22), so a reconcile that waited for a cluster
// wave, stopped before the apply, or whose forced apply failed leaves nothing of it:
// the next apply runs the pre-apply dry run, and a render that was rolled back stays
// rolled back. The user is told so (a Warning event, and the Applied condition of
// that reconcile), since they asked for something that did not happen.
type ForceSpent struct {
	// Message says that the force was used up, why, and that a new forced /sync is
	// needed; no timestamps.
	Message string
}

// SpentForce decides whether the reconcile of plan, whose attempt ended as attempt
// (ignored when plan.Stop is set), used up a pending force without acting on it. It
// returns nil when no force was pending, or when the force acted: its apply succeeded,
// applied its first sync waves (its rollout started), applied before its PostApply
// hooks stopped, or holds on purpose (its PreApply hook batches run, recorded as
// forced, and carry the force on).
func SpentForce(plan Plan, attempt Result) *ForceSpent {
	if !plan.Force.Pending {
		return nil
	}
	var why, then string
	switch {
	case plan.Stop != nil && plan.Stop.Reason == v1.ReasonWaitingForClusterWave:
		why = "the reconcile that handled it waited for a lower cluster wave, and nothing was applied"
		then = "once the Releases of the lower cluster waves are Ready"
	case plan.Stop != nil:
		why = fmt.Sprintf("the reconcile that handled it stopped before the apply (%s), and nothing was applied", plan.Stop.Reason)
		then = "once that is resolved"
	case plan.Apply == nil:
		return nil
	case attempt.Reason == v1.ReasonApplied || attempt.AfterApply || attempt.WavesApplied || KindOf(attempt.Reason) == KindHold:
		return nil
	default:
		why = fmt.Sprintf("its apply failed (%s), and no rollout started", attempt.Reason)
		then = "once the cause is fixed"
	}
	return &ForceSpent{Message: fmt.Sprintf("The forced /sync was used up without effect: %s. The next apply runs the "+
		"pre-apply dry run, and a render that was rolled back stays rolled back: run kubectl convoy release sync --force "+
		"again %s.", why, then)}
}

// withSentence appends sentence to message, which it ends with a full stop first.
func withSentence(message, sentence string) string {
	message = strings.TrimSpace(message)
	switch {
	case message == "":
		return sentence
	case !strings.HasSuffix(message, "."):
		message += "."
	}
	return message + " " + sentence
}
