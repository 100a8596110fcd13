package policy

import (
	"fmt"
	"strings"
	"time"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// Outcome is everything a reconcile writes and returns, decided from the Plan and how
// the attempt ended.
type Outcome struct {
	// Result is the reconcile's result: the Plan's Stop, the attempt's failure or
	// wait, or after a successful apply Applied (or the Plan's Apply.Report).
	Result Result
	// Kind is the kind of Result.Reason.
	Kind Kind

	// Applied, Healthy and Ready are the three conditions to set.
	Applied Condition
	Healthy Condition
	Ready   Condition

	// Status holds the other status fields to write.
	Status StatusUpdate
	// Counter is how the in-memory failure count changes (FailureCounter.Update).
	Counter CounterUpdate
	// Requeue is when to reconcile again.
	Requeue Requeue
	// Overdue, when set, is a wait on the observer's assessment that has lasted longer
	// than the bound (CheckAssessment); Finish leaves it nil.
	Overdue *Overdue
	// ForceSpent, when set, is the pending force that this reconcile used up without
	// acting on it (SpentForce), for a Warning event; the Applied condition's message
	// says it too.
	ForceSpent *ForceSpent
}

// StatusUpdate lists the status fields a reconcile changes besides the conditions. A
// zero field means "leave as it is".
type StatusUpdate struct {
	// LastSuccessfulRender, when set, is the render that was applied successfully: set
	// status.lastSuccessful to it (keep appliedAt when the ref did not change, so a
	// steady Release is not written).
	LastSuccessfulRender string
	// LastHandledSyncAt, when set, is the new status.lastHandledSyncAt: the
	// sync-requested-at value read at the start of a manual-mode reconcile whose apply
	// succeeded.
	LastHandledSyncAt *time.Time
	// LastHandledForceSyncAt, when set, is the new status.lastHandledForceSyncAt: the
	// sync-force-requested-at value read at the start of a reconcile in which a force was
	// pending, whatever its result.
	LastHandledForceSyncAt *time.Time
	// Rollout, when set, is a new Progressing rollout to write to status.rollout.
	Rollout *RolloutStart
	// RolloutPhase, when set, is a new phase of the rollout in status.rollout: with
	// Rollout nil, of the rollout status.rollout holds (Succeeded, Failed or
	// RolledBack); with Rollout set, of the new rollout, which then Succeeded at once
	// (healthyAtStart), and both its start and its end are reported.
	RolloutPhase *RolloutChange
	// RolloutFailure, when set, is the Failed phase this reconcile judged when the
	// rollback in the same reconcile follows it at once: status.rollout goes straight
	// to RolledBack (RolloutPhase), and the failure is reported by an event of its own.
	RolloutFailure *RolloutChange
	// HooksForcedDone: the hook batches that status.hooks records as a forced sync's
	// (Input.HooksForced) carried the force into its apply, which applied its first
	// waves in this reconcile: clear the mark (status.hooks[].forced), so that the
	// reconciles that carry the apply on through its later waves neither start
	// another rollout nor skip the dry run as forced.
	HooksForcedDone bool
}

// RolloutStart is a new Progressing rollout.
type RolloutStart struct {
	RenderRef         string
	PreviousRenderRef string
	StartedAt         time.Time
	Deadline          time.Time
}

// Finish judges a reconcile: in and plan as given to and returned by Decide, attempt
// how carrying out plan.Apply ended (Succeeded, or Stopped with the failure or wait
// reason of the step that stopped: hooks, dry run, sync waves, apply, prune). When
// plan.Stop is set, nothing was attempted and attempt is ignored.
//
// A WaitingForSyncWave after the first waves (attempt.WavesApplied) starts the
// render's rollout (Apply.StartRollout) but does not count as the apply.
//
// A WaitingForHooks or HookFailed of the PostApply batches (attempt.AfterApply) comes
// after a successful apply: the apply counts (lastSuccessful, a new rollout), the
// Release reports the hooks' reason, and a pending /sync stays pending until the
// batches are done, so that the next reconcile goes on with them in manual mode too.
// attempt.RecheckAfter (a running hook batch's earliest timeout) brings the next
// reconcile forward.
func Finish(in Input, plan Plan, attempt Result) Outcome {
	res := attempt
	res.AfterApply, res.WavesApplied, res.RecheckAfter, res.InventoryGeneration = false, false, 0, 0
	applied, hooksDone, started := false, true, false
	switch {
	case plan.Stop != nil:
		res = *plan.Stop
	case plan.Apply != nil && attempt.WavesApplied:
		// The first waves are applied, the rest waits: the rollout starts now, so
		// that a render whose first wave never becomes Healthy fails at its
		// deadline, and a forced sync's new rollout carries it through its waves.
		started = true
	case plan.Apply != nil && attempt.AfterApply && attempt.Reason != v1.ReasonApplied:
		applied, hooksDone = true, false
	case plan.Apply != nil && attempt.Reason == v1.ReasonApplied:
		applied = true
		switch {
		case plan.Apply.Report != nil:
			res = *plan.Apply.Report
		case in.Policy.Automatic:
			res.Message = msgAutomaticApplied
		default:
			res.Message = msgManualInSync
		}
	}

	out := Outcome{Result: res, Kind: KindOf(res.Reason), Counter: counterUpdateFor(KindOf(res.Reason))}
	if out.ForceSpent = SpentForce(plan, attempt); out.ForceSpent != nil {
		out.Result.Message = withSentence(out.Result.Message, out.ForceSpent.Message)
	}

	lastSuccessful := in.LastSuccessfulRender
	if applied {
		lastSuccessful = plan.Apply.RenderRef
		out.Status.LastSuccessfulRender = plan.Apply.RenderRef
		if !in.Policy.Automatic && plan.Sync.Pending && hooksDone {
			out.Status.LastHandledSyncAt = timeCopy(plan.Sync.At)
		}
	}
	// Health counts only when it assesses the inventory as this reconcile left it: the
	// reconcile that applies a render's last wave must not report it Healthy from the
	// assessment of its first waves (decision 0160).
	health := AssessedHealth(in.Health, max(in.InventoryGeneration, attempt.InventoryGeneration))
	if (applied || started) && plan.Apply.StartRollout {
		out.Status.Rollout = rolloutStart(in, plan.Apply.RenderRef)
		out.Status.RolloutPhase = healthyAtStart(health, plan.Apply.RenderRef, applied)
	}
	if (applied || started) && in.HooksForced {
		// The forced sync's PreApply batches have carried it into its apply: its
		// rollout starts now, and a mark left on them would start another at every
		// later reconcile (decision 0159).
		out.Status.HooksForcedDone = true
	}
	switch {
	case out.Status.Rollout != nil:
	case applied && plan.Apply.RollBack:
		// Why it failed: judged in this reconcile, or by the one before when the
		// rollback's apply had to wait (a sync wave of the previous render).
		why := "The rollout failed"
		switch {
		case plan.Rollout != nil:
			why = "The rollout failed: " + strings.TrimSuffix(plan.Rollout.Message, ".")
		case in.Rollout != nil && in.Rollout.Phase == v1.RolloutFailed && in.Rollout.Message != "":
			why = "The rollout failed: " + strings.TrimSuffix(in.Rollout.Message, ".")
		}
		out.Status.RolloutPhase = &RolloutChange{Phase: v1.RolloutRolledBack, Message: fmt.Sprintf(
			"%s; rolled back to render %s.", why, plan.Apply.RenderRef)}
		if plan.Rollout != nil && plan.Rollout.Phase == v1.RolloutFailed {
			out.Status.RolloutFailure = plan.Rollout
		}
	case plan.Rollout != nil:
		out.Status.RolloutPhase = plan.Rollout
	}
	if plan.Force.Pending {
		out.Status.LastHandledForceSyncAt = timeCopy(plan.Force.At)
	}

	out.Applied = AppliedCondition(out.Result)
	out.Healthy = withFailedRollout(HealthyCondition(health, lastSuccessful), in.Rollout, out.Status, lastSuccessful)
	out.Ready = ReadyCondition(out.Applied, out.Healthy)

	var deadline time.Time
	switch {
	case out.Status.Rollout != nil && out.Status.RolloutPhase == nil:
		deadline = out.Status.Rollout.Deadline
	case in.Rollout != nil && in.Rollout.Phase == v1.RolloutProgressing && out.Status.RolloutPhase == nil:
		deadline = in.Rollout.Deadline
	}
	if plan.Stop == nil && attempt.RecheckAfter > 0 {
		if t := in.Now.Add(attempt.RecheckAfter); deadline.IsZero() || t.Before(deadline) {
			deadline = t
		}
	}
	out.Requeue = requeueFor(in, out.Kind, deadline)
	return out
}

// withFailedRollout adds to a Healthy condition that is not True why the rollout of
// the applied render failed, when status.rollout is Failed for it after this reconcile
// (action Halt, or a rollback that cannot happen): the failed render stays applied,
// and Healthy says so, so that nobody reads a Degraded or Progressing Release without
// knowing that its rollout is over.
func withFailedRollout(c Condition, r *Rollout, st StatusUpdate, lastSuccessful string) Condition {
	if c.Status == StatusTrue || st.Rollout != nil || r == nil || r.RenderRef != lastSuccessful {
		return c
	}
	phase, msg := r.Phase, r.Message
	if p := st.RolloutPhase; p != nil {
		phase, msg = p.Phase, p.Message
	}
	if phase != v1.RolloutFailed {
		return c
	}
	why := ""
	if msg != "" {
		why = ": " + strings.TrimSuffix(msg, ".")
	}
	c.Message = fmt.Sprintf("The rollout of render %s failed%s. It stays applied until a new render or a forced sync starts a new rollout. %s",
		lastSuccessful, why, c.Message)
	return c
}

// msgHealthyAtStart is the message of a rollout that Succeeded as it started.
const msgHealthyAtStart = "The render was Healthy as applied: the apply changed nothing the observer assesses."

// healthyAtStart is the end of a rollout of renderRef that starts in this reconcile
// when it is known at once: Succeeded when the whole render is applied (applied: no
// later sync wave waits) and health, the observer's health that counts for the
// inventory as the apply left it (AssessedHealth), is Healthy for renderRef; nil
// otherwise. That is the case when the apply changed nothing the observer assesses: a
// forced sync of a render that is Healthy already, or a failurePolicy added to a
// Healthy Release. The observer then has nothing new to write, and no reconcile would
// come before the deadline to judge, from the same health, what rolloutStep judges
// here. A render whose apply changed an object's generation, or the inventory, is
// judged when the observer's assessment of the new inventory arrives.
func healthyAtStart(health *Health, renderRef string, applied bool) *RolloutChange {
	if !applied || health == nil || health.RenderRef != renderRef || health.State != v1.HealthHealthy {
		return nil
	}
	return &RolloutChange{Phase: v1.RolloutSucceeded, Message: msgHealthyAtStart}
}

// rolloutStart is the new rollout of renderRef, started now. Its previous render is the
// render of the last Succeeded rollout, or the last successful render before this one.
func rolloutStart(in Input, renderRef string) *RolloutStart {
	timeout := DefaultHealthTimeout
	if in.FailurePolicy != nil && in.FailurePolicy.HealthTimeout > 0 {
		timeout = in.FailurePolicy.HealthTimeout
	}
	previous := ""
	switch r := in.Rollout; {
	case r != nil && r.Phase == v1.RolloutSucceeded && r.RenderRef != renderRef:
		previous = r.RenderRef
	case r != nil && r.PreviousRenderRef != "":
		previous = r.PreviousRenderRef
	case in.LastSuccessfulRender != renderRef:
		previous = in.LastSuccessfulRender
	}
	return &RolloutStart{
		RenderRef:         renderRef,
		PreviousRenderRef: previous,
		StartedAt:         in.Now,
		Deadline:          in.Now.Add(timeout),
	}
}

func timeCopy(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	c := *t
	return &c
}
