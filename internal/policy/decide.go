package policy

import (
	"fmt"
	"maps"
	"slices"
	"time"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// Plan is what one reconcile does, decided before anything is applied. Exactly one of
// Stop and Apply is set.
type Plan struct {
	// Sync is the /sync request at the start of the reconcile. Never pending in
	// automatic mode.
	Sync Request
	// Force is the forced /sync request at the start of the reconcile.
	Force Request
	// Warnings are ignored invalid annotations, for Warning events.
	Warnings []Warning

	// Rollout, when set, is what the rollout of status.rollout came to before this
	// reconcile applies anything: Succeeded or Failed. Finish writes it, unless a new
	// rollout starts or a rollback succeeds.
	Rollout *RolloutChange

	// Stop, when set, ends the reconcile here: apply nothing, run no hooks, no dry run
	// and no prune, and report this Result.
	Stop *Result
	// Apply, when set, tells the controller to go on: hooks, dry run, apply and prune.
	Apply *Apply
}

// Apply says what to apply and how.
type Apply struct {
	// RenderRef is the render to apply: the current render, the pinned render, or
	// after a rollback the previous render.
	RenderRef string
	// DryRun asks for the server-side dry run of the whole render before anything is
	// applied (step 9). False when a force is pending, and for the rest of an apply
	// that began without one: the render's apply held at a sync wave goes on, or the
	// hook batches of a forced sync go on.
	DryRun bool
	// RunHooks asks for the PreApply hook batches before the dry run and the PostApply
	// batches after a successful apply (steps 8 and 12): for a render other than the
	// last successful one, or on a forced sync.
	RunHooks bool
	// RerunHooks (a forced sync) asks to delete the Jobs of the render's hooks before
	// the first batch, so that every batch runs anew.
	RerunHooks bool
	// Forced: the apply is a forced sync's, in the reconcile that handles the force or
	// in one that carries on its PreApply hook batches; the controller records those
	// batches as forced (status.hooks[].forced).
	Forced bool
	// StartRollout asks for a new Progressing rollout once the first sync wave is
	// applied (the Release has a failurePolicy, and the render differs from the
	// rollout's, a force is pending, or a forced sync's hook batches go on). Finish
	// returns it as Outcome.Status.Rollout.
	StartRollout bool
	// Report, when set, is reported in place of Applied after a successful apply: the
	// apply counts as successful (lastSuccessful, lastHandledSyncAt) but the Release
	// holds (Pinned, RolledBack).
	Report *Result
	// RollBack: RenderRef is the previous render of a Failed rollout whose
	// failurePolicy action is Rollback; a successful apply ends it RolledBack.
	RollBack bool
}

// RolloutChange is a new phase of status.rollout and why.
type RolloutChange struct {
	// Phase is v1.RolloutSucceeded, v1.RolloutFailed or v1.RolloutRolledBack.
	Phase v1.RolloutPhase
	// Message says why, for people.
	Message string
}

// decision is the state that the steps of Decide build up.
type decision struct {
	in   Input
	plan Plan
	// target is the render to apply, once a step has chosen it.
	target string
	// report is Apply.Report.
	report *Result
	// rollbackHold: the apply keeps the previous render after a rollback.
	rollbackHold bool
	// rollingBack: the apply is the rollback of a Failed rollout.
	rollingBack bool
	// forcedHooks: the hook batches of a forced sync go on (rolloutHoldStep for a
	// RolledBack render, hooksStep for the last successful one): the rest of its apply
	// is forced too, with no dry run and a new rollout.
	forcedHooks bool
	apply       Apply
}

// step is one step of the reconcile flow. It returns a Result to stop the reconcile,
// or nil to go on.
type step func(d *decision) *Result

// steps are the steps of the reconcile flow (docs/architecture.md, "The reconcile of a
// Release") that decide before the apply, in order.
// Step 1 (deletion) is the controller's; steps 10–12 are carried out by the controller
// (PlanWaves decides the sync waves) and judged by Finish.
var steps = []step{
	clusterWaveStep,      // 2
	preflightStep,        // 3, 4
	pinStep,              // 5
	rolloutStep,          // the rollout's outcome; a rollback goes on in both modes
	syncPolicyStep,       // 6
	clusterWaveApplyStep, // 2, for a rollback in manual mode
	rolloutHoldStep,      // 7
	hooksStep,            // 8
	dryRunStep,           // 9
	rolloutStartStep,     // 12, decided now: a new rollout once the apply succeeds
}

// Decide runs the steps of the reconcile flow up to the apply and returns the Plan. It
// reads nothing but in.
func Decide(in Input) Plan {
	in.Health = AssessedHealth(in.Health, in.InventoryGeneration)
	d := &decision{in: in, target: in.CurrentRender}
	d.plan.Sync, d.plan.Force, d.plan.Warnings = requests(in)
	d.plan.Sync = bindRequest(in, d.plan.Sync)
	for _, s := range steps {
		if res := s(d); res != nil {
			d.plan.Stop = res
			return d.plan
		}
	}
	d.apply.RenderRef = d.target
	d.apply.Report = d.report
	d.apply.RollBack = d.rollingBack
	d.plan.Apply = &d.apply
	return d.plan
}

// HoldsBeforeRender says whether the cluster wave stops the reconcile of in before
// the Cluster is resolved and the chart rendered (step 2): a Release of a lower
// cluster wave is not ready, and an apply may follow (automatic mode, or a pending
// /sync or force). A manual Release with nothing pending renders and reports as step 6
// says ("Equal. The Applied condition is True with reason Applied" has no exception):
// the cluster wave gates only an apply (decision 0088).
//
// A pending /sync bound to a render does not hold before the render: only the render
// tells whether the request is still current, and a stale one applies nothing, so the
// Release renders and reports that its approval waits (syncPolicyStep).
func HoldsBeforeRender(in Input) bool {
	if in.ClusterWaveBlocker == "" {
		return false
	}
	sync, force, _ := requests(in)
	if sync.Pending && sync.Bound != "" {
		return false
	}
	return in.Policy.Automatic || sync.Pending || force.Pending
}

// clusterWaveStep holds while a Release of a lower cluster wave is not ready and an
// apply may follow (step 2, HoldsBeforeRender).
//
// A forced /sync whose request is bound to a render that is no longer current applies
// nothing (syncPolicyStep): it does not wait for the cluster wave either.
func clusterWaveStep(d *decision) *Result {
	if !d.in.Policy.Automatic && !d.plan.Sync.Pending && (!d.plan.Force.Pending || d.plan.Sync.Stale) {
		return nil
	}
	return clusterWaveApplyStep(d)
}

// clusterWaveApplyStep holds the apply that step 6 let through in manual mode without
// a pending request (the rollback of a Failed rollout) while a Release of a lower
// cluster wave is not ready. Every other apply was held at step 2.
func clusterWaveApplyStep(d *decision) *Result {
	if d.in.ClusterWaveBlocker == "" {
		return nil
	}
	return &Result{
		Reason: v1.ReasonWaitingForClusterWave,
		Message: fmt.Sprintf("Waiting for Release %s of a lower cluster wave on the same Cluster "+
			"to be Applied and Healthy.", d.in.ClusterWaveBlocker),
	}
}

// preflightStep stops when resolving the Cluster or rendering failed (steps 3 and 4).
func preflightStep(d *decision) *Result {
	if d.in.Preflight != nil {
		res := *d.in.Preflight
		return &res
	}
	if d.in.CurrentRender == "" {
		return &Result{Reason: v1.ReasonUnappliable, Message: "There is no render to apply."}
	}
	return nil
}

// pinned reports whether a pin holds the Release at a render other than the current one.
func (d *decision) pinned() bool {
	return d.in.Pin != nil && d.in.Pin.RenderRef != "" && d.in.Pin.RenderRef != d.in.CurrentRender
}

// pinStep makes the pinned render the one to apply (step 5).
func pinStep(d *decision) *Result {
	if !d.pinned() {
		return nil
	}
	pin := d.in.Pin
	if !pin.RenderExists {
		return &Result{
			Reason: v1.ReasonPinned,
			Message: fmt.Sprintf("Pinned at render %s, but its Render no longer exists; nothing is applied. "+
				"Pin an existing render or unpin.", pin.RenderRef),
		}
	}
	d.target = pin.RenderRef
	d.report = &Result{Reason: v1.ReasonPinned, Message: pinnedMessage(pin.RenderRef, d.in.CurrentRender)}
	return nil
}

func pinnedMessage(pinned, current string) string {
	return fmt.Sprintf("Pinned at render %s; the current render %s is held. Unpin to apply it.", pinned, current)
}

// Messages of the manual mode.
const (
	msgManualInSync  = "The Release is in sync with its render; in manual mode the apply waits for /sync."
	msgManualDiffers = "The render differs from the last applied render; in manual mode the apply waits " +
		"for /sync. Run kubectl convoy release sync to apply it."
	msgManualNoneApplied = "No render has been applied yet; in manual mode the apply waits for /sync. " +
		"Run kubectl convoy release sync to apply it."
	msgAutomaticApplied = "The render is applied."
	msgRolledBack       = "The render failed its rollout and was rolled back; the previous render stays " +
		"applied until the render changes or a forced /sync. Change the values or the chart for a new " +
		"render, or run kubectl convoy release sync --force to roll this one out again."
)

// staleMessage says that the /sync req approved a render other than current, and what
// follows (then).
func staleMessage(req Request, current, then string) string {
	return fmt.Sprintf("The /sync of %s approved render %s; the current render is %s: %s.",
		req.At.UTC().Format(time.RFC3339), v1.RenderRef(req.Bound).Short(), v1.RenderRef(current).Short(), then)
}

// syncPolicyStep is step 6: automatic mode and manual mode with a pending /sync go on;
// manual mode without one reports and stops, with no apply and no dry run.
//
// A render whose rollout was rolled back reports RolledBack, as the rollback did: a
// /sync would not apply it (step 7 keeps the previous render), only a new render or a
// forced sync would.
func syncPolicyStep(d *decision) *Result {
	if d.in.Policy.Automatic || d.plan.Sync.Pending || d.rollingBack {
		return nil
	}
	if r := d.in.Rollout; r != nil && r.Phase == v1.RolloutRolledBack && r.RenderRef == d.target && !d.plan.Force.Pending {
		return &Result{Reason: v1.ReasonRolledBack, Message: msgRolledBack}
	}
	switch {
	case d.target == d.in.LastSuccessfulRender && d.report != nil:
		// In sync with the pinned render: the pin still holds the current one.
		res := *d.report
		return &res
	case d.target == d.in.LastSuccessfulRender && d.plan.Sync.Stale:
		return &Result{Reason: v1.ReasonApplied, Message: withSentence(msgManualInSync, staleMessage(d.plan.Sync, d.in.CurrentRender, "it is not applied"))}
	case d.target == d.in.LastSuccessfulRender:
		return &Result{Reason: v1.ReasonApplied, Message: msgManualInSync}
	case d.plan.Sync.Stale:
		return &Result{Reason: v1.ReasonWaitingForSync, Message: staleMessage(d.plan.Sync, d.in.CurrentRender,
			"review it with kubectl convoy release diff and approve it with kubectl convoy release sync")}
	case d.in.LastSuccessfulRender == "":
		return &Result{Reason: v1.ReasonWaitingForSync, Message: msgManualNoneApplied}
	default:
		return &Result{Reason: v1.ReasonWaitingForSync, Message: msgManualDiffers}
	}
}

// rolloutStep judges a Progressing rollout by the observer's health of its render:
// Healthy is Succeeded; Degraded, or the deadline passing first, is Failed. A Failed
// rollout of the render to apply whose failurePolicy action is Rollback makes its
// previous render the one to apply, in manual mode too: the failurePolicy is the
// person's standing order, and the previous render is the last one they approved. A
// pending force does neither: it starts a new rollout (step 12).
func rolloutStep(d *decision) *Result {
	r, fp := d.in.Rollout, d.in.FailurePolicy
	if r == nil || fp == nil || d.plan.Force.Pending {
		return nil
	}
	phase := r.Phase
	if phase == v1.RolloutProgressing {
		h := d.in.Health
		assessed := h != nil && h.RenderRef == r.RenderRef
		switch {
		case assessed && h.State == v1.HealthHealthy && d.in.WaveHold == r.RenderRef:
			// Healthy so far, but later waves of the render are not applied yet.
			return nil
		case assessed && h.State == v1.HealthHealthy:
			d.plan.Rollout = &RolloutChange{Phase: v1.RolloutSucceeded, Message: "The render became Healthy before its deadline."}
			return nil
		case assessed && degraded(d.in, h):
			d.plan.Rollout = &RolloutChange{Phase: v1.RolloutFailed, Message: "The render became Degraded."}
		case !r.Deadline.IsZero() && !d.in.Now.Before(r.Deadline):
			d.plan.Rollout = &RolloutChange{Phase: v1.RolloutFailed, Message: fmt.Sprintf(
				"The render did not become Healthy before its deadline %s.", r.Deadline.UTC().Format(time.RFC3339))}
		default:
			return nil
		}
		phase = v1.RolloutFailed
	}
	if phase != v1.RolloutFailed || fp.Action == v1.FailureActionHalt || r.RenderRef != d.target {
		return nil
	}
	if r.PreviousRenderRef == "" || r.PreviousRenderRef == r.RenderRef {
		if d.plan.Rollout != nil {
			d.plan.Rollout.Message += " There is no previous render to roll back to."
		}
		return nil
	}
	d.target = r.PreviousRenderRef
	d.report = &Result{Reason: v1.ReasonRolledBack, Message: msgRolledBack}
	d.rollbackHold, d.rollingBack = true, true
	return nil
}

// degraded reports whether h, the observer's health of the rollout's render, says the
// render is Degraded. While the render's apply holds at a sync wave (WaveHold), only
// the objects of the waves applied so far count: an object of a later wave is still
// the previous render's (a Deployment a rollback left ProgressDeadlineExceeded, say)
// and cannot fail this render's rollout (decision 0117, found by the chaos harness). The
// applied waves are the first WaveHoldApplied distinct waves of the inventory's
// objects, which list the render's applied waves and may list older ones: a lower
// bound, so an object of a later wave never counts.
func degraded(in Input, h *Health) bool {
	if h.State != v1.HealthDegraded {
		return false
	}
	if in.WaveHold == "" || in.WaveHold != h.RenderRef {
		return true
	}
	waves := slices.Compact(slices.Sorted(maps.Values(h.Waves)))
	if in.WaveHoldApplied <= 0 || len(waves) == 0 {
		return false
	}
	last := waves[min(int(in.WaveHoldApplied), len(waves))-1]
	for ref, state := range h.Objects {
		if w, ok := h.Waves[ref]; ok && w <= last && state == v1.HealthDegraded {
			return true
		}
	}
	return false
}

// rolloutHoldStep is step 7: while the render to apply is the one whose rollout was
// rolled back, and no force is pending, keep the previous render applied and report
// RolledBack. A hook batch of that render recorded as running is a forced sync's (the
// hold runs no hooks): its apply goes on as forced, with no hold.
func rolloutHoldStep(d *decision) *Result {
	r := d.in.Rollout
	if r == nil || r.Phase != v1.RolloutRolledBack || r.RenderRef != d.target || d.plan.Force.Pending {
		return nil
	}
	if d.in.HooksRunning == d.target {
		d.forcedHooks = true
		return nil
	}
	res := &Result{Reason: v1.ReasonRolledBack, Message: msgRolledBack}
	previous := r.PreviousRenderRef
	if previous == "" {
		previous = d.in.LastSuccessfulRender
	}
	if previous == "" || previous == r.RenderRef {
		return res
	}
	d.target = previous
	d.report = res
	d.rollbackHold = true
	return nil
}

// hooksStep is step 8, as far as it is decided before the apply: hooks run for a
// render other than the last successful one and on a forced sync, and a batch that
// status.hooks records as running for the render goes on; after a failed hook the
// render waits for a new render or a forced sync.
func hooksStep(d *decision) *Result {
	force := d.plan.Force.Pending
	if h := d.in.FailedHook; h != nil && h.RenderRef == d.target && !force {
		return &Result{Reason: v1.ReasonHookFailed, Message: h.Message}
	}
	running := d.in.HooksRunning != "" && d.in.HooksRunning == d.target
	if running && !force && d.in.HooksRunningPhase == v1.HookPreApply && (d.in.HooksForced || d.target == d.in.LastSuccessfulRender) {
		// PreApply batches recorded as a forced sync's, and those of the render applied
		// last (which run only on a forced sync, also when recorded before
		// status.hooks[].forced existed): the reconciles that carry them on go on with
		// the force's apply (decision 0093).
		d.forcedHooks = true
	}
	d.apply.RunHooks = !d.rollbackHold && (force || running || d.target != d.in.LastSuccessfulRender)
	d.apply.RerunHooks = d.apply.RunHooks && force
	return nil
}

// dryRunStep is step 9: the pre-apply dry run comes before anything of the render is
// applied, unless a force skips it. The reconciles that carry on an apply that began
// (the render's apply held at a sync wave, or a forced sync's hook batches) do not
// dry-run: the first waves are applied already, or the force's skip lasts for its
// whole apply.
func dryRunStep(d *decision) *Result {
	continued := d.in.WaveHold != "" && d.in.WaveHold == d.target
	d.apply.Forced = d.plan.Force.Pending || d.forcedHooks
	d.apply.DryRun = !d.apply.Forced && !continued
	return nil
}

// rolloutStartStep decides whether the apply starts a new Progressing rollout (step
// 12) once its first sync wave is applied: with a failurePolicy, for a render other
// than the rollout's, or on a forced sync, which also clears a Failed or RolledBack
// rollout, also in the reconcile that applies after the forced sync's hook batches.
func rolloutStartStep(d *decision) *Result {
	if d.in.FailurePolicy == nil || d.rollbackHold {
		return nil
	}
	r := d.in.Rollout
	d.apply.StartRollout = d.plan.Force.Pending || d.forcedHooks || r == nil || r.RenderRef != d.target
	return nil
}
