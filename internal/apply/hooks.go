package apply

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/go-logr/logr"
	helmrelease "helm.sh/helm/v4/pkg/release/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/hooks"
	"kumodo.io/convoy/internal/policy"
)

// HookRun is one run of a Release's hooks (install, upgrade or delete) on its
// target: the hooks internal/hooks built for one render, and what tells the run's
// Jobs from those of other runs and of other owners. The hook runner carries out
// what release.PlanHooks decides; it decides nothing about when a hook runs.
type HookRun struct {
	// Release owns the hooks.
	Release Owner
	// Namespace is the Release's target namespace, where its hook Jobs are.
	Namespace string
	// RenderRef is the render whose hooks run.
	RenderRef string
	// Run is install, upgrade or delete.
	Run v1alpha1.HookRun
	// Hooks are the run's hooks, of every phase.
	Hooks []hooks.Hook
}

// FoundJob is a Job found under the name of a hook Job of the run that is not the
// run's (hooks.Classify): another run's, to delete before the run's own is created,
// or one that convoy does not own.
type FoundJob struct {
	Job   *batchv1.Job
	Found hooks.Found
}

// HookJobs are the hook Jobs of a phase as ObserveHookJobs read them.
type HookJobs struct {
	// States are the states of the run's own Jobs, by name, for release.PlanHooks.
	States map[string]policy.HookJob
	// Found are the Jobs of other runs or owners under the names of the run's Jobs.
	Found map[string]FoundJob
}

// HookReplaceWait is how soon a run that deleted the Job of another run looks again
// whether it is gone, to create its own.
const HookReplaceWait = time.Second

// HookError is the failure to apply the object of one hook, naming the hook; its
// message is the apply's (Reason reads through it).
type HookError struct {
	Hook hooks.Hook
	Err  error
}

func (e *HookError) Error() string { return e.Err.Error() }
func (e *HookError) Unwrap() error { return e.Err }

// ObserveHookJobs reads the state of the Jobs of the hooks of phase (a GET by name
// each) from the batch from on (nil: every batch of the phase). A Job that is gone
// counts as Succeeded when succeeded says so of its hook (status.hooks recorded it, in
// a batch whose other Jobs still ran), so that a Job deleted after it finished
// (ttlSecondsAfterFinished) does not run again.
func (a *Applier) ObserveHookJobs(ctx context.Context, run HookRun, phase v1alpha1.HookPhase, from *policy.HookBatch,
	succeeded func(hooks.Hook) bool, now time.Time) (HookJobs, error) {
	out := HookJobs{States: map[string]policy.HookJob{}, Found: map[string]FoundJob{}}
	for _, hook := range run.Hooks {
		if !hook.IsJob() || hook.Phase != phase || (from != nil && from.Phase == phase && hook.Batch < from.Batch) {
			continue
		}
		job, err := a.hookJob(ctx, run.Namespace, hook.Job)
		switch {
		case err != nil:
			return HookJobs{}, err
		case job == nil:
			if succeeded(hook) {
				out.States[hook.Job] = policy.HookJob{Phase: v1alpha1.HookJobSucceeded, Message: "The Job succeeded."}
			}
			continue
		}
		switch found := hooks.Classify(job, run.Release.Name, run.Release.Namespace, hooks.RunID(run.Run, phase, run.RenderRef)); found {
		case hooks.FoundOfRun:
			out.States[hook.Job] = hooks.JobPhase(job, hook.Timeout, now)
		case hooks.FoundDeleting:
			// Deleted for a re-run, or as the Job of an earlier run, and not gone yet:
			// look again shortly.
			out.States[hook.Job] = policy.HookJob{Phase: v1alpha1.HookJobRunning, Message: "The Job of an earlier run is being deleted.", RecheckAfter: HookReplaceWait}
		default:
			// Another run's Job, or one convoy does not own: this run's is still to
			// be created (Pending), and the caller decides about the one found.
			out.Found[hook.Job] = FoundJob{Job: job, Found: found}
		}
	}
	return out, nil
}

// RunHookStep carries out step, a release.PlanHooks decision for phase: it applies
// the hook objects of step.Apply (server-side apply, field manager convoy), then
// creates the Jobs of step.Create; a Job of another run under the name of one (in
// found) is deleted first, as Helm's before-hook-creation does. It returns the
// hooks whose Jobs wait for such a Job to be gone; the caller looks again after
// HookReplaceWait. A hook object's failure is a *HookError that wraps an *Error.
// The caller has already stopped the run on a Job that convoy does not own.
func (a *Applier) RunHookStep(ctx context.Context, phase v1alpha1.HookPhase, step policy.HookStep, found map[string]FoundJob) (replacing []hooks.Hook, err error) {
	logger := logr.FromContextOrDiscard(ctx)
	for _, hook := range step.Apply {
		logger.Info("Applying a hook object", "kind", hook.Object.GetKind(), "name", hook.Object.GetName(), "phase", phase, "batch", hook.Batch)
		if err := a.applyHook(ctx, hook.Object); err != nil {
			return nil, &HookError{Hook: hook, Err: err}
		}
	}
	for _, hook := range step.Create {
		if f, ok := found[hook.Job]; ok && f.Found == hooks.FoundOtherRun {
			gone, err := a.replaceHookJob(ctx, f.Job, hook)
			if err != nil {
				return nil, err
			}
			if !gone {
				replacing = append(replacing, hook)
				continue
			}
		}
		logger.Info("Creating a hook Job", "job", hook.Job, "phase", phase, "batch", hook.Batch)
		if err := a.createHookJob(ctx, hook.Object); err != nil {
			return nil, err
		}
	}
	return replacing, nil
}

// replaceHookJob deletes old, the Job of another run under the name of hook's Job
// (propagation Background: its pods go after it), and reports whether it is gone
// already (a Job has no finalizer of its own, so it usually is), so that hook's Job
// can be created now.
func (a *Applier) replaceHookJob(ctx context.Context, old *batchv1.Job, hook hooks.Hook) (bool, error) {
	logr.FromContextOrDiscard(ctx).Info("Deleting the hook Job of an earlier run before its new run", "job", old.Name,
		"run", old.Annotations[v1alpha1.AnnotationHookRun], "hook", hook.Name)
	if err := a.deleteListedJob(ctx, old); err != nil {
		return false, err
	}
	job, err := a.hookJob(ctx, old.Namespace, old.Name)
	return job == nil, err
}

// applyHook applies a hook object by server-side apply with field manager convoy.
// A failure is an *Error: Unappliable when the server refuses the object as
// rendered (a 422 or 400: every retry would fail the same way), else DeployFailed.
func (a *Applier) applyHook(ctx context.Context, obj *unstructured.Unstructured) error {
	u := obj.DeepCopy()
	unstructured.RemoveNestedField(u.Object, "status")
	if err := a.client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u),
		client.ForceOwnership, client.FieldOwner(v1alpha1.FieldManager)); err != nil {
		return ApplyFailure(refOf(u), err)
	}
	return nil
}

// createHookJob creates a hook Job (field manager convoy): never over an existing
// Job, which ObserveHookJobs found and RunHookStep deleted first when it is the
// Release's. A Job created by someone else meanwhile is an error; the next reconcile
// finds it. A failure is an *Error, as applyHook's.
func (a *Applier) createHookJob(ctx context.Context, obj *unstructured.Unstructured) error {
	u := obj.DeepCopy()
	unstructured.RemoveNestedField(u.Object, "status")
	if err := a.client.Create(ctx, u, client.FieldOwner(v1alpha1.FieldManager)); err != nil {
		return ApplyFailure(refOf(u), err)
	}
	return nil
}

// RerunHookJobs deletes the Jobs of the run's hooks (a forced sync), so that each
// batch creates them anew.
func (a *Applier) RerunHookJobs(ctx context.Context, run HookRun) error {
	for _, hook := range run.Hooks {
		if !hook.IsJob() {
			continue
		}
		if err := a.DeleteHook(ctx, run, hook, "to run it again"); err != nil {
			return err
		}
	}
	return nil
}

// DeleteHooksByPolicy deletes the hooks of phase (of batch, when set) whose delete
// policies include policy. Jobs go with their pods (propagation Background).
func (a *Applier) DeleteHooksByPolicy(ctx context.Context, run HookRun, phase v1alpha1.HookPhase, batch *int32, policy helmrelease.HookDeletePolicy) error {
	for _, hook := range run.Hooks {
		if hook.Phase != phase || (batch != nil && hook.Batch != *batch) || !hook.Deletes(policy) {
			continue
		}
		if err := a.DeleteHook(ctx, run, hook, "by its delete policy "+string(policy)); err != nil {
			return err
		}
	}
	return nil
}

// DeleteHook deletes a hook's Job (with its pods: propagation Background) or object;
// one that is gone already is fine, and a Job of the name that convoy did not create
// for the run's Release is left. why is for the log.
func (a *Applier) DeleteHook(ctx context.Context, run HookRun, hook hooks.Hook, why string) error {
	if hook.IsJob() {
		return a.deleteHookJob(ctx, run, hook, why)
	}
	obj := hook.Object.DeepCopy()
	logr.FromContextOrDiscard(ctx).Info("Deleting a hook "+why, "kind", obj.GetKind(), "namespace", obj.GetNamespace(), "name", obj.GetName())
	err := a.client.Delete(ctx, obj, client.PropagationPolicy(metav1.DeletePropagationBackground))
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete hook %s %s/%s: %w", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
	}
	return nil
}

// deleteHookJob deletes the Job of hook when it is the Release's (of any run), with
// its pods (propagation Background).
func (a *Applier) deleteHookJob(ctx context.Context, run HookRun, hook hooks.Hook, why string) error {
	job, err := a.hookJob(ctx, run.Namespace, hook.Job)
	if job == nil || err != nil || job.DeletionTimestamp != nil {
		return err
	}
	logger := logr.FromContextOrDiscard(ctx)
	if hooks.Classify(job, run.Release.Name, run.Release.Namespace, "") == hooks.FoundForeign {
		logger.Info("Leaving a Job of a hook's name that is not the Release's", "namespace", job.Namespace, "name", job.Name)
		return nil
	}
	logger.Info("Deleting a hook "+why, "kind", "Job", "namespace", job.Namespace, "name", job.Name)
	return a.deleteListedJob(ctx, job)
}

// hookJob reads the Job ns/name; nil when there is none.
func (a *Applier) hookJob(ctx context.Context, ns, name string) (*batchv1.Job, error) {
	job := &batchv1.Job{}
	err := a.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, job)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("read hook Job %s/%s: %w", ns, name, err)
	}
	return job, nil
}

// CleanupHookJobs deletes the hook Jobs of other renders of the run's Release once
// the run's hooks succeeded, as hooks.OldJobsToDelete decides.
func (a *Applier) CleanupHookJobs(ctx context.Context, run HookRun) error {
	if len(run.Hooks) == 0 {
		return nil
	}
	list, err := a.listHookJobs(ctx, run.Release, run.Namespace)
	if err != nil {
		return err
	}
	current := map[string]bool{}
	for _, hook := range run.Hooks {
		if hook.IsJob() {
			current[hook.Job] = true
		}
	}
	var found []hooks.OldJob
	byName := map[string]*batchv1.Job{}
	for i := range list {
		job := &list[i]
		if job.DeletionTimestamp != nil {
			continue
		}
		byName[job.Name] = job
		found = append(found, hooks.OldJob{Name: job.Name, Created: job.CreationTimestamp.Time, Succeeded: jobSucceeded(job)})
	}
	for _, name := range hooks.OldJobsToDelete(found, current) {
		logr.FromContextOrDiscard(ctx).Info("Deleting the hook Job of an older render", "job", name)
		if err := a.deleteListedJob(ctx, byName[name]); err != nil {
			return err
		}
	}
	return nil
}

// DeleteHookJobs deletes every hook Job of owner in the namespace ns of the target,
// of any render, but those named in except, with background propagation (the Job's
// pods follow): the deletion of a Release with deletionPolicy Delete leaves none of
// them behind.
func (a *Applier) DeleteHookJobs(ctx context.Context, owner Owner, ns string, except map[string]bool) error {
	list, err := a.listHookJobs(ctx, owner, ns)
	if err != nil {
		return err
	}
	for i := range list {
		job := &list[i]
		if job.DeletionTimestamp != nil || except[job.Name] {
			continue
		}
		logr.FromContextOrDiscard(ctx).Info("Deleting a hook Job of the deleted Release", "job", job.Name)
		if err := a.deleteListedJob(ctx, job); err != nil {
			return err
		}
	}
	return nil
}

// listHookJobs lists the hook Jobs of owner, of every render, in the namespace ns:
// by the convoy labels that name owner and the hook label.
func (a *Applier) listHookJobs(ctx context.Context, owner Owner, ns string) ([]batchv1.Job, error) {
	list := &batchv1.JobList{}
	err := a.client.List(ctx, list, client.InNamespace(ns), client.MatchingLabels(v1alpha1.ReleaseSelector(owner.Name, owner.Namespace)),
		client.HasLabels{v1alpha1.LabelHook})
	if err != nil {
		return nil, fmt.Errorf("list the hook Jobs of Release %s/%s: %w", owner.Namespace, owner.Name, err)
	}
	// A digest in the labels (a long Release name) may be another name's: the
	// annotation tells.
	return slices.DeleteFunc(list.Items, func(j batchv1.Job) bool {
		return !v1alpha1.HasReleaseLabels(j.Labels, j.Annotations, owner.Name, owner.Namespace)
	}), nil
}

// deleteListedJob deletes a Job as listed, with its pods (propagation Background).
// A Job that is gone, or was replaced since the list (another UID), is left as it is.
func (a *Applier) deleteListedJob(ctx context.Context, job *batchv1.Job) error {
	err := a.client.Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationBackground), client.Preconditions{UID: &job.UID})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("delete hook Job %s/%s: %w", job.Namespace, job.Name, err)
	}
	return nil
}

// jobSucceeded reports whether a Job has the Complete condition.
func jobSucceeded(job *batchv1.Job) bool {
	return slices.ContainsFunc(job.Status.Conditions, func(c batchv1.JobCondition) bool {
		return c.Type == batchv1.JobComplete && c.Status == corev1.ConditionTrue
	})
}
