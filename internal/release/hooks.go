package release

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// Hook is one lifecycle hook of the render to apply (spec.lifecycle.hooks and the
// chart's Helm hook Jobs), as the hook decisions need it.
type Hook struct {
	// Name is the hook's name.
	Name string
	// Phase is v1.HookPreApply or v1.HookPostApply.
	Phase v1.HookPhase
	// Batch orders the hooks of one phase, lowest first.
	Batch int32
	// Job is the name of the hook's Job for the render (JobName).
	Job string
	// Timeout is how long the Job may run; 0 means v1.DefaultHookTimeout.
	Timeout time.Duration
}

// HookJob is the observed state of a hook Job.
type HookJob struct {
	// Phase is Pending (the Job does not exist), Running, Succeeded or Failed (which
	// includes a timeout).
	Phase v1.HookJobPhase
	// Message says why, for people.
	Message string
	// RecheckAfter, for a Running Job, is when it times out if nothing changes first.
	RecheckAfter time.Duration
}

// HookBatch is a batch of one phase: where a run of the hooks goes on from.
type HookBatch struct {
	Phase v1.HookPhase
	Batch int32
}

// HookStep is what to do about the hooks of one phase in this reconcile.
type HookStep struct {
	// Create are the hooks of the running batch whose Jobs do not exist yet: create
	// them now.
	Create []Hook
	// Status is the new status.hooks: the hooks of the running or failed batch with
	// the state of their Jobs; nil when every batch of the phase is done.
	Status []v1.HookStatus
	// Stop is WaitingForHooks while the batch runs, HookFailed when one of its Jobs
	// failed or timed out; nil when every batch of the phase is done.
	Stop *Result
}

// PlanHooks decides the next step of the hooks of phase, given every hook of the
// render (any phase, any order), the batch status.hooks records as running for this
// render (nil: none; batches before it are done, even if their Jobs are gone since)
// and the observed state of each Job by name (missing: Pending).
//
// Batches run in ascending order; the first batch whose Jobs have not all succeeded
// is the running one: a failed Job fails it (HookFailed, naming the Job and why);
// else its missing Jobs are created and the Release waits (WaitingForHooks, naming the
// batch and its Jobs) until the earliest timeout of its Jobs (Stop.RecheckAfter).
func PlanHooks(phase v1.HookPhase, hooks []Hook, resume *HookBatch, jobs map[string]HookJob) HookStep {
	var own []Hook
	for _, h := range hooks {
		if h.Phase == phase {
			own = append(own, h)
		}
	}
	slices.SortFunc(own, func(a, b Hook) int {
		return cmp.Or(cmp.Compare(a.Batch, b.Batch), strings.Compare(a.Name, b.Name))
	})
	if resume != nil && resume.Phase != phase {
		if phase == v1.HookPreApply && resume.Phase == v1.HookPostApply {
			return HookStep{} // the PreApply batches were done before the apply
		}
		resume = nil
	}
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
		if step, done := planBatch(phase, batch, jobs); !done {
			return step
		}
	}
	return HookStep{}
}

// planBatch decides about one batch; done when every Job of it succeeded.
func planBatch(phase v1.HookPhase, batch []Hook, jobs map[string]HookJob) (HookStep, bool) {
	var step HookStep
	failed := false
	var recheck time.Duration
	names := make([]string, 0, len(batch))
	done := true
	for _, h := range batch {
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
		step.Status = append(step.Status, v1.HookStatus{Name: h.Name, Batch: h.Batch, Phase: j.Phase, Job: h.Job, Message: j.Message})
	}
	if done {
		return HookStep{}, true
	}
	b := batch[0].Batch
	if failed {
		step.Create = nil
		step.Stop = &Result{Reason: v1.ReasonHookFailed, Message: FailedHookOf("", step.Status).Message}
		return step, false
	}
	step.Stop = &Result{Reason: v1.ReasonWaitingForHooks, RecheckAfter: recheck, Message: fmt.Sprintf(
		"Waiting for %s hook batch %d: Jobs %s.", phase, b, strings.Join(names, ", "))}
	return step, false
}

// msgHookJobRuns is the message of a running hook Job (health.HookJobPhase's).
const msgHookJobRuns = "The Job runs."

func timeoutOf(h Hook) time.Duration {
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
	var failed []string
	for _, h := range status {
		if h.Phase == v1.HookJobFailed {
			failed = append(failed, fmt.Sprintf("Job %s of hook %s: %s", h.Job, h.Name, strings.TrimSuffix(h.Message, ".")))
		}
	}
	if len(failed) == 0 {
		return nil
	}
	return &FailedHook{RenderRef: renderRef, Message: fmt.Sprintf(
		"Hook batch %d failed: %s. Nothing more runs for this render until the render changes "+
			"or a forced /sync runs the hooks again.", status[0].Batch, strings.Join(failed, "; "))}
}

// maxJobName is the longest hook Job name: a DNS label, since the Job controller
// copies the name into the job-name label of its pods.
const maxJobName = 63

// HookJobName is the name of the Job of hook for a render of the Release release:
// <release>-<hook>-<first 10 hex digits of the render ref>, lowercase, with every
// character other than a-z, 0-9 and '-' replaced by '-'. When that is longer than 63
// characters, <release>-<hook> is cut and followed by the first 8 hex digits of its
// sha256, so that names stay distinct: <cut>-<8 hex>-<10 hex>.
func HookJobName(release, hook, renderRef string) string {
	short := strings.TrimPrefix(renderRef, "sha256:")
	if len(short) > 10 {
		short = short[:10]
	}
	prefix := dnsLabel(release + "-" + hook)
	if len(prefix)+1+len(short) <= maxJobName {
		return prefix + "-" + short
	}
	sum := sha256.Sum256([]byte(release + "-" + hook))
	cut := strings.TrimRight(prefix[:maxJobName-len(short)-10], "-")
	return cut + "-" + hex.EncodeToString(sum[:])[:8] + "-" + short
}

func dnsLabel(s string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-':
			return r
		case r >= 'A' && r <= 'Z':
			return r - 'A' + 'a'
		}
		return '-'
	}, s)
	return strings.Trim(s, "-")
}

// HookLabelValue is the value of the convoy.kumodo.io/hook label of a hook's Job: the
// hook's name, cut to the 63 characters a label value may have.
func HookLabelValue(hook string) string {
	if len(hook) > maxJobName {
		hook = strings.TrimRight(hook[:maxJobName], "-_.")
	}
	return hook
}
