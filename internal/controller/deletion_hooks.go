package controller

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/apply"
	"kumodo.io/convoy/internal/hooks"
	"kumodo.io/convoy/internal/policy"
	"kumodo.io/convoy/internal/reasons"
	"kumodo.io/convoy/internal/render"
	"kumodo.io/convoy/internal/targets"
)

// deletionHooks are the pre-delete and post-delete hooks of a Release being deleted
// with deletionPolicy Delete: the chart hooks of the render on the cluster (the
// inventory's, else the last successful one), run as hook batches (pre-delete as
// PreApply, before the objects are deleted; post-delete as PostApply, after they are
// gone), with the same delete policies as install and upgrade hooks.
type deletionHooks struct {
	run *hookRun
	// forced: a forced /sync is pending; it runs failed hooks again, once.
	forced *metav1.Time
}

// newDeletionHooks gathers the delete hooks; nil when the render has none (or its
// Render is gone: then nothing is known of its hooks).
func (r *Reconciler) newDeletionHooks(ctx context.Context, rel *v1.Release, target *targets.Target, inv *v1.ReleaseInventory) (*deletionHooks, error) {
	ref := inv.RenderRef
	if ref == "" && rel.Status.LastSuccessful != nil {
		ref = rel.Status.LastSuccessful.RenderRef
	}
	if ref == "" {
		return nil, nil
	}
	chartHooks, err := r.chartHooksOf(ctx, rel, ref)
	if err != nil || len(chartHooks) == 0 {
		return nil, err
	}
	owner := hooks.Owner{Name: rel.Name, Namespace: rel.Namespace, TargetNamespace: render.TargetNamespace(rel)}
	hs, err := hooks.ForRun(owner, ref, v1.HookRunDelete, nil, chartHooks)
	if err != nil || len(hs) == 0 {
		return nil, err
	}
	st := &state{rel: rel, now: r.clock.Now(), target: target, inventory: inv}
	d := &deletionHooks{run: &hookRun{r: r, st: st, renderRef: ref, namespace: owner.TargetNamespace, kind: v1.HookRunDelete, hooks: hs,
		applier: apply.New(target.Client, r.applyOpts)}}
	recorded := rel.Status.Hooks
	if len(recorded) > 0 && recorded[0].Run == v1.HookRunDelete {
		d.run.resume = resumeOf(recorded, hs, ref, v1.HookRunDelete)
	}
	reqs := requests(rel)
	if force, _ := policy.EvaluateRequest(reqs.ForceRequestedAt, reqs.LastHandledForceSyncAt); force.Pending && force.At != nil {
		d.forced = &metav1.Time{Time: *force.At}
	}
	return d, nil
}

// step runs the delete hooks of phase. It returns nil when they are done, else the
// Result that holds the deletion (WaitingForHooks, or HookFailed until a forced /sync
// runs them again or deletionPolicy becomes Orphan), after writing it to the status.
func (d *deletionHooks) step(ctx context.Context, phase v1.HookPhase) (*policy.Result, error) {
	h := d.run
	rel := h.st.rel
	recorded := rel.Status.Hooks
	failed := len(recorded) > 0 && recorded[0].Run == v1.HookRunDelete && policy.FailedHookOf("", recorded) != nil
	switch {
	case failed && d.forced == nil:
		res := &policy.Result{Reason: v1.ReasonHookFailed, Message: deleteHookFailed(recorded)}
		return res, h.r.writeDeletionStatus(ctx, rel, h.st.now, h.status, res, nil)
	case failed:
		if err := h.rerun(ctx); err != nil {
			return nil, err
		}
	}
	stop, err := h.run(ctx, phase)
	if err != nil {
		failed, ok := refusedHook(h, phase, err)
		if !ok {
			return nil, err
		}
		// Recorded as a failed hook, so that the deletion holds on it as on a failed
		// Job, until a forced /sync or deletionPolicy Orphan (decision 0167).
		h.status = changeTo(failed)
		stop = &policy.Result{Reason: v1.ReasonHookFailed}
	}
	if stop != nil && stop.Reason == v1.ReasonHookFailed {
		stop = &policy.Result{Reason: v1.ReasonHookFailed, Message: deleteHookFailed(h.status.to)}
		h.r.events.Eventf(rel, nil, corev1.EventTypeWarning, v1.ReasonHookFailed, "Delete", "%s", stop.Message)
	}
	var forced *metav1.Time
	if failed {
		forced = d.forced
	}
	return stop, h.r.writeDeletionStatus(ctx, rel, h.st.now, h.status, stop, forced)
}

// refusedHook is the status.hooks of a delete hook whose object the API server
// refuses as rendered (err, from run: a 422 or 400, Unappliable), recorded as failed;
// false for any other error, which the work queue retries.
func refusedHook(h *hookRun, phase v1.HookPhase, err error) ([]v1.HookStatus, bool) {
	he, ok := errors.AsType[*apply.HookError](err)
	if !ok || reasons.Of(err, "") != v1.ReasonUnappliable {
		return nil, false
	}
	return []v1.HookStatus{{
		Name: he.Hook.Name, Batch: he.Hook.Batch, HookPhase: phase, Run: h.kind, RenderRef: h.renderRef,
		Phase: v1.HookJobFailed, Job: he.Hook.Job,
		Message: "The API server refuses its object: " + err.Error(),
	}}, true
}

// deleteHookFailed is the message of a failed delete hook, from what status.hooks
// records of it: what holds the deletion, and the two ways on. A re-run runs the hooks
// of the same render (the deletion renders nothing anew), so it helps only when the
// cause is outside the chart: a Job that failed on the cluster's state, an object the
// cluster refused because of another one.
func deleteHookFailed(status []v1.HookStatus) string {
	batch := int32(0)
	if len(status) > 0 {
		batch = status[0].Batch
	}
	return fmt.Sprintf("The deletion waits: delete hook batch %d failed: %s. Run it again with a forced /sync "+
		"(kubectl convoy release sync --force) once its cause is fixed (the deletion runs the hooks of the render "+
		"applied last: one that the chart renders wrong fails again), or set spec.deletionPolicy to Orphan to "+
		"delete the Release without its hooks and leave its objects.", batch, policy.HookFailures(status))
}

// jobs are the names of the delete hooks' Jobs.
func (d *deletionHooks) jobs() map[string]bool {
	out := map[string]bool{}
	if d == nil {
		return out
	}
	for _, h := range d.run.hooks {
		if h.IsJob() {
			out[h.Job] = true
		}
	}
	return out
}

// postDeleteObjects are the objects of the post-delete hooks that are not hooks of
// pre-delete: they must outlive the deletion of the Release's objects.
func (d *deletionHooks) postDeleteObjects() []hooks.Hook {
	if d == nil {
		return nil
	}
	var out []hooks.Hook
	for _, h := range d.run.hooks {
		if h.IsJob() || h.Phase != v1.HookPostApply {
			continue
		}
		pre := slices.ContainsFunc(d.run.hooks, func(o hooks.Hook) bool { return o.Phase == v1.HookPreApply && o.Name == h.Name && !o.IsJob() })
		if !pre {
			out = append(out, h)
		}
	}
	return out
}

// writeDeletionStatus writes what the delete hooks did: status.hooks, and the Applied
// and Ready conditions when res holds the deletion; forced, when set, is the forced
// /sync that ran failed hooks again.
func (r *Reconciler) writeDeletionStatus(ctx context.Context, rel *v1.Release, now time.Time, hooks change[[]v1.HookStatus], res *policy.Result, forced *metav1.Time) error {
	s := *rel.Status.DeepCopy()
	if hooks.set {
		s.Hooks = hooks.to
	}
	if forced != nil {
		s.LastHandledForceSyncAt = forced
	}
	if res != nil {
		applied := policy.AppliedCondition(*res)
		healthy := policy.Condition{Type: v1.ConditionHealthy, Status: policy.StatusUnknown, Reason: "Deleting", Message: "The Release is being deleted."}
		if c := apimeta.FindStatusCondition(s.Conditions, v1.ConditionHealthy); c != nil {
			healthy = policy.Condition{Type: c.Type, Status: string(c.Status), Reason: c.Reason, Message: c.Message}
		}
		for _, c := range []policy.Condition{applied, policy.ReadyCondition(applied, healthy)} {
			setCondition(&s.Conditions, c, rel.Generation, now)
		}
	}
	if equality.Semantic.DeepEqual(rel.Status, s) {
		return nil
	}
	logr.FromContextOrDiscard(ctx).V(1).Info("Writing the status of the delete hooks")
	return r.patchStatus(ctx, rel, s)
}

// deleteLeftovers deletes the delete hooks' objects and Jobs once they ran (those
// with a delete policy that already took them are gone): the last thing the deletion
// of a Release does on the target.
func (d *deletionHooks) deleteLeftovers(ctx context.Context) error {
	if d == nil {
		return nil
	}
	for _, h := range d.run.hooks {
		if err := d.run.applier.DeleteHook(ctx, d.run.target(), h, "of the deleted Release"); err != nil {
			return err
		}
	}
	return nil
}
