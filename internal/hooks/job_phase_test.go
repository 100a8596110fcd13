package hooks

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

func TestJobPhase(t *testing.T) {
	job := func(start *metav1.Time, conds ...batchv1.JobCondition) *batchv1.Job {
		return &batchv1.Job{
			ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(t0)},
			Status:     batchv1.JobStatus{StartTime: start, Conditions: conds},
		}
	}
	cond := func(typ batchv1.JobConditionType, s corev1.ConditionStatus) batchv1.JobCondition {
		return batchv1.JobCondition{Type: typ, Status: s, Reason: "BackoffLimitExceeded", Message: "Job has reached the specified backoff limit"}
	}
	cases := map[string]struct {
		job     *batchv1.Job
		timeout time.Duration
		now     time.Time
		want    JobState
	}{
		"no Job yet": {
			now:  t0,
			want: JobState{Phase: v1.HookJobPending, Message: "The Job is not created yet."},
		},
		"Complete": {
			job: job(at(0), cond(batchv1.JobComplete, corev1.ConditionTrue)), now: t0.Add(time.Hour),
			want: JobState{Phase: v1.HookJobSucceeded, Message: "The Job succeeded."},
		},
		"Failed": {
			job: job(at(0), cond(batchv1.JobFailed, corev1.ConditionTrue)), now: t0.Add(time.Minute),
			want: JobState{Phase: v1.HookJobFailed, Message: "The Job failed: BackoffLimitExceeded: Job has reached the specified backoff limit"},
		},
		"a condition that is not True does not count": {
			job: job(at(0), cond(batchv1.JobFailed, corev1.ConditionFalse)), timeout: 5 * time.Minute, now: t0.Add(time.Minute),
			want: JobState{Phase: v1.HookJobRunning, Message: "The Job runs.", RecheckAfter: 4 * time.Minute},
		},
		"running within the timeout, from startTime": {
			job: job(at(time.Minute)), timeout: 5 * time.Minute, now: t0.Add(2 * time.Minute),
			want: JobState{Phase: v1.HookJobRunning, Message: "The Job runs.", RecheckAfter: 4 * time.Minute},
		},
		"running past the timeout is Failed": {
			job: job(at(0)), timeout: 5 * time.Minute, now: t0.Add(5 * time.Minute),
			want: JobState{Phase: v1.HookJobFailed, Message: "The Job timed out after 5m0s."},
		},
		"no startTime: from creation; default timeout 10m": {
			job: job(nil), now: t0.Add(10*time.Minute + time.Second),
			want: JobState{Phase: v1.HookJobFailed, Message: "The Job timed out after 10m0s."},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, JobPhase(tc.job, tc.timeout, tc.now)); diff != "" {
				t.Errorf("JobPhase (-want +got):\n%s", diff)
			}
		})
	}
}
