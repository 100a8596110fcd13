package observer

import (
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/hooks"
	"kumodo.io/convoy/internal/targets"
)

// hookStatus is the state of the hook Jobs of the Release's running batch
// (status.hooks, written by the controller), assessed with health.HookJobPhase from
// the Job informer of the target, and when to look again for a Job that may time out.
// Hook Jobs are not part of the health. A Job the informer has not listed yet keeps
// its stored state. A chart's hook Job keeps its name from run to run: a Job of the
// name that another run created (v1.AnnotationHookRun) is not this run's, which is
// then Pending.
func (o *Observer) hookStatus(w *watches, target *targets.Target, rel *v1.Release, inv *v1.ReleaseInventory, key types.NamespacedName, now time.Time) ([]v1.HookStatus, time.Duration, error) {
	if len(rel.Status.Hooks) == 0 {
		return nil, 0, nil
	}
	ns := rel.Spec.TargetNamespace
	if ns == "" {
		ns = rel.Namespace
	}
	stored := map[string]v1.HookStatus{}
	for _, h := range inv.Status.Hooks {
		stored[storedKey(h)] = h
	}
	var recheck time.Duration
	out := make([]v1.HookStatus, 0, len(rel.Status.Hooks))
	for _, h := range rel.Status.Hooks {
		st := v1.HookStatus{Name: h.Name, Batch: h.Batch, Job: h.Job, RenderRef: h.RenderRef}
		if h.Job == "" {
			out = append(out, h)
			continue
		}
		ref := v1.ObjectReference{Group: batchv1.GroupName, Version: "v1", Kind: "Job", Namespace: ns, Name: h.Job}
		live, known, err := w.lookup(target, ref, key)
		if err != nil {
			return nil, 0, err
		}
		if !known {
			if s, ok := stored[storedKey(h)]; ok {
				st = s
			} else {
				st.Phase = v1.HookJobPending
			}
			out = append(out, st)
			continue
		}
		if id := hooks.RunIDOf(h); live != nil && id != "" && !hooks.OfRun(live, id) {
			live = nil // another run's Job: this run's is not created yet
		}
		var job *batchv1.Job
		// The run is the Job's UID; a Job gone keeps the UID it had.
		st.JobUID = stored[storedKey(h)].JobUID
		if live != nil {
			st.JobUID = string(live.GetUID())
			job = &batchv1.Job{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(live.Object, job); err != nil {
				return nil, 0, fmt.Errorf("read hook Job %s/%s: %w", ns, h.Job, err)
			}
		}
		hj := hooks.JobPhase(job, hookTimeout(rel, h.Name), now)
		st.Phase, st.Message = hj.Phase, hj.Message
		recheck = earliest(recheck, hj.RecheckAfter)
		out = append(out, st)
	}
	return out, recheck, nil
}

// storedKey identifies the run of a hook in the inventory's status.hooks.
func storedKey(h v1.HookStatus) string {
	return h.Name + "/" + h.Job + "/" + h.RenderRef
}

// hookTimeout is the timeout of the Release's hook name; 0 (the default) when the
// Release's lifecycle does not set one.
func hookTimeout(rel *v1.Release, name string) time.Duration {
	if rel.Lifecycle == nil {
		return 0
	}
	for _, h := range rel.Lifecycle.Hooks {
		if h.Name == name && h.Timeout != nil {
			return h.Timeout.Duration
		}
	}
	return 0
}
