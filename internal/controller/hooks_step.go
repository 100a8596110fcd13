package controller

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/go-logr/logr"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "kumodo.io/convoy/api/v1alpha1"
	obshealth "kumodo.io/convoy/internal/observer/health"
	"kumodo.io/convoy/internal/release"
	"kumodo.io/convoy/internal/render"
)

// hookRun carries out the lifecycle hooks of the render to apply (steps 8 and 12):
// the Release's lifecycle.hooks and the chart's Helm hook Jobs, each a Job named by
// release.HookJobName in the target namespace. The decisions are release.PlanHooks';
// this reads the Jobs (a GET by name each) and creates, deletes and lists them.
type hookRun struct {
	r         *Reconciler
	st        *state
	renderRef string
	namespace string
	hooks     []release.Hook
	// jobs are the Jobs to create, by name.
	jobs map[string]*batchv1.Job
	// resume is the batch status.hooks records as running for this render.
	resume *release.HookBatch
	// rerunning: a forced sync deleted the Jobs; what status.hooks says of them is past.
	rerunning bool
}

// newHookRun gathers the hooks of renderRef: lifecycle.hooks, then the chart's hook
// Jobs (chartHooks) whose names the lifecycle does not use.
func newHookRun(r *Reconciler, st *state, renderRef string, chartHooks []render.Hook) *hookRun {
	rel := st.rel
	run := &hookRun{r: r, st: st, renderRef: renderRef, namespace: render.TargetNamespace(rel), jobs: map[string]*batchv1.Job{}}
	add := func(h v1.Hook, labels, annotations map[string]string) {
		if h.Job == nil || slices.ContainsFunc(run.hooks, func(o release.Hook) bool { return o.Name == h.Name }) {
			return
		}
		name := release.HookJobName(rel.Name, h.Name, renderRef)
		hook := release.Hook{Name: h.Name, Phase: h.Phase, Batch: h.Batch, Job: name}
		if h.Timeout != nil {
			hook.Timeout = h.Timeout.Duration
		}
		run.hooks = append(run.hooks, hook)
		job := &batchv1.Job{
			TypeMeta:   metav1.TypeMeta{APIVersion: batchv1.SchemeGroupVersion.String(), Kind: "Job"},
			ObjectMeta: metav1.ObjectMeta{Namespace: run.namespace, Name: name, Labels: map[string]string{}, Annotations: annotations},
			Spec:       *h.Job.DeepCopy(),
		}
		for k, v := range labels {
			job.Labels[k] = v
		}
		job.Labels[v1.LabelReleaseName] = rel.Name
		job.Labels[v1.LabelReleaseNamespace] = rel.Namespace
		job.Labels[v1.LabelHook] = release.HookLabelValue(h.Name)
		run.jobs[name] = job
	}
	if rel.Lifecycle != nil {
		for _, h := range rel.Lifecycle.Hooks {
			add(h, nil, nil)
		}
	}
	for _, h := range chartHooks {
		var labels, annotations map[string]string
		if h.Object != nil {
			labels, annotations = h.Object.GetLabels(), h.Object.GetAnnotations()
		}
		add(h.Hook, labels, annotations)
	}
	run.resume = resumeOf(rel.Status.Hooks, run.hooks)
	return run
}

// resumeOf is the batch that status.hooks records as running for these hooks: every
// entry names a hook and Job of them, and none failed; nil otherwise.
func resumeOf(status []v1.HookStatus, hooks []release.Hook) *release.HookBatch {
	if len(status) == 0 {
		return nil
	}
	var batch *release.HookBatch
	for _, s := range status {
		i := slices.IndexFunc(hooks, func(h release.Hook) bool { return h.Name == s.Name && h.Job == s.Job })
		if i < 0 || s.Phase == v1.HookJobFailed {
			return nil
		}
		batch = &release.HookBatch{Phase: hooks[i].Phase, Batch: hooks[i].Batch}
	}
	return batch
}

// rerun deletes the Jobs of the render's hooks (a forced sync), so that each batch
// creates them anew.
func (h *hookRun) rerun(ctx context.Context) error {
	for _, hook := range h.hooks {
		job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: h.namespace, Name: hook.Job}}
		logr.FromContextOrDiscard(ctx).Info("Deleting a hook Job to run it again", "job", hook.Job)
		err := h.st.target.Client.Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationBackground))
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete hook Job %s/%s: %w", h.namespace, hook.Job, err)
		}
	}
	h.resume, h.rerunning = nil, true
	return nil
}

// run carries out the next step of the hooks of phase: it reads the Jobs of the
// running batch, creates the missing ones and records the batch in status.hooks. It
// returns nil when every batch of the phase is done, else WaitingForHooks or
// HookFailed.
func (h *hookRun) run(ctx context.Context, phase v1.HookPhase) (*release.Result, error) {
	jobs, err := h.observe(ctx, phase)
	if err != nil {
		return nil, err
	}
	step := release.PlanHooks(phase, h.hooks, h.resume, jobs)
	if step.Stop == nil {
		return nil, nil
	}
	h.st.hooks, h.st.hooksSet = step.Status, true
	if len(step.Create) > 0 {
		if err := h.r.ensureInventory(ctx, h.st); err != nil {
			return nil, err
		}
	}
	for _, hook := range step.Create {
		logr.FromContextOrDiscard(ctx).Info("Creating a hook Job", "job", hook.Job, "phase", phase, "batch", hook.Batch)
		if err := h.create(ctx, h.jobs[hook.Job]); err != nil {
			return nil, err
		}
	}
	return step.Stop, nil
}

// observe reads the state of the Jobs of the hooks of phase that may run now (from
// the resumed batch on). A Job that is gone counts as Succeeded when status.hooks
// says so (a batch whose other Jobs still ran), so that a Job deleted after it
// finished (ttlSecondsAfterFinished) does not run again; batches before the one that
// status.hooks records are not read at all.
func (h *hookRun) observe(ctx context.Context, phase v1.HookPhase) (map[string]release.HookJob, error) {
	out := map[string]release.HookJob{}
	for _, hook := range h.hooks {
		if hook.Phase != phase || (h.resume != nil && h.resume.Phase == phase && hook.Batch < h.resume.Batch) {
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
		if job.DeletionTimestamp != nil {
			// Deleted for a re-run and not gone yet: look again shortly.
			out[hook.Job] = release.HookJob{Phase: v1.HookJobRunning, Message: "The Job of an earlier run is being deleted.", RecheckAfter: time.Second}
			continue
		}
		j := obshealth.HookJobPhase(job, hook.Timeout, h.st.now)
		out[hook.Job] = release.HookJob{Phase: j.Phase, Message: j.Message, RecheckAfter: j.RecheckAfter}
	}
	return out, nil
}

func (h *hookRun) succeededBefore(hook release.Hook) bool {
	if h.rerunning {
		return false
	}
	return slices.ContainsFunc(h.st.rel.Status.Hooks, func(s v1.HookStatus) bool {
		return s.Name == hook.Name && s.Job == hook.Job && s.Phase == v1.HookJobSucceeded
	})
}

// create creates a hook Job by server-side apply with field manager convoy.
func (h *hookRun) create(ctx context.Context, job *batchv1.Job) error {
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(job)
	if err != nil {
		return fmt.Errorf("hook Job %s/%s: %w", job.Namespace, job.Name, err)
	}
	u := &unstructured.Unstructured{Object: obj}
	unstructured.RemoveNestedField(u.Object, "status")
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	if err := h.st.target.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u),
		client.ForceOwnership, client.FieldOwner(v1.FieldManager)); err != nil {
		return fmt.Errorf("create hook Job %s/%s: %w", job.Namespace, job.Name, err)
	}
	return nil
}

// cleanup deletes the hook Jobs of other renders of this Release once this render's
// hooks succeeded; the most recent one that did not succeed (it failed, timed out, or
// never finished: its timeout is its render's, not known here) stays, for its logs.
func (h *hookRun) cleanup(ctx context.Context) error {
	if len(h.hooks) == 0 {
		return nil
	}
	list, err := listHookJobs(ctx, h.st.target.Client, h.st.rel, h.namespace)
	if err != nil {
		return err
	}
	var old []*batchv1.Job
	var keep *batchv1.Job
	for i := range list.Items {
		job := &list.Items[i]
		if _, ours := h.jobs[job.Name]; ours || job.DeletionTimestamp != nil {
			continue
		}
		old = append(old, job)
		if !jobSucceeded(job) && (keep == nil || keep.CreationTimestamp.Before(&job.CreationTimestamp)) {
			keep = job
		}
	}
	for _, job := range old {
		if job == keep {
			continue
		}
		logr.FromContextOrDiscard(ctx).Info("Deleting the hook Job of an older render", "job", job.Name)
		if err := deleteListedJob(ctx, h.st.target.Client, job); err != nil {
			return err
		}
	}
	return nil
}

// listHookJobs lists the hook Jobs of rel, of every render, in the namespace ns of
// the target cluster c: by the convoy labels that name rel and the hook label.
func listHookJobs(ctx context.Context, c client.Client, rel *v1.Release, ns string) (*batchv1.JobList, error) {
	list := &batchv1.JobList{}
	err := c.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{
		v1.LabelReleaseName: rel.Name, v1.LabelReleaseNamespace: rel.Namespace,
	}, client.HasLabels{v1.LabelHook})
	if err != nil {
		return nil, fmt.Errorf("list the hook Jobs of Release %s/%s: %w", rel.Namespace, rel.Name, err)
	}
	return list, nil
}

// deleteHookJobs deletes every hook Job of the Release in its target namespace, of
// any render, with background propagation (the Job's pods follow): the deletion of a
// Release with deletionPolicy Delete leaves none of them behind.
func deleteHookJobs(ctx context.Context, c client.Client, rel *v1.Release) error {
	list, err := listHookJobs(ctx, c, rel, render.TargetNamespace(rel))
	if err != nil {
		return err
	}
	for i := range list.Items {
		job := &list.Items[i]
		if job.DeletionTimestamp != nil {
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
	inv, err := r.writeInventory(ctx, st.rel, empty, "", nil)
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
