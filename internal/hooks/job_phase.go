package hooks

import (
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// DefaultTimeout is a hook's timeout when the Release does not set one.
const DefaultTimeout = v1.DefaultHookTimeout

// JobState is the state of one hook Job.
type JobState struct {
	// Phase is Pending, Running, Succeeded or Failed (which includes a timeout).
	Phase v1.HookJobPhase
	// Message says why, for people.
	Message string
	// RecheckAfter, for a Running Job, is when it times out if nothing changes first;
	// the observer looks again then. Zero otherwise.
	RecheckAfter time.Duration
}

// JobPhase assesses a hook Job: nil is Pending (not created yet); the Complete
// condition is Succeeded; the Failed condition, or running longer than timeout (from
// status.startTime, else creation) is Failed; else Running. A timeout of 0 is
// DefaultTimeout.
func JobPhase(job *batchv1.Job, timeout time.Duration, now time.Time) JobState {
	if job == nil {
		return JobState{Phase: v1.HookJobPending, Message: "The Job is not created yet."}
	}
	for _, c := range job.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobComplete:
			return JobState{Phase: v1.HookJobSucceeded, Message: "The Job succeeded."}
		case batchv1.JobFailed:
			return JobState{Phase: v1.HookJobFailed, Message: fmt.Sprintf("The Job failed: %s: %s", c.Reason, c.Message)}
		}
	}
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	start := job.CreationTimestamp.Time
	if job.Status.StartTime != nil {
		start = job.Status.StartTime.Time
	}
	left := start.Add(timeout).Sub(now)
	if left <= 0 {
		return JobState{Phase: v1.HookJobFailed, Message: fmt.Sprintf("The Job timed out after %s.", timeout)}
	}
	return JobState{Phase: v1.HookJobRunning, Message: "The Job runs.", RecheckAfter: left}
}
