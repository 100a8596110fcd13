package controller

import (
	"context"
	"fmt"
	"math"
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

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/apply"
	"kumodo.io/convoy/internal/hooks"
	"kumodo.io/convoy/internal/release"
	"kumodo.io/convoy/internal/render"
)

// hookRun carries out the hooks of the render to apply (steps 8 and 12): the
// Release's lifecycle.hooks and the chart's Helm hooks of the run (install or
// upgrade), as internal/hooks builds them. The decisions are release.PlanHooks'; this
// reads the Jobs (a GET by name each), applies the hook objects, creates the Jobs and
// deletes what the delete policies say.
type hookRun struct {
	r         *Reconciler
	st        *state
	renderRef string
	namespace string
	kind      v1.HookRun
	hooks     []hooks.Hook
	// resume is the batch status.hooks records for this render.
	resume *release.HookBatch
	// rerunning: a forced sync deleted the Jobs; what status.hooks says of them is past.
	rerunning bool
	// forced: the apply is a forced sync's; its PreApply batches are recorded so
	// (status.hooks[].forced) for the reconciles that carry them on.
	forced bool
	// status is the new status.hooks that run decided: the batch that waits or failed,
	// or the phase's last batch once it is done.
	status change[[]v1.HookStatus]
	// found is what observe found under the name of each Job of the phase that is not
	// the Job of this run (hooks.Classify): another run's, to delete before its own is
	// created, or one that convoy does not own.
	found map[string]foundJob
}

// foundJob is a Job found under the name of a hook Job of the run that is not the run's.
type foundJob struct {
	job   *batchv1.Job
	found hooks.Found
}

// newHookRun gathers the hooks of renderRef. The run is the one status.hooks records
// for this render (a run that goes on), else Install when nothing was applied
// successfully yet, else Upgrade.
func newHookRun(r *Reconciler, st *state, in release.Input, renderRef string, chartHooks []hooks.Chart) (*hookRun, error) {
	rel := st.rel
	owner := hooks.Owner{Name: rel.Name, Namespace: rel.Namespace, TargetNamespace: render.TargetNamespace(rel)}
	var lifecycle []v1.Hook
	if rel.Lifecycle != nil {
		lifecycle = rel.Lifecycle.Hooks
	}
	build := func(run v1.HookRun) (*hookRun, error) {
		hs, err := hooks.ForRun(owner, renderRef, run, lifecycle, chartHooks)
		if err != nil {
			return nil, err
		}
		return &hookRun{r: r, st: st, renderRef: renderRef, namespace: owner.TargetNamespace, kind: run, hooks: hs,
			resume: resumeOf(rel.Status.Hooks, hs, renderRef, run)}, nil
	}
	if hs := rel.Status.Hooks; len(hs) > 0 && hs[0].Run != "" {
		if h, err := build(hs[0].Run); err != nil || h.resume != nil {
			return h, err
		}
	}
	run := v1.HookRunUpgrade
	if in.LastSuccessfulRender == "" {
		run = v1.HookRunInstall
	}
	return build(run)
}

// resumeOf is the batch that status.hooks records for these hooks, of the run run of
// the render renderRef: every entry records a hook of them (records), and none
// failed; Done when all succeeded; nil otherwise.
func resumeOf(status []v1.HookStatus, hs []hooks.Hook, renderRef string, run v1.HookRun) *release.HookBatch {
	if len(status) == 0 {
		return nil
	}
	batch := &release.HookBatch{Done: true}
	for _, s := range status {
		i := slices.IndexFunc(hs, func(h hooks.Hook) bool { return records(s, h, renderRef, run) })
		if i < 0 || s.Phase == v1.HookJobFailed {
			return nil
		}
		batch.Phase, batch.Batch = hs[i].Phase, hs[i].Batch
		batch.Done = batch.Done && s.Phase == v1.HookJobSucceeded
	}
	return batch
}

// records reports whether the status.hooks entry s records the hook h of the run run
// of the render renderRef: the same name and Job, and the same phase, run and render
// (an entry written before entries named them has none: its Job name, then new for
// every render and phase, told the run).
func records(s v1.HookStatus, h hooks.Hook, renderRef string, run v1.HookRun) bool {
	return s.Name == h.Name && s.Job == h.Job && (s.HookPhase == "" || s.HookPhase == h.Phase) &&
		(s.RenderRef == "" || s.RenderRef == renderRef) && (s.Run == "" || s.Run == run)
}

// rerun deletes the Jobs of the render's hooks (a forced sync), so that each batch
// creates them anew.
func (h *hookRun) rerun(ctx context.Context) error {
	for _, hook := range h.hooks {
		if !hook.IsJob() {
			continue
		}
		if err := h.delete(ctx, hook, "to run it again"); err != nil {
			return err
		}
	}
	h.resume, h.rerunning = nil, true
	return nil
}

// run carries out the next step of the hooks of phase: it reads the Jobs of the
// running batch, applies the hook objects of the batches up to it, creates its missing
// Jobs and records the batch in status.hooks; when the phase completes, it deletes the
// hooks whose policy is hook-succeeded, and when a batch fails, those whose policy is
// hook-failed. It returns nil when every batch of the phase is done, else
// WaitingForHooks or HookFailed.
func (h *hookRun) run(ctx context.Context, phase v1.HookPhase) (*release.Result, error) {
	jobs, err := h.observe(ctx, phase)
	if err != nil {
		return nil, err
	}
	step := release.PlanHooks(phase, h.kind, h.hooks, h.resume, jobs)
	for i := range step.Status {
		step.Status[i].RenderRef = h.renderRef
		step.Status[i].Forced = h.forced && phase == v1.HookPreApply
	}
	// A Job of a hook's name that convoy does not own stops the run before anything of
	// the batch is written.
	for _, hook := range step.Create {
		if f, ok := h.found[hook.Job]; ok && f.found == hooks.FoundForeign {
			return nil, foreignJobError(f.job, hook, h.st.rel)
		}
	}
	if len(step.Create) > 0 || len(step.Apply) > 0 {
		if err := h.r.ensureInventory(ctx, h.st); err != nil {
			return nil, err
		}
	}
	logger := logr.FromContextOrDiscard(ctx)
	for _, hook := range step.Apply {
		logger.Info("Applying a hook object", "kind", hook.Object.GetKind(), "name", hook.Object.GetName(), "phase", phase, "batch", hook.Batch)
		if err := h.apply(ctx, hook.Object); err != nil {
			return nil, &hookError{hook: hook, err: err}
		}
	}
	for _, hook := range step.Create {
		if f, ok := h.found[hook.Job]; ok && f.found == hooks.FoundOtherRun {
			gone, err := h.replace(ctx, f.job, hook)
			if err != nil {
				return nil, err
			}
			if !gone {
				markReplacing(&step, hook)
				continue
			}
		}
		logger.Info("Creating a hook Job", "job", hook.Job, "phase", phase, "batch", hook.Batch)
		if err := h.create(ctx, hook.Object); err != nil {
			return nil, err
		}
	}
	// Recorded only once its objects and Jobs are applied: status.hooks that says
	// "applied" of an object the server refused would let a later render's run of a
	// hook of the same name skip it.
	if step.Stop != nil || step.Completed {
		h.status = changeTo(step.Status)
	}
	switch {
	case step.Completed:
		if err := h.deleteByPolicy(ctx, phase, nil, hooks.HookSucceeded); err != nil {
			return nil, err
		}
	case step.Stop != nil && step.Stop.Reason == v1.ReasonHookFailed:
		if err := h.deleteByPolicy(ctx, phase, &step.Status[0].Batch, hooks.HookFailed); err != nil {
			return nil, err
		}
	}
	return step.Stop, nil
}

// hookError is the failure to apply the object of one hook, naming the hook; its
// message is the apply's (apply.Reason reads through it).
type hookError struct {
	hook hooks.Hook
	err  error
}

func (e *hookError) Error() string { return e.err.Error() }
func (e *hookError) Unwrap() error { return e.err }

// replaceWait is how soon a run that deleted the Job of another run looks again
// whether it is gone, to create its own.
const replaceWait = time.Second

// replace deletes old, the Job of another run under the name of hook's Job, as Helm's
// before-hook-creation does (propagation Background: its pods go after it), and
// reports whether it is gone already (a Job has no finalizer of its own, so it
// usually is), so that hook's Job can be created now.
func (h *hookRun) replace(ctx context.Context, old *batchv1.Job, hook hooks.Hook) (bool, error) {
	logr.FromContextOrDiscard(ctx).Info("Deleting the hook Job of an earlier run before its new run", "job", old.Name,
		"run", old.Annotations[v1.AnnotationHookRun], "hook", hook.Name)
	if err := deleteListedJob(ctx, h.st.target.Client, old); err != nil {
		return false, err
	}
	err := h.st.target.Client.Get(ctx, client.ObjectKeyFromObject(old), &batchv1.Job{})
	switch {
	case apierrors.IsNotFound(err):
		return true, nil
	case err != nil:
		return false, fmt.Errorf("read hook Job %s/%s: %w", old.Namespace, old.Name, err)
	}
	return false, nil
}

// markReplacing records in step that hook's Job waits for the Job of another run to
// be gone, and makes the Release look again shortly.
func markReplacing(step *release.HookStep, hook hooks.Hook) {
	for i, s := range step.Status {
		if s.Name == hook.Name && s.Job == hook.Job {
			step.Status[i].Message = msgReplacing
		}
	}
	if step.Stop != nil && (step.Stop.RecheckAfter == 0 || step.Stop.RecheckAfter > replaceWait) {
		step.Stop.RecheckAfter = replaceWait
	}
}

// msgReplacing is the message of a hook whose Job waits for the Job of an earlier run
// of the same name to be gone.
const msgReplacing = "The Job of an earlier run of the same name is being deleted first."

// foreignJobError is the error of a hook whose Job name is taken by a Job that convoy
// did not create for rel.
func foreignJobError(job *batchv1.Job, hook hooks.Hook, rel *v1.Release) error {
	owner := "no convoy Release"
	if name := v1.NameOfLabel(job.Labels, job.Annotations, v1.LabelReleaseName); name != "" {
		owner = "Release " + v1.NameOfLabel(job.Labels, job.Annotations, v1.LabelReleaseNamespace) + "/" + name
	}
	return fmt.Errorf("hook %s cannot run: Job %s/%s exists and belongs to %s, not to Release %s/%s; "+
		"convoy neither replaces nor deletes it: delete it, or rename the hook's Job in the chart",
		hook.Name, job.Namespace, job.Name, owner, rel.Namespace, rel.Name)
}

// deleteByPolicy deletes the hooks of phase (of batch, when set) whose delete
// policies include policy. Jobs go with their pods (propagation Background).
func (h *hookRun) deleteByPolicy(ctx context.Context, phase v1.HookPhase, batch *int32, policy helmrelease.HookDeletePolicy) error {
	for _, hook := range h.hooks {
		if hook.Phase != phase || (batch != nil && hook.Batch != *batch) || !hook.Deletes(policy) {
			continue
		}
		if err := h.delete(ctx, hook, "by its delete policy "+string(policy)); err != nil {
			return err
		}
	}
	return nil
}

// delete deletes a hook's Job (with its pods: propagation Background) or object; one
// that is gone already is fine, and a Job of the name that convoy did not create for
// this Release is left. why is for the log.
func (h *hookRun) delete(ctx context.Context, hook hooks.Hook, why string) error {
	if hook.IsJob() {
		return h.deleteJob(ctx, hook, why)
	}
	obj := hook.Object.DeepCopy()
	logr.FromContextOrDiscard(ctx).Info("Deleting a hook "+why, "kind", obj.GetKind(), "namespace", obj.GetNamespace(), "name", obj.GetName())
	err := h.st.target.Client.Delete(ctx, obj, client.PropagationPolicy(metav1.DeletePropagationBackground))
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete hook %s %s/%s: %w", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
	}
	return nil
}

// deleteJob deletes the Job of hook when it is the Release's (of any run), with its
// pods (propagation Background).
func (h *hookRun) deleteJob(ctx context.Context, hook hooks.Hook, why string) error {
	job := &batchv1.Job{}
	err := h.st.target.Client.Get(ctx, client.ObjectKey{Namespace: h.namespace, Name: hook.Job}, job)
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("read hook Job %s/%s: %w", h.namespace, hook.Job, err)
	case job.DeletionTimestamp != nil:
		return nil
	}
	logger := logr.FromContextOrDiscard(ctx)
	if hooks.Classify(job, h.st.rel.Name, h.st.rel.Namespace, "") == hooks.FoundForeign {
		logger.Info("Leaving a Job of a hook's name that is not the Release's", "namespace", job.Namespace, "name", job.Name)
		return nil
	}
	logger.Info("Deleting a hook "+why, "kind", "Job", "namespace", job.Namespace, "name", job.Name)
	return deleteListedJob(ctx, h.st.target.Client, job)
}

// observe reads the state of the Jobs of the hooks of phase that may run now (from
// the resumed batch on). A Job that is gone counts as Succeeded when status.hooks
// says so (a batch whose other Jobs still ran), so that a Job deleted after it
// finished (ttlSecondsAfterFinished) does not run again; batches before the one that
// status.hooks records are not read at all.
func (h *hookRun) observe(ctx context.Context, phase v1.HookPhase) (map[string]release.HookJob, error) {
	out := map[string]release.HookJob{}
	h.found = map[string]foundJob{}
	rel := h.st.rel
	for _, hook := range h.hooks {
		if !hook.IsJob() || hook.Phase != phase || (h.resume != nil && h.resume.Phase == phase && hook.Batch < h.resume.Batch) {
			continue
		}
		job := &batchv1.Job{}
		err := h.st.target.Client.Get(ctx, client.ObjectKey{Namespace: h.namespace, Name: hook.Job}, job)
		switch {
		case apierrors.IsNotFound(err):
			if h.succeededBefore(hook) {
				out[hook.Job] = release.HookJob{Phase: v1.HookJobSucceeded, Message: "The Job succeeded."}
			}
			continue
		case err != nil:
			return nil, fmt.Errorf("read hook Job %s/%s: %w", h.namespace, hook.Job, err)
		}
		switch found := hooks.Classify(job, rel.Name, rel.Namespace, hooks.RunID(h.kind, phase, h.renderRef)); found {
		case hooks.FoundOfRun:
			out[hook.Job] = hooks.JobPhase(job, hook.Timeout, h.st.now)
		case hooks.FoundDeleting:
			// Deleted for a re-run, or as the Job of an earlier run, and not gone yet:
			// look again shortly.
			out[hook.Job] = release.HookJob{Phase: v1.HookJobRunning, Message: "The Job of an earlier run is being deleted.", RecheckAfter: replaceWait}
		default:
			// Another run's Job, or one convoy does not own: this run's is still to
			// be created (Pending), and run decides about the one found.
			h.found[hook.Job] = foundJob{job: job, found: found}
		}
	}
	return out, nil
}

func (h *hookRun) succeededBefore(hook hooks.Hook) bool {
	if h.rerunning {
		return false
	}
	return slices.ContainsFunc(h.st.rel.Status.Hooks, func(s v1.HookStatus) bool {
		return records(s, hook, h.renderRef, h.kind) && s.Phase == v1.HookJobSucceeded
	})
}

// create creates a hook Job (field manager convoy): never over an existing Job, which
// observe found and run deleted first when it is the Release's. A Job created by
// someone else meanwhile is an error; the next reconcile finds it. A failure is an
// apply.Error, as apply's.
func (h *hookRun) create(ctx context.Context, obj *unstructured.Unstructured) error {
	u := obj.DeepCopy()
	unstructured.RemoveNestedField(u.Object, "status")
	if err := h.st.target.Client.Create(ctx, u, client.FieldOwner(v1.FieldManager)); err != nil {
		gvk := u.GroupVersionKind()
		return apply.ApplyFailure(v1.ObjectReference{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind,
			Namespace: u.GetNamespace(), Name: u.GetName()}, err)
	}
	return nil
}

// apply applies a hook object by server-side apply with field manager convoy.
// A failure is an apply.Error: Unappliable when the server refuses the object as
// rendered (a 422 or 400: every retry would fail the same way), else DeployFailed.
func (h *hookRun) apply(ctx context.Context, obj *unstructured.Unstructured) error {
	u := obj.DeepCopy()
	unstructured.RemoveNestedField(u.Object, "status")
	if err := h.st.target.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u),
		client.ForceOwnership, client.FieldOwner(v1.FieldManager)); err != nil {
		gvk := u.GroupVersionKind()
		return apply.ApplyFailure(v1.ObjectReference{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind,
			Namespace: u.GetNamespace(), Name: u.GetName()}, err)
	}
	return nil
}

// cleanup deletes the hook Jobs of other renders of this Release once this render's
// hooks succeeded, as hooks.OldJobsToDelete decides.
func (h *hookRun) cleanup(ctx context.Context) error {
	if len(h.hooks) == 0 {
		return nil
	}
	list, err := listHookJobs(ctx, h.st.target.Client, h.st.rel, h.namespace)
	if err != nil {
		return err
	}
	current := map[string]bool{}
	for _, hook := range h.hooks {
		if hook.IsJob() {
			current[hook.Job] = true
		}
	}
	var found []hooks.OldJob
	byName := map[string]*batchv1.Job{}
	for i := range list.Items {
		job := &list.Items[i]
		if job.DeletionTimestamp != nil {
			continue
		}
		byName[job.Name] = job
		found = append(found, hooks.OldJob{Name: job.Name, Created: job.CreationTimestamp.Time, Succeeded: jobSucceeded(job)})
	}
	for _, name := range hooks.OldJobsToDelete(found, current) {
		logr.FromContextOrDiscard(ctx).Info("Deleting the hook Job of an older render", "job", name)
		if err := deleteListedJob(ctx, h.st.target.Client, byName[name]); err != nil {
			return err
		}
	}
	return nil
}

// listHookJobs lists the hook Jobs of rel, of every render, in the namespace ns of
// the target cluster c: by the convoy labels that name rel and the hook label.
func listHookJobs(ctx context.Context, c client.Client, rel *v1.Release, ns string) (*batchv1.JobList, error) {
	list := &batchv1.JobList{}
	err := c.List(ctx, list, client.InNamespace(ns), client.MatchingLabels(v1.ReleaseSelector(rel.Name, rel.Namespace)),
		client.HasLabels{v1.LabelHook})
	if err != nil {
		return nil, fmt.Errorf("list the hook Jobs of Release %s/%s: %w", rel.Namespace, rel.Name, err)
	}
	// A digest in the labels (a long Release name) may be another name's: the
	// annotation tells.
	list.Items = slices.DeleteFunc(list.Items, func(j batchv1.Job) bool {
		return !v1.HasReleaseLabels(j.Labels, j.Annotations, rel.Name, rel.Namespace)
	})
	return list, nil
}

// deleteHookJobs deletes every hook Job of the Release in its target namespace, of
// any render, with background propagation (the Job's pods follow): the deletion of a
// Release with deletionPolicy Delete leaves none of them behind.
func deleteHookJobs(ctx context.Context, c client.Client, rel *v1.Release, except map[string]bool) error {
	list, err := listHookJobs(ctx, c, rel, render.TargetNamespace(rel))
	if err != nil {
		return err
	}
	for i := range list.Items {
		job := &list.Items[i]
		if job.DeletionTimestamp != nil || except[job.Name] {
			continue
		}
		logr.FromContextOrDiscard(ctx).Info("Deleting a hook Job of the deleted Release", "job", job.Name)
		if err := deleteListedJob(ctx, c, job); err != nil {
			return err
		}
	}
	return nil
}

// deleteListedJob deletes a Job as listed, with its pods (propagation Background).
// A Job that is gone, or was replaced since the list (another UID), is left as it is.
func deleteListedJob(ctx context.Context, c client.Client, job *batchv1.Job) error {
	err := c.Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationBackground), client.Preconditions{UID: &job.UID})
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

// ensureInventory creates the Release's ReleaseInventory, empty and naming no render,
// when there is none: the observer follows the hook Jobs of a Release through it.
func (r *Reconciler) ensureInventory(ctx context.Context, st *state) error {
	if st.inventory != nil {
		return nil
	}
	empty := &v1.ReleaseInventory{ObjectMeta: metav1.ObjectMeta{Namespace: st.rel.Namespace, Name: st.rel.Name}}
	inv, err := r.writeInventory(ctx, st.rel, empty, "", nil, nil)
	switch {
	case err == nil:
		st.inventory = inv
	case apierrors.IsAlreadyExists(err):
		if st.inventory, err = r.currentInventory(ctx, st.rel); err != nil {
			return err
		}
	default:
		return err
	}
	return nil
}

// hookObjects lists, as inventory entries, the chart's hook objects that are not Jobs
// of the renders refs (the inventory's and the last successful one), for the deletion
// of the Release: hooks are not part of a render's objects (as in Helm, they are not
// in the release manifest), but convoy leaves none of them behind. They come last in
// the deletion (the lowest wave). A Render that is gone lists nothing.
func (r *Reconciler) hookObjects(ctx context.Context, rel *v1.Release, refs ...string) ([]v1.InventoryObject, error) {
	var out []v1.InventoryObject
	seen := map[string]bool{}
	for _, ref := range refs {
		if ref == "" || seen[ref] {
			continue
		}
		seen[ref] = true
		chartHooks, err := r.chartHooksOf(ctx, rel, ref)
		if err != nil {
			return out, err
		}
		for _, h := range chartHooks {
			if hooks.IsJob(h.Object) {
				continue
			}
			gvk := h.Object.GroupVersionKind()
			entry := v1.InventoryObject{Wave: math.MinInt32, ObjectReference: v1.ObjectReference{
				Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind, Namespace: h.Object.GetNamespace(), Name: h.Object.GetName()}}
			if !slices.ContainsFunc(out, func(o v1.InventoryObject) bool { return o.ObjectReference == entry.ObjectReference }) {
				out = append(out, entry)
			}
		}
	}
	return out, nil
}

// chartHooksOf reads the chart's hooks of the render ref from its Render object; none
// when the Render is gone.
func (r *Reconciler) chartHooksOf(ctx context.Context, rel *v1.Release, ref string) ([]hooks.Chart, error) {
	obj, err := r.getRender(ctx, rel, ref)
	if err != nil || obj == nil {
		return nil, err
	}
	_, chartHooks, err := render.DecodeManifests(obj.Manifests)
	if err != nil {
		return nil, fmt.Errorf("read the manifests of Render %s: %w", obj.Name, err)
	}
	return chartHooks, nil
}
