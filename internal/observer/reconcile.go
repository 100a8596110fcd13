package observer

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-logr/logr"
	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/observer/health"
	"kumodo.io/convoy/internal/store"
	"kumodo.io/convoy/internal/targets"
)

// clusterRecheck is when an inventory whose target cluster cannot be reached is
// looked at again.
const clusterRecheck = time.Minute

// Reconcile assesses one ReleaseInventory: the health of its objects from the target
// informers, the hook Jobs of the Release's running batch, and drift when due. It
// sends /sync for the occurrences not signalled yet, then writes the status when it
// changed (health/doc.go). It never applies anything.
func (o *Observer) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	w := o.watches.Load()
	if w == nil {
		return reconcile.Result{}, errNotStarted
	}
	key := req.NamespacedName
	inv, rel, err := o.load(ctx, w, key)
	if err != nil || inv == nil {
		return reconcile.Result{}, err
	}
	log := logr.FromContextOrDiscard(ctx).WithValues("release", key.String(), "cluster", inv.Cluster, "renderRef", inv.RenderRef)
	ctx = logr.NewContext(ctx, log)

	start := o.clock.Now()
	target, err := o.clusters.Resolve(ctx, onCluster(rel, inv.Cluster))
	if err != nil {
		if targets.IsNotReady(err) {
			log.Info("The target cluster is not ready; assessing later", "reason", err.Error())
			return reconcile.Result{RequeueAfter: clusterRecheck}, nil
		}
		return reconcile.Result{}, err
	}
	obs, err := o.observe(ctx, w, target, rel, inv, key)
	if err != nil {
		return reconcile.Result{}, err
	}
	if wait := o.settleWait(ctx, key, inv, obs); wait > 0 {
		return reconcile.Result{RequeueAfter: earliest(obs.recheck, wait)}, nil
	}
	if done, err := o.report(ctx, key, rel, inv, obs); done || err != nil {
		return reconcile.Result{}, err
	}
	o.metrics.assessment.Observe(o.clock.Since(start).Seconds())

	requeue := obs.recheck
	if !obs.synced {
		requeue = earliest(requeue, unsyncedRecheck)
	}
	return reconcile.Result{RequeueAfter: requeue}, nil
}

// load reads the ReleaseInventory of key and its Release. Both nil (and no error)
// means there is nothing to assess: the inventory or the Release is gone (or the
// Release is of another shard), and what the observer kept of it is forgotten; or
// the Release is being deleted, and the controller is deleting what it applied.
func (o *Observer) load(ctx context.Context, w *watches, key types.NamespacedName) (*v1.ReleaseInventory, *v1.Release, error) {
	inv, err := store.GetInventory(ctx, o.client, key)
	if err != nil {
		return nil, nil, err
	}
	if inv == nil {
		o.forget(w, key)
		return nil, nil, nil
	}
	rel := &v1.Release{}
	if err := o.client.Get(ctx, key, rel); err != nil {
		if apierrors.IsNotFound(err) {
			// No Release (or one of another shard): nothing of ours to assess.
			o.forget(w, key)
			return nil, nil, nil
		}
		return nil, nil, err
	}
	if !rel.DeletionTimestamp.IsZero() {
		// The controller is deleting what the Release applied: nothing to report, no
		// /sync to send.
		return nil, nil, nil
	}
	return inv, rel, nil
}

// observation is what one assessment of an inventory saw on its target cluster.
type observation struct {
	// now is when the target was resolved: the time of the assessment.
	now time.Time
	// assessment is the inventory's next status and whether to write it.
	assessment health.Assessment
	// view is what the triggers read of the Release, with the render's sync waves
	// while a wave waits.
	view health.ReleaseView
	// synced is false when an informer has not listed an object's kind yet, or its
	// view of an object predates the controller's apply.
	synced bool
	// recheck is the earliest of the hook Jobs', the drift check's and the sync
	// waves' next looks; 0 for none.
	recheck time.Duration
}

// observe assesses inv on target: its objects' health and its hook Jobs from the
// informers, drift when due, and the render's sync waves while a wave waits.
func (o *Observer) observe(ctx context.Context, w *watches, target *targets.Target, rel *v1.Release, inv *v1.ReleaseInventory, key types.NamespacedName) (observation, error) {
	obs := observation{now: o.clock.Now()}
	// Health comes from informers shared by every Release on the cluster, with
	// convoy's own identity (target.Base); the drift check's reads and dry runs act as
	// the Release (target).
	results, synced, err := o.objectResults(ctx, w, target.Base, inv, key)
	if err != nil {
		return obs, err
	}
	hooks, hookRecheck, err := o.hookStatus(w, target.Base, rel, inv, key, obs.now)
	if err != nil {
		return obs, err
	}
	w.retain(key, kindsUsed(target.Name, rel, inv))
	drift, driftRecheck := o.driftStatus(ctx, target, rel, inv, obs.now)

	obs.assessment = health.Assess(health.AssessInput{Inventory: inv, Results: results, Hooks: hooks, Drift: drift, Now: obs.now})
	obs.synced = synced
	obs.view = health.ReleaseViewOf(rel, inv)
	var wavesRecheck time.Duration
	if obs.view.Waiting() {
		if obs.view.RenderWaves, err = o.renderWavesOf(ctx, rel, obs.view.RenderRef); err != nil {
			// No wave completes without the render's waves: try again soon.
			logr.FromContextOrDiscard(ctx).Error(err, "Cannot read the sync waves of the render being applied")
			wavesRecheck = unsyncedRecheck
		}
	}
	obs.recheck = earliest(earliest(hookRecheck, driftRecheck), wavesRecheck)
	return obs, nil
}

// settleWait is how long the first health data of a render that is still
// progressing waits, so that a render healthy within the settle time is reported,
// and its Release reconciled, once; 0 to report now.
func (o *Observer) settleWait(ctx context.Context, key types.NamespacedName, inv *v1.ReleaseInventory, obs observation) time.Duration {
	if inv.Status.RenderRef == inv.RenderRef {
		o.sightings.forget(key)
		return 0
	}
	wait := health.SettleWait(inv.Status, obs.assessment.Status, o.sightings.firstSeen(key, inv.UID, inv.RenderRef, obs.now), obs.now, o.settle)
	if wait > 0 {
		logr.FromContextOrDiscard(ctx).V(1).Info("Holding back the first health data of a progressing render", "for", wait)
	}
	return wait
}

// report writes the assessed status when it changed and sends /sync for the
// occurrences not signalled yet, in the order of the Release's sync mode. done says
// the assessment ends here without an error (writeStatus).
func (o *Observer) report(ctx context.Context, key types.NamespacedName, rel *v1.Release, inv *v1.ReleaseInventory, obs observation) (done bool, err error) {
	mem, known := o.memory.Get(key)
	sig := health.Triggers(inv.Status, obs.assessment.Status, obs.view, mem, known)
	if !ptr.Deref(rel.Spec.SyncPolicy.Automatic, false) { // unset is manual mode
		if err := o.sendSync(ctx, key, rel, sig); err != nil {
			return false, err
		}
		o.memory.Set(key, sig.Memory)
		return o.writeStatus(ctx, inv, obs.assessment)
	}
	// The status first, so that the controller handles the health data and the /sync
	// in one reconcile (health/doc.go); a /sync that fails after the write is sent
	// again: the memory says it was not.
	o.memory.Set(key, sig.Signalled)
	if done, err := o.writeStatus(ctx, inv, obs.assessment); done || err != nil {
		return done, err
	}
	if err := o.sendSync(ctx, key, rel, sig); err != nil {
		return false, err
	}
	o.memory.Set(key, sig.Memory)
	return false, nil
}

// sendSync posts the /syncs for the occurrences of sig.Send: one per render they
// concern, bound to it (…/sync?render=<ref>), so that the observer's /sync approves
// the render it assessed (or whose hook batch ran) and no other; occurrences that
// name no render share one plain /sync. A 409 Conflict says that render is no longer
// the Release's: the signal is dropped (counted, logged), not sent again; the next
// render has occurrences of its own. When a /sync fails otherwise, the occurrences
// already signalled or dropped are remembered, so that only the rest is sent again.
func (o *Observer) sendSync(ctx context.Context, key types.NamespacedName, rel *v1.Release, sig health.Signals) error {
	log := logr.FromContextOrDiscard(ctx)
	var handled []string
	for _, b := range byRender(sig.Send) {
		log.Info("Requesting a sync", "triggers", describe(b.triggers), "approves", renderOrAny(b.render))
		err := o.syncer.Sync(ctx, rel.Namespace, rel.Name, b.render)
		switch {
		case apierrors.IsConflict(err):
			log.V(1).Info("The API server refused the sync: the render is no longer the Release's; dropping the signal",
				"approves", b.render, "reason", err.Error())
			o.metrics.syncRefusedFor(b.triggers)
		case err != nil:
			if len(handled) > 0 {
				o.memory.Set(key, append(slices.Clone(sig.Signalled), handled...))
			}
			return fmt.Errorf("POST releases/%s/sync in %s: %w", rel.Name, rel.Namespace, err)
		default:
			o.metrics.syncSent(b.triggers)
		}
		handled = append(handled, keysOf(b.triggers)...)
	}
	return nil
}

// syncBatch is the occurrences one /sync signals: those of one render.
type syncBatch struct {
	render   string
	triggers []health.Trigger
}

// byRender groups occurrences by the render they concern, in the order of the first
// occurrence of each.
func byRender(ts []health.Trigger) []syncBatch {
	var out []syncBatch
	for _, t := range ts {
		i := slices.IndexFunc(out, func(b syncBatch) bool { return b.render == t.RenderRef })
		if i < 0 {
			out = append(out, syncBatch{render: t.RenderRef})
			i = len(out) - 1
		}
		out[i].triggers = append(out[i].triggers, t)
	}
	return out
}

// renderOrAny is what a /sync bound to render approves, for the log.
func renderOrAny(render string) string {
	if render == "" {
		return "any render"
	}
	return render
}

func keysOf(ts []health.Trigger) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Key
	}
	return out
}

// writeStatus writes the assessed status when it changed. done says the assessment
// ends here without an error: the write met a newer inventory, whose update event
// brings it back.
func (o *Observer) writeStatus(ctx context.Context, inv *v1.ReleaseInventory, a health.Assessment) (done bool, err error) {
	if !a.Write {
		return false, nil
	}
	logr.FromContextOrDiscard(ctx).V(1).Info("Writing the health data", "health", a.Status.Health)
	patched := inv.DeepCopy()
	patched.Status = a.Status
	if err := store.PatchInventoryStatus(ctx, o.client, patched, inv); err != nil {
		if apierrors.IsConflict(err) {
			return true, nil
		}
		return false, err
	}
	o.metrics.statusWrites.Inc()
	return false, nil
}

// kindsUsed is what objectResults and hookStatus look up on the cluster: the kinds of
// the inventory's objects, and Jobs while a hook batch runs.
func kindsUsed(cluster string, rel *v1.Release, inv *v1.ReleaseInventory) map[kindKey]struct{} {
	used := make(map[kindKey]struct{}, 2)
	for _, obj := range inv.Objects {
		used[kindKey{cluster: cluster, gvk: schema.GroupVersionKind{Group: obj.Group, Version: obj.Version, Kind: obj.Kind}}] = struct{}{}
	}
	if len(rel.Status.Hooks) > 0 {
		used[kindKey{cluster: cluster, gvk: batchv1.SchemeGroupVersion.WithKind("Job")}] = struct{}{}
	}
	return used
}

// objectResults is the health of each inventory object the informers know; synced is
// false when an informer has not listed its kind yet, or its view of an object is
// older than what the controller applied (behind, viewOf).
func (o *Observer) objectResults(ctx context.Context, w *watches, target *targets.Target, inv *v1.ReleaseInventory, key types.NamespacedName) (map[v1.ObjectReference]health.Result, bool, error) {
	results := make(map[v1.ObjectReference]health.Result, len(inv.Objects))
	synced := true
	for _, obj := range inv.Objects {
		live, known, err := w.lookup(target, obj.ObjectReference, key)
		if err != nil {
			return nil, false, err
		}
		current, fresh := known, false
		if known {
			if live, current, fresh, err = o.viewOf(ctx, target, key, obj, live); err != nil {
				return nil, false, err
			}
		}
		if !current || (!fresh && behind(live, obj)) {
			// The informer has not listed the kind yet, or its view of the object is
			// older than what the controller applied (an earlier generation, or an
			// earlier object of the same name): no result until it catches up (its
			// event queues the inventory again).
			synced = false
			continue
		}
		results[obj.ObjectReference] = health.ObjectStatus(live)
	}
	return results, synced, nil
}

// behind reports whether the informer's view of an object predates the generation the
// controller's last apply gave it, so that a view from before the apply is not taken
// for the health of the render applied. A missing object is not behind: it is Missing.
func behind(live *unstructured.Unstructured, obj v1.InventoryObject) bool {
	return live != nil && obj.Generation > 0 && live.GetGeneration() < obj.Generation
}

// forget drops what the observer keeps of an inventory that is gone.
func (o *Observer) forget(w *watches, key types.NamespacedName) {
	w.forget(key)
	o.memory.Forget(key)
	o.renderWaves.forget(key)
	o.driftTimes.forget(key)
	o.sightings.forget(key)
	o.replaced.forget(key)
}

// onCluster is rel as targeting cluster: the inventory's objects live where the
// inventory says, even while the Release moves to another Cluster.
func onCluster(rel *v1.Release, cluster string) *v1.Release {
	if rel.Spec.Cluster == cluster {
		return rel
	}
	c := rel.DeepCopy()
	c.Spec.Cluster = cluster
	return c
}

// earliest is the shorter of two positive delays; 0 means none.
func earliest(a, b time.Duration) time.Duration {
	switch {
	case a <= 0:
		return b
	case b <= 0:
		return a
	default:
		return min(a, b)
	}
}

func describe(ts []health.Trigger) string {
	msgs := make([]string, len(ts))
	for i, t := range ts {
		msgs[i] = t.Message
	}
	return strings.Join(msgs, " ")
}
