package apply

import (
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	helmrelease "helm.sh/helm/v4/pkg/release/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/hooks"
	"kumodo.io/convoy/internal/policy"
	"kumodo.io/convoy/internal/testenv"
)

const hookRenderRef = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// hookRunOf is the install run of a lifecycle Job hook "migrate" and a chart
// ConfigMap hook "settings" (hook-succeeded), both PreApply batch 0, in ns.
func hookRunOf(t *testing.T, ns string) HookRun {
	t.Helper()
	spec := batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever,
		Containers:    []corev1.Container{{Name: "migrate", Image: "busybox"}},
	}}}
	chart := hooks.Chart{Object: configMap(ns, "settings", map[string]string{"a": "b"}),
		Events: []helmrelease.HookEvent{helmrelease.HookPreInstall}, DeletePolicies: []helmrelease.HookDeletePolicy{hooks.HookSucceeded}}
	owner := hooks.Owner{Name: release.Name, Namespace: release.Namespace, TargetNamespace: ns}
	hs, err := hooks.ForRun(owner, hookRenderRef, v1alpha1.HookRunInstall,
		[]v1alpha1.Hook{{Name: "migrate", Phase: v1alpha1.HookPreApply, Job: &spec}}, []hooks.Chart{chart})
	if err != nil {
		t.Fatal(err)
	}
	return HookRun{Release: release, Namespace: ns, RenderRef: hookRenderRef, Run: v1alpha1.HookRunInstall, Hooks: hs}
}

// The hook runner carries out what release.PlanHooks decides: it applies the hook
// object and creates the Job of the batch, reads the Job back as the run's, deletes
// the object by its hook-succeeded policy, and deletes the Release's hook Jobs.
func TestHookRunnerCarriesOutAStep(t *testing.T) {
	e := integration(t)
	run := hookRunOf(t, e.ns)
	never := func(hooks.Hook) bool { return false }

	jobs, err := e.applier.ObserveHookJobs(e.ctx, run, v1alpha1.HookPreApply, nil, never, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs.States) != 0 || len(jobs.Found) != 0 {
		t.Fatalf("before the run: states %v, found %v; want none", jobs.States, jobs.Found)
	}
	step := policy.PlanHooks(v1alpha1.HookPreApply, run.Run, run.Hooks, nil, jobs.States)
	if len(step.Apply) != 1 || len(step.Create) != 1 {
		t.Fatalf("the plan applies %d objects and creates %d Jobs, want 1 and 1", len(step.Apply), len(step.Create))
	}
	replacing, err := e.applier.RunHookStep(e.ctx, v1alpha1.HookPreApply, step, jobs.Found)
	if err != nil || len(replacing) != 0 {
		t.Fatalf("RunHookStep: replacing %v, err %v", replacing, err)
	}
	settings := configMap(e.ns, "settings", nil)
	if _, ok := e.get(t, settings); !ok {
		t.Fatal("the hook object was not applied")
	}
	jobName := step.Create[0].Job
	job := &batchv1.Job{}
	if err := e.client.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: jobName}, job); err != nil {
		t.Fatalf("the hook Job was not created: %v", err)
	}
	if got := job.ManagedFields[0].Manager; got != v1alpha1.FieldManager {
		t.Errorf("the hook Job's field manager is %q, want %q", got, v1alpha1.FieldManager)
	}

	jobs, err = e.applier.ObserveHookJobs(e.ctx, run, v1alpha1.HookPreApply, nil, never, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{jobName}, slices.Collect(maps.Keys(jobs.States))); diff != "" || len(jobs.Found) != 0 {
		t.Errorf("after the run, the run's Jobs (-want +got):\n%s found: %v", diff, jobs.Found)
	}

	if err := e.applier.DeleteHooksByPolicy(e.ctx, run, v1alpha1.HookPreApply, nil, hooks.HookSucceeded); err != nil {
		t.Fatal(err)
	}
	if _, ok := e.get(t, settings); ok {
		t.Error("the hook-succeeded object is still there")
	}
	if err := e.applier.DeleteHookJobs(e.ctx, release, e.ns, nil); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, e.ctx, "the hook Job to be deleted", 30*time.Second, func() (bool, string) {
		err := e.client.Get(e.ctx, client.ObjectKeyFromObject(job), job)
		return client.IgnoreNotFound(err) == nil && (err != nil || job.DeletionTimestamp != nil), fmt.Sprintf("err %v", err)
	})
}

// A Job under a hook Job's name that convoy did not create for the Release is found
// as foreign, and the runner does not delete it.
func TestHookRunnerLeavesAForeignJob(t *testing.T) {
	e := integration(t)
	run := hookRunOf(t, e.ns)
	hook := run.Hooks[firstJob(run.Hooks)]
	foreign := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: hook.Job},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "x", Image: "busybox"}}}}}}
	if err := e.client.Create(e.ctx, foreign); err != nil {
		t.Fatal(err)
	}
	jobs, err := e.applier.ObserveHookJobs(e.ctx, run, v1alpha1.HookPreApply, nil, func(hooks.Hook) bool { return false }, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if got := jobs.Found[hook.Job].Found; got != hooks.FoundForeign {
		t.Fatalf("the Job is found as %q, want %q", got, hooks.FoundForeign)
	}
	if err := e.applier.DeleteHook(e.ctx, run, hook, "in the test"); err != nil {
		t.Fatal(err)
	}
	if err := e.client.Get(e.ctx, client.ObjectKeyFromObject(foreign), foreign); err != nil || foreign.DeletionTimestamp != nil {
		t.Errorf("the foreign Job was deleted: %v", err)
	}
}

// firstJob is the index of the first Job hook of hs.
func firstJob(hs []hooks.Hook) int {
	for i, h := range hs {
		if h.IsJob() {
			return i
		}
	}
	return -1
}
