package policy

import (
	"fmt"
	"strings"
	"time"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/hooks"
)

// HookJob is the observed state of a hook Job (hooks.JobPhase's).
type HookJob = hooks.JobState

// HookBatch is a batch of one phase as status.hooks records it: where a run of the
// hooks goes on from.
type HookBatch struct {
	Phase v1.HookPhase
	Batch int32
	// Done: every hook of the batch succeeded. When it is the last batch of its
	// phase, the phase is done.
	Done bool
}

// HookStep is what to do about the hooks of one phase in this reconcile.
type HookStep struct {
	// Apply are the object hooks (chart hooks that are not Jobs) of the batches up to
	// the running one: apply them, in order, before the Jobs are created.
	Apply []hooks.Hook
	// Create are the hooks of the running batch whose Jobs do not exist yet: create
	// them now.
	Create []hooks.Hook
	// Status is the new status.hooks: the hooks of the running or failed batch with
	// the state of their Jobs, or, when the phase completes in this step, of its last
	// batch, all Succeeded; nil when nothing is to be recorded.
	Status []v1.HookStatus
	// Stop is WaitingForHooks while the batch runs, HookFailed when one of its Jobs
	// failed or timed out; nil when every batch of the phase is done.
	Stop *Result
	// Completed: the phase's last batch completed in this step (not before): its
	// hook-succeeded delete policies apply now.
	Completed bool
}

// PlanHooks decides the next step of the hooks of phase, for a run (install, upgrade
// or delete), given every hook of the run (any phase, any order), the batch
// status.hooks records for this render (nil: none; batches before it are done, even if
// their Jobs are gone since) and the observed state of each Job by name (missing:
// Pending).
//
// Batches run in ascending order; in each, the object hooks are applied first, then
// its Jobs run. The first batch whose Jobs have not all succeeded is the running one: a
// failed Job fails it (HookFailed, naming the Job and why); else its missing Jobs are
// created and the Release waits (WaitingForHooks, naming the batch and its Jobs) until
// the earliest timeout of its Jobs (Stop.RecheckAfter). A batch of objects only is done
// once they are applied.
func PlanHooks(phase v1.HookPhase, run v1.HookRun, all []hooks.Hook, resume *HookBatch, jobs map[string]HookJob) HookStep {
	var own []hooks.Hook
	for _, h := range all {
		if h.Phase == phase {
			own = append(own, h)
		}
	}
	hooks.Sort(own)
	if resume != nil && resume.Phase != phase {
		if phase == v1.HookPreApply && resume.Phase == v1.HookPostApply {
			return HookStep{} // the PreApply batches were done before the apply
		}
		resume = nil
	}
	if len(own) == 0 || (resume != nil && resume.Done && resume.Batch >= own[len(own)-1].Batch) {
		return HookStep{} // nothing to run, or done in an earlier reconcile
	}
	var step HookStep
	for start := 0; start < len(own); {
		end := start
		for end < len(own) && own[end].Batch == own[start].Batch {
			end++
		}
		batch := own[start:end]
		start = end
		if resume != nil && batch[0].Batch < resume.Batch {
			continue
		}
		b, done := planBatch(phase, run, batch, jobs)
		if b.Stop != nil && b.Stop.Reason == v1.ReasonHookFailed {
			return b // apply and create nothing
		}
		step.Apply = append(step.Apply, b.Apply...)
		if !done {
			step.Create, step.Status, step.Stop = b.Create, b.Status, b.Stop
			return step
		}
		step.Status = b.Status
	}
	step.Completed = true
	return step
}

// planBatch decides about one batch; done when every Job of it succeeded.
func planBatch(phase v1.HookPhase, run v1.HookRun, batch []hooks.Hook, jobs map[string]HookJob) (HookStep, bool) {
	var step HookStep
	failed := false
	var recheck time.Duration
	var names []string
	done := true
	for _, h := range batch {
		st := v1.HookStatus{Name: h.Name, Batch: h.Batch, HookPhase: phase, Run: run, Job: h.Job}
		if !h.IsJob() {
			step.Apply = append(step.Apply, h)
			st.Phase, st.Message = v1.HookJobSucceeded, fmt.Sprintf("%s %s applied.", h.Object.GetKind(), h.Object.GetName())
			step.Status = append(step.Status, st)
			continue
		}
		j, ok := jobs[h.Job]
		if !ok || j.Phase == "" {
			j = HookJob{Phase: v1.HookJobPending}
		}
		names = append(names, h.Job)
		switch j.Phase {
		case v1.HookJobSucceeded:
		case v1.HookJobFailed:
			done, failed = false, true
		case v1.HookJobPending:
			done = false
			step.Create = append(step.Create, h)
			j = HookJob{Phase: v1.HookJobRunning, Message: msgHookJobRuns, RecheckAfter: timeoutOf(h)}
		default:
			done = false
		}
		if j.RecheckAfter > 0 && (recheck == 0 || j.RecheckAfter < recheck) {
			recheck = j.RecheckAfter
		}
		st.Phase, st.Message = j.Phase, j.Message
		step.Status = append(step.Status, st)
	}
	if done {
		return step, true
	}
	b := batch[0].Batch
	if failed {
		step.Create, step.Apply = nil, nil
		step.Stop = &Result{Reason: v1.ReasonHookFailed, Message: FailedHookOf("", step.Status).Message}
		return step, false
	}
	step.Stop = &Result{Reason: v1.ReasonWaitingForHooks, RecheckAfter: recheck, Message: fmt.Sprintf(
		"Waiting for %s hook batch %d: Jobs %s.", phase, b, strings.Join(names, ", "))}
	return step, false
}

// msgHookJobRuns is the message of a running hook Job (health.HookJobPhase's).
const msgHookJobRuns = "The Job runs."

func timeoutOf(h hooks.Hook) time.Duration {
	if h.Timeout > 0 {
		return h.Timeout
	}
	return v1.DefaultHookTimeout
}

// FailedHookOf is the FailedHook that status.hooks records for renderRef (the render
// whose Jobs it names): the Failed entries of the batch; nil when none failed. Its
// message is the one the reconcile that saw the failure reported, so the condition
// does not change.
func FailedHookOf(renderRef string, status []v1.HookStatus) *FailedHook {
	failed := HookFailures(status)
	if failed == "" {
		return nil
	}
	return &FailedHook{RenderRef: renderRef, Message: fmt.Sprintf(
		"Hook batch %d failed: %s. Nothing more runs for this render until the render changes "+
			"or a forced /sync runs the hooks again.", status[0].Batch, failed)}
}

// HookFailures lists the Failed entries of status, each with its Job (or, for a hook
// object the API server refused, its hook) and why, joined by "; "; empty when none
// failed.
func HookFailures(status []v1.HookStatus) string {
	var failed []string
	for _, h := range status {
		switch {
		case h.Phase != v1.HookJobFailed:
		case h.Job == "":
			failed = append(failed, fmt.Sprintf("hook %s: %s", h.Name, strings.TrimSuffix(h.Message, ".")))
		default:
			failed = append(failed, fmt.Sprintf("Job %s of hook %s: %s", h.Job, h.Name, strings.TrimSuffix(h.Message, ".")))
		}
	}
	return strings.Join(failed, "; ")
}
