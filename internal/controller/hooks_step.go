package controller

import (
	"context"
	"fmt"
	"math"
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/apply"
	"kumodo.io/convoy/internal/hooks"
	"kumodo.io/convoy/internal/policy"
	"kumodo.io/convoy/internal/render"
	"kumodo.io/convoy/internal/store"
)

// hookRun runs the hooks of the render to apply (steps 8 and 12): the
// Release's lifecycle.hooks and the chart's Helm hooks of the run (install or
// upgrade), as internal/hooks builds them. The decisions are policy.PlanHooks' and
// this run's (which run, what status.hooks records, a Job convoy does not own);
// internal/apply reads the Jobs, applies the hook objects, creates the Jobs and
// deletes what the delete policies say.
type hookRun struct {
	r         *Reconciler
	st        *state
	renderRef string
	namespace string
	kind      v1.HookRun
	hooks     []hooks.Hook
	// resume is the batch status.hooks records for this render.
	resume *policy.HookBatch
	// rerunning: a forced sync deleted the Jobs; what status.hooks says of them is past.
	rerunning bool
	// forced: the apply is a forced sync's; its PreApply batches are recorded so
	// (status.hooks[].forced) for the reconciles that carry them on.
	forced bool
	// status is the new status.hooks that run decided: the batch that waits or failed,
	// or the phase's last batch once it is done.
	status change[[]v1.HookStatus]
	// applier carries out the run on the target cluster.
	applier *apply.Applier
}

// newHookRun gathers the hooks of renderRef. The run is the one status.hooks records
// for this render (a run that goes on), else the one policy.ApplyHookRun decides:
// Install when nothing was applied successfully yet and the Release took over no Helm
// release, else Upgrade.
func newHookRun(r *Reconciler, st *state, in policy.Input, renderRef string, chartHooks []hooks.Chart) (*hookRun, error) {
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
			resume: resumeOf(rel.Status.Hooks, hs, renderRef, run), applier: apply.New(st.target.Client, r.applyOpts)}, nil
	}
	if hs := rel.Status.Hooks; len(hs) > 0 && hs[0].Run != "" {
		if h, err := build(hs[0].Run); err != nil || h.resume != nil {
			return h, err
		}
	}
	return build(policy.ApplyHookRun(in.LastSuccessfulRender, rel.Annotations))
}

// resumeOf is the batch that status.hooks records for these hooks, of the run run of
// the render renderRef: every entry records a hook of them (records), and none
// failed; Done when all succeeded; nil otherwise.
func resumeOf(status []v1.HookStatus, hs []hooks.Hook, renderRef string, run v1.HookRun) *policy.HookBatch {
	if len(status) == 0 {
		return nil
	}
	batch := &policy.HookBatch{Done: true}
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
	if err := h.applier.RerunHookJobs(ctx, h.target()); err != nil {
		return err
	}
	h.resume, h.rerunning = nil, true
	return nil
}

// target is the run as internal/apply carries it out on the target cluster.
func (h *hookRun) target() apply.HookRun {
	return apply.HookRun{Release: apply.Owner{Name: h.st.rel.Name, Namespace: h.st.rel.Namespace},
		Namespace: h.namespace, RenderRef: h.renderRef, Run: h.kind, Hooks: h.hooks}
}

// run carries out the next step of the hooks of phase: it reads the Jobs of the
// running batch, decides the step (policy.PlanHooks), has internal/apply apply the
// hook objects of the batches up to it and create its missing Jobs, and records the
// batch in status.hooks; when the phase completes, it deletes the hooks whose policy
// is hook-succeeded, and when a batch fails, those whose policy is hook-failed. It
// returns nil when every batch of the phase is done, else WaitingForHooks or
// HookFailed.
func (h *hookRun) run(ctx context.Context, phase v1.HookPhase) (*policy.Result, error) {
	jobs, err := h.applier.ObserveHookJobs(ctx, h.target(), phase, h.resume, h.succeededBefore, h.st.now)
	if err != nil {
		return nil, err
	}
	step := policy.PlanHooks(phase, h.kind, h.hooks, h.resume, jobs.States)
	for i := range step.Status {
		step.Status[i].RenderRef = h.renderRef
		step.Status[i].Forced = h.forced && phase == v1.HookPreApply
	}
	// A Job of a hook's name that convoy does not own stops the run before anything of
	// the batch is written.
	for _, hook := range step.Create {
		if f, ok := jobs.Found[hook.Job]; ok && f.Found == hooks.FoundForeign {
			return nil, foreignJobError(f.Job, hook, h.st.rel)
		}
	}
	if len(step.Create) > 0 || len(step.Apply) > 0 {
		if err := h.r.ensureInventory(ctx, h.st); err != nil {
			return nil, err
		}
	}
	replacing, err := h.applier.RunHookStep(ctx, phase, step, jobs.Found)
	if err != nil {
		return nil, err
	}
	for _, hook := range replacing {
		markReplacing(&step, hook)
	}
	// Recorded only once its objects and Jobs are applied: status.hooks that says
	// "applied" of an object the server refused would let a later render's run of a
	// hook of the same name skip it.
	if step.Stop != nil || step.Completed {
		h.status = changeTo(step.Status)
	}
	switch {
	case step.Completed:
		if err := h.applier.DeleteHooksByPolicy(ctx, h.target(), phase, nil, hooks.HookSucceeded); err != nil {
			return nil, err
		}
	case step.Stop != nil && step.Stop.Reason == v1.ReasonHookFailed:
		if err := h.applier.DeleteHooksByPolicy(ctx, h.target(), phase, &step.Status[0].Batch, hooks.HookFailed); err != nil {
			return nil, err
		}
	}
	return step.Stop, nil
}

// markReplacing records in step that hook's Job waits for the Job of another run to
// be gone, and makes the Release look again shortly.
func markReplacing(step *policy.HookStep, hook hooks.Hook) {
	for i, s := range step.Status {
		if s.Name == hook.Name && s.Job == hook.Job {
			step.Status[i].Message = msgReplacing
		}
	}
	if step.Stop != nil && (step.Stop.RecheckAfter == 0 || step.Stop.RecheckAfter > apply.HookReplaceWait) {
		step.Stop.RecheckAfter = apply.HookReplaceWait
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

// succeededBefore reports whether status.hooks records hook's Job of this run as
// succeeded (not after a forced sync deleted the Jobs to run them again).
func (h *hookRun) succeededBefore(hook hooks.Hook) bool {
	if h.rerunning {
		return false
	}
	return slices.ContainsFunc(h.st.rel.Status.Hooks, func(s v1.HookStatus) bool {
		return records(s, hook, h.renderRef, h.kind) && s.Phase == v1.HookJobSucceeded
	})
}

// cleanup deletes the hook Jobs of other renders of this Release once this render's
// hooks succeeded, as hooks.OldJobsToDelete decides.
func (h *hookRun) cleanup(ctx context.Context) error {
	return h.applier.CleanupHookJobs(ctx, h.target())
}

// ensureInventory creates the Release's ReleaseInventory, empty and naming no render,
// when there is none: the observer follows the hook Jobs of a Release through it.
func (r *Reconciler) ensureInventory(ctx context.Context, st *state) error {
	if st.inventory != nil {
		return nil
	}
	inv, err := r.writeInventory(ctx, st.rel, store.EmptyInventory(st.rel), "", nil, nil)
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
	obj, err := store.GetRender(ctx, r.apiReader, rel.Namespace, rel.Name, ref)
	if err != nil || obj == nil {
		return nil, err
	}
	_, chartHooks, err := render.DecodeManifests(obj.Manifests)
	if err != nil {
		return nil, fmt.Errorf("read the manifests of Render %s: %w", obj.Name, err)
	}
	return chartHooks, nil
}
