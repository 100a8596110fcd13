package hooks

import (
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// What a run finds under its Job's name decides whether it reads the Job, replaces
// it (Helm's before-hook-creation), waits, or stops: only the Release's own Jobs are
// ever replaced.
func TestClassify(t *testing.T) {
	run := RunID(RunUpgrade, v1.HookPreApply, "sha256:2222")
	jobOf := func(release, namespace string, annotations map[string]string) *batchv1.Job {
		j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "web-migrate", Namespace: "apps", Labels: map[string]string{}, Annotations: annotations}}
		if release != "" {
			v1.SetReleaseLabels(j, release, namespace)
		}
		return j
	}
	deleting := jobOf("web", "team-a", map[string]string{v1.AnnotationHookRun: run})
	deleting.DeletionTimestamp = at(0)
	foreignDeleting := jobOf("", "", nil)
	foreignDeleting.DeletionTimestamp = at(0)
	cases := map[string]struct {
		job  *batchv1.Job
		want Found
	}{
		"none":                                    {job: nil, want: FoundNone},
		"this run's":                              {job: jobOf("web", "team-a", map[string]string{v1.AnnotationHookRun: run}), want: FoundOfRun},
		"an older convoy's, named per render":     {job: jobOf("web", "team-a", nil), want: FoundOfRun},
		"the previous render's":                   {job: jobOf("web", "team-a", map[string]string{v1.AnnotationHookRun: RunID(RunUpgrade, v1.HookPreApply, "sha256:1111")}), want: FoundOtherRun},
		"the install's, same render":              {job: jobOf("web", "team-a", map[string]string{v1.AnnotationHookRun: RunID(RunInstall, v1.HookPreApply, "sha256:2222")}), want: FoundOtherRun},
		"the other phase's, same render":          {job: jobOf("web", "team-a", map[string]string{v1.AnnotationHookRun: RunID(RunUpgrade, v1.HookPostApply, "sha256:2222")}), want: FoundOtherRun},
		"being deleted":                           {job: deleting, want: FoundDeleting},
		"not convoy's, being deleted":             {job: foreignDeleting, want: FoundDeleting},
		"not convoy's":                            {job: jobOf("", "", nil), want: FoundForeign},
		"another Release's of the same name":      {job: jobOf("web", "team-b", map[string]string{v1.AnnotationHookRun: run}), want: FoundForeign},
		"another Release's in the same namespace": {job: jobOf("api", "team-a", nil), want: FoundForeign},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var job metav1.Object
			if tc.job != nil {
				job = tc.job
			}
			if got := Classify(job, "web", "team-a", run); got != tc.want {
				t.Errorf("Classify() = %s, want %s", got, tc.want)
			}
		})
	}
}

// A status.hooks entry names its run only when it records the render, the run and the
// phase.
func TestRunIDOf(t *testing.T) {
	cases := map[string]struct {
		status v1.HookStatus
		want   string
	}{
		"a full entry": {status: v1.HookStatus{Run: RunUpgrade, HookPhase: v1.HookPostApply, RenderRef: "sha256:1"}, want: "Upgrade/PostApply/sha256:1"},
		"no render":    {status: v1.HookStatus{Run: RunUpgrade, HookPhase: v1.HookPostApply}},
		"no run":       {status: v1.HookStatus{HookPhase: v1.HookPostApply, RenderRef: "sha256:1"}},
		"no phase":     {status: v1.HookStatus{Run: RunUpgrade, RenderRef: "sha256:1"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := RunIDOf(tc.status); got != tc.want {
				t.Errorf("RunIDOf() = %q, want %q", got, tc.want)
			}
		})
	}
}
