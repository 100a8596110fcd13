package controller

import (
	"context"
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/hooks"
	"kumodo.io/convoy/internal/policy"
	"kumodo.io/convoy/internal/render"
	"kumodo.io/convoy/internal/store"
	"kumodo.io/convoy/internal/targets"
)

// state is what one reconcile observed and did, beyond policy.Input: the objects the
// apply and the status write need.
type state struct {
	// rel is the Release as read at the start. Not modified.
	rel *v1.Release
	// now is the time of the reconcile, read once.
	now time.Time

	// target is the resolved target cluster; nil when the reconcile stopped before.
	target *targets.Target
	// render is this reconcile's render; nil when it stopped before rendering or the
	// render failed.
	render *render.Result
	// renderObj is the Render object of a reused render (render.Reused), as
	// remembered or read; nil for a render templated anew.
	renderObj *v1.Render
	// trust is the data of the Secret that spec.chart.verify.secretRef names; nil
	// when it names none.
	trust map[string][]byte
	// verified is what verified this reconcile's chart; nil when it was not verified.
	verified *v1.VerifiedStatus
	// renderStatus is the new status.render; nil: keep it.
	renderStatus *v1.RenderStatus
	// newRender: this reconcile stored a new Render object.
	newRender bool
	// pinned is the Render object of the pin, when the pin names a render other than
	// the current one and it exists.
	pinned *v1.Render
	// inventory is the ReleaseInventory as the cache has it; nil when there is none.
	inventory *v1.ReleaseInventory
}

// applied is what applyStep did, as it returns it: how the attempt ended, for
// policy.Finish, and what the status write, the events and the metrics take from it.
// The zero value is a reconcile that applied nothing.
type applied struct {
	// result is how the attempt ended: Succeeded, or the Result of the step that
	// stopped it.
	result policy.Result
	// chart is the chart version and commit of the render applied; empty when none was.
	chart v1.RenderChart
	// syncWave is the new status.syncWave, when the apply changed it: the progress of
	// a render held at a sync wave, or nil once every wave is applied.
	syncWave change[*v1.SyncWaveStatus]
	// hooks is the new status.hooks, when the hooks changed it: the running or failed
	// hook batch, or none once the hooks are done.
	hooks change[[]v1.HookStatus]
	// changes counts what the apply changed on the target.
	changes changeCounts
	// inventory is the ReleaseInventory as the apply last wrote it; nil when it wrote
	// none.
	inventory *v1.ReleaseInventory
}

// change is a new value of a status field; the zero change keeps the field as it is.
type change[T any] struct {
	to  T
	set bool
}

func changeTo[T any](v T) change[T] { return change[T]{to: v, set: true} }

// changeCounts counts what an apply changed on the target.
type changeCounts struct {
	created, configured, pruned int
}

// gather reads everything one reconcile decides from, once: steps 2–4 of the flow
// and the data of steps 5–7. An error is a failure to read or write convoy's own
// objects (the cache, the API server: a Render to store, say); the Input holds what was
// gathered before it, the observer's health included, and the reconcile reports the
// error as a transient failure (ownFailure). A failure of the cluster or the render is
// Input.Preflight.
func (r *Reconciler) gather(ctx context.Context, st *state) (policy.Input, error) {
	rel := st.rel
	in := policy.Input{
		Now:           st.now,
		Policy:        syncPolicy(rel.Spec.SyncPolicy),
		FailurePolicy: failurePolicy(rel.Spec.FailurePolicy),
		Requests:      requests(rel),
		Rollout:       rollout(rel.Status.Rollout),
	}
	if ls := rel.Status.LastSuccessful; ls != nil {
		in.LastSuccessfulRender = ls.RenderRef
	}

	// The observer's health first: a failure to read anything after it still
	// reports the Healthy condition as it is (ownFailure).
	var err error
	if st.inventory, err = r.cachedInventory(ctx, rel); err != nil {
		return in, err
	}
	in.Health = health(st.inventory)
	in.InventoryGeneration = r.inventoryGeneration(st)
	if st.inventory != nil && st.inventory.SyncWave != nil {
		// The inventory's syncWave, written with its renderRef: the Release's
		// status.syncWave misses it when the status write after the apply failed.
		in.WaveHold, in.WaveHoldApplied = st.inventory.RenderRef, policy.WaveCount(st.inventory.SyncWave.Current)
	}

	others, err := sameCluster(ctx, r.waves, rel)
	if err != nil {
		return in, fmt.Errorf("list the Releases of the cluster of %s/%s: %w", rel.Namespace, rel.Name, err)
	}
	in.ClusterWaveBlocker = clusterWaveBlocker(rel, others)

	if !policy.HoldsBeforeRender(in) {
		stop, err := r.renderStep(ctx, st)
		if err != nil {
			return in, err
		}
		in.Preflight = stop
		if st.render != nil {
			in.CurrentRender = st.render.Ref
		}
	}

	if in.Pin, err = r.pin(ctx, st); err != nil {
		return in, err
	}
	in.HooksRunning, in.HooksRunningPhase, in.HooksForced, in.FailedHook = hookRecord(rel, in)
	return in, nil
}

// hookRecord reads status.hooks, the hook batch the last reconcile that ran hooks
// recorded: the render it belongs to (status.hooks[].renderRef, or for an entry
// written before it, the render its Job name was made for; among the renders this
// reconcile may apply) and whether it failed. A failed batch holds its render until
// the render changes or a forced sync, also across restarts of the controller and
// after its Job is gone. forced: the batch is recorded as a forced sync's.
func hookRecord(rel *v1.Release, in policy.Input) (ref string, phase v1.HookPhase, forced bool, failed *policy.FailedHook) {
	hs := rel.Status.Hooks
	if len(hs) == 0 {
		return "", "", false, nil
	}
	candidates := []string{in.CurrentRender, in.LastSuccessfulRender}
	if in.Pin != nil {
		candidates = append(candidates, in.Pin.RenderRef)
	}
	if in.Rollout != nil {
		candidates = append(candidates, in.Rollout.RenderRef, in.Rollout.PreviousRenderRef)
	}
	// The first hook with a Job names the render (an object hook's status does not).
	i := slices.IndexFunc(hs, func(h v1.HookStatus) bool { return h.Job != "" })
	if i < 0 {
		return "", "", false, nil
	}
	for _, ref := range candidates {
		if ref == "" || !recordsRender(rel, hs[i], ref) {
			continue
		}
		if failed := policy.FailedHookOf(ref, hs); failed != nil {
			return "", "", false, failed
		}
		return ref, hs[i].HookPhase, hs[i].Forced, nil
	}
	return "", "", false, nil
}

// recordsRender reports whether the status.hooks entry s of rel records a hook run
// of the render ref.
func recordsRender(rel *v1.Release, s v1.HookStatus, ref string) bool {
	if s.RenderRef != "" {
		return s.RenderRef == ref
	}
	return slices.Contains(hooks.LegacyJobNames(rel.Name, s.Name, ref), s.Job)
}

func syncPolicy(p v1.SyncPolicy) policy.SyncPolicy {
	out := policy.SyncPolicy{Automatic: ptr.Deref(p.Automatic, false)}
	if p.Interval != nil {
		out.Interval = p.Interval.Duration
	}
	if b := p.RetryBackoff; b != nil && b.Initial != nil && b.Initial.Duration > 0 {
		out.Backoff = &policy.Backoff{Initial: b.Initial.Duration}
		if b.Factor != nil {
			// An invalid factor (rejected by validation) counts as below 1: 2.
			out.Backoff.Factor, _ = b.Factor.Float64()
		}
		if b.Max != nil {
			out.Backoff.Max = b.Max.Duration
		}
	}
	return out
}

func failurePolicy(p *v1.FailurePolicy) *policy.FailurePolicy {
	if p == nil {
		return nil
	}
	out := &policy.FailurePolicy{Action: p.Action}
	if p.HealthTimeout != nil {
		out.HealthTimeout = p.HealthTimeout.Duration
	}
	return out
}

func requests(rel *v1.Release) policy.Requests {
	return policy.Requests{
		SyncRequestedAt:        rel.Annotations[v1.AnnotationSyncRequestedAt],
		ForceRequestedAt:       rel.Annotations[v1.AnnotationSyncForceRequestedAt],
		SyncRequestedRender:    rel.Annotations[v1.AnnotationSyncRequestedRender],
		LastHandledSyncAt:      timeOf(rel.Status.LastHandledSyncAt),
		LastHandledForceSyncAt: timeOf(rel.Status.LastHandledForceSyncAt),
	}
}

func timeOf(t *metav1.Time) *time.Time {
	if t == nil {
		return nil
	}
	c := t.Time
	return &c
}

func rollout(r *v1.RolloutStatus) *policy.Rollout {
	if r == nil {
		return nil
	}
	out := &policy.Rollout{Phase: r.Phase, RenderRef: r.RenderRef, PreviousRenderRef: r.PreviousRenderRef, Message: r.Message}
	if r.Deadline != nil {
		out.Deadline = r.Deadline.Time
	}
	return out
}

// health is the observer's data from the inventory's status; nil when it wrote none.
func health(inv *v1.ReleaseInventory) *policy.Health {
	if inv == nil || inv.Status.RenderRef == "" {
		return nil
	}
	h := &policy.Health{RenderRef: inv.Status.RenderRef, Generation: inv.Status.ObservedGeneration, State: inv.Status.Health}
	if len(inv.Status.Objects) > 0 {
		h.Objects = make(map[v1.ObjectReference]v1.HealthStatus, len(inv.Status.Objects))
		for _, o := range inv.Status.Objects {
			h.Objects[o.ObjectReference.Unversioned()] = o.Health
		}
	}
	if len(inv.Objects) > 0 {
		h.Waves = make(map[v1.ObjectReference]int32, len(inv.Objects))
		for _, o := range inv.Objects {
			h.Waves[o.ObjectReference.Unversioned()] = o.Wave
		}
	}
	return h
}

// inventoryGeneration is the newest generation of the Release's ReleaseInventory that
// the controller knows of: the cached inventory's, or the one the controller's own
// last write or read of it returned (inventories), when the cache has not caught up
// with it yet. The observer's health counts only for that generation
// (policy.AssessedHealth): a cache that lags behind the write of a wave's apply still
// holds the assessment of the waves before, which says nothing of it. 0 when there is
// no inventory.
func (r *Reconciler) inventoryGeneration(st *state) int64 {
	inv := st.inventory
	if inv == nil {
		return 0
	}
	if last, ok := r.inventories.get(releaseKey(st.rel), st.rel.UID); ok && last.uid == inv.UID && last.generation > inv.Generation {
		return last.generation
	}
	return inv.Generation
}

// cachedInventory is the Release's ReleaseInventory from the cache; nil when none.
// A shard's cache holds only the inventories labelled with its shard (hostmanager), so
// the inventory of a Release of a shard that was applied before — its Applied
// condition is set — and that the cache lacks is read from the API server: it was
// written before inventories carried the shard label (an upgrade), or under the
// Release's previous shard (a move). It is labelled with the Release's shard at once,
// so that this shard's caches (the controller's and the observer's) take it over.
func (r *Reconciler) cachedInventory(ctx context.Context, rel *v1.Release) (*v1.ReleaseInventory, error) {
	inv, err := store.GetInventory(ctx, r.client, client.ObjectKeyFromObject(rel))
	if inv != nil || err != nil {
		return inv, err
	}
	if rel.Labels[v1.LabelShard] == "" || meta.FindStatusCondition(rel.Status.Conditions, v1.ConditionApplied) == nil {
		return nil, nil
	}
	return r.adoptInventory(ctx, rel)
}

// adoptInventory reads the Release's ReleaseInventory from the API server and, when
// its shard label is not the Release's, labels it; nil when there is none.
func (r *Reconciler) adoptInventory(ctx context.Context, rel *v1.Release) (*v1.ReleaseInventory, error) {
	inv, err := store.GetInventory(ctx, r.apiReader, client.ObjectKeyFromObject(rel))
	if inv == nil || err != nil {
		return inv, err
	}
	if _, changed := store.ShardLabels(rel, inv); changed {
		log.FromContext(ctx).Info("Labelling the ReleaseInventory with the Release's shard", "shard", rel.Labels[v1.LabelShard])
	}
	return store.LabelInventory(ctx, r.client, rel, inv)
}

// pin is the Release's pin for the decisions (step 5). When it names a render other
// than the current one, the Render object is read, for its existence and, if the
// apply goes ahead, its manifests.
func (r *Reconciler) pin(ctx context.Context, st *state) (*policy.Pin, error) {
	p := st.rel.Pin
	if p == nil || p.RenderRef == "" {
		return nil, nil
	}
	out := &policy.Pin{RenderRef: p.RenderRef, RenderExists: true}
	if st.render != nil && st.render.Ref == p.RenderRef {
		return out, nil
	}
	obj, err := store.GetRender(ctx, r.apiReader, st.rel.Namespace, st.rel.Name, p.RenderRef)
	if err != nil {
		return nil, err
	}
	out.RenderExists = obj != nil
	st.pinned = obj
	return out, nil
}
