package controller

import (
	"context"
	"fmt"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/apply"
	"kumodo.io/convoy/internal/hooks"
	"kumodo.io/convoy/internal/policy"
	"kumodo.io/convoy/internal/reasons"
	"kumodo.io/convoy/internal/render"
	"kumodo.io/convoy/internal/store"
)

// applyStep carries out what Decide asked for: the pre-apply dry run unless a force
// skips it (step 9), the sync waves that PlanWaves allows, growing the
// ReleaseInventory before each apply (step 10), and the prune after the last wave
// (step 11). It returns what it did: how the attempt ended, for policy.Finish
// (Succeeded, or the Result of the step that stopped), and the changes of status it
// calls for. An error means the reconcile itself could not go on (a cancelled
// context).
//
// With decision.RunHooks the PreApply hook batches come first (step 8) and the PostApply
// batches last (step 12); a forced sync (decision.RerunHooks) deletes the render's hook
// Jobs first, so that they run anew.
func (r *Reconciler) applyStep(ctx context.Context, st *state, in policy.Input, decision *policy.Apply) (applied, error) {
	logger := logr.FromContextOrDiscard(ctx).WithValues("renderRef", decision.RenderRef)
	var out applied
	objects, chartHooks, chart, stop, err := r.objectsToApply(ctx, st, decision.RenderRef)
	if stop != nil || err != nil {
		return out.ended(deref(stop), nil), err
	}
	out.chart = chart

	var hr *hookRun
	if decision.RunHooks {
		// A PreApply hook is the first write to the target.
		if stop, err := r.recheckGates(ctx, st, in); stop != nil || err != nil {
			return out.ended(deref(stop), nil), err
		}
		if hr, err = newHookRun(r, st, in, decision.RenderRef, chartHooks); err != nil {
			return out.ended(policy.Stopped(v1.ReasonUnappliable, capitalize(err.Error())+"."), nil), nil
		}
		hr.forced = decision.Forced
		if decision.RerunHooks {
			if err := hr.rerun(ctx); err != nil {
				res, err := st.failed(ctx, err, v1.ReasonDeployFailed, "The re-run of the hooks")
				return out.ended(res, hr), err
			}
		}
		stop, err := hr.run(ctx, v1.HookPreApply)
		if err != nil {
			res, err := st.failed(ctx, err, v1.ReasonDeployFailed, "The PreApply hooks")
			return out.ended(res, hr), err
		}
		if stop != nil {
			return out.ended(*stop, hr), nil
		}
	}
	res, err := r.applyRender(ctx, st, in, decision, objects, &out)
	if err != nil || res.Reason != v1.ReasonApplied {
		return out.ended(res, hr), err
	}
	// The hooks are done once the PostApply batches are: a successful apply then ends
	// what status.hooks recorded.
	var done change[[]v1.HookStatus]
	if len(st.rel.Status.Hooks) > 0 {
		done = changeTo[[]v1.HookStatus](nil)
	}
	if hr == nil {
		out.result, out.hooks = res, done
		return out, nil
	}
	stop, err = hr.run(ctx, v1.HookPostApply)
	switch {
	case err != nil:
		// Not counted as applied, and status.hooks kept: the retry applies again and
		// goes on with the batches.
		out.result, err = st.failed(ctx, err, v1.ReasonDeployFailed, "The PostApply hooks")
		return out, err
	case stop != nil:
		stop.AfterApply = true
		return out.ended(*stop, hr), nil
	}
	if err := hr.cleanup(ctx); err != nil {
		// The hooks succeeded; the old Jobs go at the next render's cleanup.
		logger.Error(err, "Cannot delete the hook Jobs of older renders")
	}
	out.result, out.hooks = res, done
	return out, nil
}

// attempt is how the apply attempt ended, for policy.Finish: its result, with the
// generation of the ReleaseInventory as the apply left it (the observer's health of
// an older one does not count).
func (a applied) attempt() policy.Result {
	res := a.result
	if a.inventory != nil {
		res.InventoryGeneration = a.inventory.Generation
	}
	return res
}

// ended is a ended with res, with the status.hooks that the hook run hr (nil: none)
// decided.
func (a applied) ended(res policy.Result, hr *hookRun) applied {
	a.result = res
	if hr != nil {
		a.hooks = hr.status
	}
	return a
}

// applyRender is the pre-apply dry run, the sync waves and the prune (steps 9–11).
// It records in out what the apply changed and the progress of the sync waves.
func (r *Reconciler) applyRender(ctx context.Context, st *state, in policy.Input, decision *policy.Apply, objects []apply.Object, out *applied) (policy.Result, error) {
	applier := apply.New(st.target.Client, r.applyOpts)
	key := releaseKey(st.rel)
	objPlan, stop, err := r.planObjects(ctx, st, applier, decision, objects)
	if stop != nil || err != nil {
		return deref(stop), err
	}
	// What this apply sees of the objects spares the next dry run their GETs, also
	// when it stops half-way.
	defer func() { r.seen.put(key, st.rel.UID, objPlan.Seen()) }()
	if objPlan.Writes() {
		if stop, err := r.recheckGates(ctx, st, in); stop != nil || err != nil {
			return deref(stop), err
		}
	}

	w, hold, stop, err := r.applyWaves(ctx, st, in, applier, decision, objPlan, out)
	if stop != nil || err != nil {
		return deref(stop), err
	}
	if hold != nil {
		return *hold, nil
	}
	return r.pruneStale(ctx, st, applier, decision, objPlan, w, out)
}

// planObjects is the pre-apply dry run of objects (step 9), or, when decision skips
// it, their plan without one.
func (r *Reconciler) planObjects(ctx context.Context, st *state, applier *apply.Applier, decision *policy.Apply, objects []apply.Object) (*apply.Plan, *policy.Result, error) {
	logger := logr.FromContextOrDiscard(ctx).WithValues("renderRef", decision.RenderRef)
	if !decision.DryRun {
		logger.Info("Skipping the pre-apply dry run: a forced sync, or an apply that began, goes on")
		objPlan, err := apply.NewPlan(objects)
		if err != nil {
			stop := policy.Stopped(v1.ReasonUnappliable, capitalize(err.Error())+".")
			return nil, &stop, nil
		}
		return objPlan, nil, nil
	}
	logger.V(1).Info("Running the pre-apply dry run")
	key := releaseKey(st.rel)
	seen, _ := r.seen.get(key, st.rel.UID)
	objPlan, err := applier.DryRun(ctx, objects, seen, inventoryObjects(st.inventory)...)
	if err != nil {
		r.seen.forget(key)
		stop, err := st.failed(ctx, err, v1.ReasonDeployFailed, "The pre-apply dry run")
		return nil, &stop, err
	}
	return objPlan, nil, nil
}

// applyWaves applies the sync waves that policy.PlanWaves lets through (step 10)
// and writes the inventory: what the waves did (waved), and the hold when a later
// wave waits.
func (r *Reconciler) applyWaves(ctx context.Context, st *state, in policy.Input, applier *apply.Applier, decision *policy.Apply, objPlan *apply.Plan, out *applied) (w waved, hold, stop *policy.Result, err error) {
	logger := logr.FromContextOrDiscard(ctx).WithValues("renderRef", decision.RenderRef)
	stopped := func(reason string, err error) (waved, *policy.Result, *policy.Result, error) {
		res := policy.Stopped(reason, capitalize(err.Error())+".")
		return waved{}, nil, &res, nil
	}
	var inv *v1.ReleaseInventory
	// The waves are planned on the inventory as the API server has it (the one the
	// inventory grows from): its renderRef, syncWave and health are written
	// together, while the cache may hold an older write of it, and the Release's
	// status.syncWave may have missed the last one (a status write that failed).
	live, err := r.liveInventory(ctx, st)
	if err != nil {
		return stopped(v1.ReasonDeployFailed, err)
	}
	waves := policy.PlanWaves(waveInput(live, in, decision.RenderRef, objPlan.Entries(nil)))
	var entries []v1.InventoryObject
	for _, wave := range waves.Waves {
		entries = append(entries, objPlan.Entries(&wave)...)
	}
	if inv, err = r.growInventory(ctx, st, live, entries); err != nil {
		return stopped(v1.ReasonDeployFailed, err)
	}
	out.inventory = inv
	// The renders that applied what this one may prune: the one the inventory names
	// until this apply is done, and the last successful one (a failed prune leaves
	// the inventory naming this render).
	previous := []string{inv.RenderRef}
	if ls := st.rel.Status.LastSuccessful; ls != nil {
		previous = append(previous, ls.RenderRef)
	}

	var changes []apply.Change
	for _, wave := range waves.Waves {
		logger.V(1).Info("Applying a sync wave", "wave", wave)
		res, err := applier.ApplyWave(ctx, objPlan, wave)
		if res != nil {
			out.changes.add(res.Changes)
			changes = append(changes, res.Changes...)
		}
		if err != nil {
			res, err := st.failed(ctx, err, v1.ReasonDeployFailed, fmt.Sprintf("The apply of sync wave %d", wave))
			return waved{}, nil, &res, err
		}
	}
	// Only now does the inventory name the render applied, with the generations the
	// apply gave the objects it changed: the observer must not assess the render on a
	// view of its objects from before the apply.
	// With it, when a later wave waits, how many waves are applied: in the same write,
	// so that the observer sees the render and its progress together.
	var progress *v1.SyncWaveStatus
	if waves.Hold != nil {
		progress = &v1.SyncWaveStatus{Current: int32(len(waves.Waves)), Total: int32(waves.Total)} //nolint:gosec // few waves
	}
	if inv, err = r.writeInventory(ctx, st.rel, inv, decision.RenderRef, progress, apply.Applied(inv.Objects, changes)); err != nil {
		return stopped(v1.ReasonDeployFailed, err)
	}
	out.inventory = inv
	if waves.Hold != nil {
		out.syncWave = changeTo(progress)
		held := *waves.Hold
		held.WavesApplied = true
		return waved{inv: inv, previous: previous}, &held, nil, nil
	}
	out.syncWave = changeTo[*v1.SyncWaveStatus](nil)
	return waved{inv: inv, previous: previous, created: live == nil, changes: changes}, nil, nil, nil
}

// waved is what applyWaves did: the inventory as written, the renders that applied
// what this one may prune, whether the inventory was made in this apply, and the
// changes of its waves (storage recovery reads the last two: adopt.go).
type waved struct {
	inv      *v1.ReleaseInventory
	previous []string
	created  bool
	changes  []apply.Change
}

// pruneStale adopts what the storage lost track of (adopt.go), deletes what the
// inventory holds that the render no longer has (step 11), keeping what the previous
// renders' keep annotations keep, and writes the inventory without it.
func (r *Reconciler) pruneStale(ctx context.Context, st *state, applier *apply.Applier, decision *policy.Apply, objPlan *apply.Plan, w waved, out *applied) (policy.Result, error) {
	inv, previous := w.inv, w.previous
	disabled := st.rel.Spec.Prune != nil && !*st.rel.Spec.Prune
	if !disabled {
		var err error
		if inv, err = r.adoptLabelled(ctx, st, applier, inv, decision.RenderRef, objPlan.Entries(nil), w.created, w.changes); err != nil {
			return policy.Stopped(v1.ReasonPruneFailed, capitalize(err.Error())+"."), nil
		}
		out.inventory = inv
	}
	pin := apply.PruneInput{
		Release:   apply.Owner{Name: st.rel.Name, Namespace: st.rel.Namespace},
		Inventory: inv.Objects,
		Render:    objPlan.Entries(nil),
		Disabled:  disabled,
	}
	if !pin.Disabled && len(apply.Stale(pin.Inventory, pin.Render)) > 0 {
		var err error
		if pin.Keep, err = r.renderedKeeps(ctx, st.rel, previous...); err != nil {
			return policy.Stopped(v1.ReasonPruneFailed, capitalize(err.Error())+"."), nil
		}
	}
	pruned, err := applier.Prune(ctx, pin)
	if pruned != nil {
		r.reportKept(ctx, st.rel, "Prune", pruned.Kept)
		out.changes.pruned += len(pruned.Deleted)
		written, werr := r.writeInventory(ctx, st.rel, inv, decision.RenderRef, nil, pruned.Inventory)
		if werr != nil && err == nil {
			return policy.Stopped(v1.ReasonPruneFailed, capitalize(werr.Error())+"."), nil
		}
		if werr == nil {
			out.inventory = written
		}
	}
	if err != nil {
		return st.failed(ctx, err, v1.ReasonPruneFailed, "The prune")
	}
	return policy.Succeeded(), nil
}

// failed is failed for a step on st's target: a request refused by the target's
// authorization while acting as the Release's ServiceAccount is Forbidden.
func (st *state) failed(ctx context.Context, err error, fallback, what string) (policy.Result, error) {
	res, stop := failed(ctx, err, fallback, what)
	if stop == nil {
		res.Reason = forbiddenReason(st.target, res.Reason, err)
	}
	return res, stop
}

// failed turns an error of internal/apply into the Result of the step: its Reason
// (Unappliable for a rejection, else DeployFailed or PruneFailed). A cancelled context
// ends the reconcile instead.
func failed(ctx context.Context, err error, fallback, what string) (policy.Result, error) {
	if ctx.Err() != nil {
		return policy.Result{}, ctx.Err()
	}
	return policy.Stopped(reasons.Of(err, fallback), fmt.Sprintf("%s failed: %v.", what, err)), nil
}

// objectsToApply returns the objects and the chart's hook Jobs of the render to apply
// and its chart version and commit: the current render, or the pinned or previous render
// from its Render object.
func (r *Reconciler) objectsToApply(ctx context.Context, st *state, ref string) ([]apply.Object, []hooks.Chart, v1.RenderChart, *policy.Result, error) {
	var none v1.RenderChart
	if st.render != nil && st.render.Ref == ref {
		return applyObjects(st.render.Objects), st.render.Hooks, v1.RenderChart{Version: st.render.ChartVersion, Commit: st.render.Commit}, nil, nil
	}
	obj := st.pinned
	if obj == nil || obj.RenderRef != ref {
		var err error
		if obj, err = store.GetRender(ctx, r.apiReader, st.rel.Namespace, st.rel.Name, ref); err != nil {
			return nil, nil, none, nil, err
		}
	}
	if obj == nil {
		return nil, nil, none, &policy.Result{Reason: v1.ReasonUnappliable, Message: fmt.Sprintf(
			"The Render of render %s no longer exists, so it cannot be applied.", ref)}, nil
	}
	if stop := unverifiedRender(st.rel, obj); stop != nil {
		return nil, nil, none, stop, nil
	}
	objs, hooks, err := render.DecodeManifests(obj.Manifests)
	if err != nil {
		return nil, nil, none, &policy.Result{Reason: v1.ReasonUnappliable, Message: fmt.Sprintf(
			"The manifests of Render %s cannot be read: %v.", obj.Name, err)}, nil
	}
	return applyObjects(objs), hooks, obj.Chart, nil, nil
}

func applyObjects(objs []render.Object) []apply.Object {
	out := make([]apply.Object, 0, len(objs))
	for _, o := range objs {
		out = append(out, apply.Object{Wave: o.Wave, Object: o.Unstructured})
	}
	return out
}

// waveInput is what PlanWaves decides from for renderRef, whose objects are entries,
// with inv the ReleaseInventory as the API server has it (nil: none).
func waveInput(inv *v1.ReleaseInventory, in policy.Input, renderRef string, entries []v1.InventoryObject) policy.WaveInput {
	out := policy.WaveInput{RenderRef: renderRef, Applied: renderRef == in.LastSuccessfulRender, Health: currentHealth(inv, health(inv))}
	waves := map[int32]bool{}
	for _, e := range entries {
		out.Objects = append(out.Objects, policy.WaveObject{Ref: e.ObjectReference, Wave: e.Wave})
		waves[e.Wave] = true
	}
	out.AppliedWaves = appliedWaves(inv, renderRef, len(waves))
	return out
}

// currentHealth is h, the observer's data of inv, when it assessed inv as it is
// (status.observedGeneration; 0, from an observer that does not record it, counts as
// current); else nil: the objects of the waves applied since have no result for what
// was applied, and the next wave waits for the observer's next assessment.
func currentHealth(inv *v1.ReleaseInventory, h *policy.Health) *policy.Health {
	if inv == nil || h == nil {
		return h
	}
	if g := inv.Status.ObservedGeneration; g != 0 && g < inv.Generation {
		return nil
	}
	return h
}

// appliedWaves is how many of the total waves of renderRef, ascending, earlier
// reconciles applied for it, from inv. The inventory names a render once an apply of
// it is done, and in the same write its syncWave counts the waves applied while a
// later one waits (cleared when the last wave is applied). Anything else (the
// inventory names another render, a syncWave of another number of waves) means none:
// the waves are walked anew.
func appliedWaves(inv *v1.ReleaseInventory, renderRef string, total int) int {
	if inv == nil || inv.RenderRef != renderRef {
		return 0
	}
	sw := inv.SyncWave
	switch {
	case sw == nil:
		return total
	case int(sw.Total) == total:
		return int(sw.Current)
	default:
		return 0
	}
}

// growInventory adds entries to the inventory's object list before they are applied,
// so that a crash mid-apply loses track of nothing. The list it grows, live, has the
// API server's spec (liveInventory): the cache may miss the last write. When the
// cache has no inventory (live is nil: a first apply) it is created at once, and read
// only if it exists after all. An inventory names the render it named, none when it
// is created: it names renderRef once the apply is done, so that the observer never
// assesses a render before its objects are applied (a first apply's inventory that
// named its render at once was assessed Missing, and its /sync sent, before the apply;
// decision 0133).
func (r *Reconciler) growInventory(ctx context.Context, st *state, live *v1.ReleaseInventory, entries []v1.InventoryObject) (*v1.ReleaseInventory, error) {
	if live == nil {
		inv, err := r.writeInventory(ctx, st.rel, store.EmptyInventory(st.rel), "", nil, apply.Merge(nil, entries))
		if err == nil || !apierrors.IsAlreadyExists(err) {
			return inv, err
		}
		if live, err = r.currentInventory(ctx, st.rel); err != nil {
			return nil, err
		}
	}
	return r.writeInventory(ctx, st.rel, live, live.RenderRef, live.SyncWave, apply.Merge(live.Objects, entries))
}

// liveInventory is the Release's ReleaseInventory with the spec the API server has,
// when the cache has one; nil when the cache has none (a first apply: growInventory
// creates it, or reads it if it exists after all). It is the cached inventory when
// its spec is the one this controller last wrote or read (inventorySpec), else the
// inventory read from the API server.
func (r *Reconciler) liveInventory(ctx context.Context, st *state) (*v1.ReleaseInventory, error) {
	if st.inventory == nil {
		return nil, nil
	}
	if last, ok := r.inventories.get(releaseKey(st.rel), st.rel.UID); ok && last.holds(st.inventory) {
		return st.inventory, nil
	}
	return r.currentInventory(ctx, st.rel)
}

// inventorySpec is what the controller last wrote or read of a Release's
// ReleaseInventory spec: the inventory's uid, its generation, which the API server
// raises when the cluster, the renderRef or the objects change, and its syncWave,
// which does not raise it. The controller is the only writer of the spec, so a cached
// inventory that holds the same is as current as the API server's in everything the
// apply reads of it but the observer's status (decision 0131: at every reconcile the
// inventory was read from the API server, 1 of the 5 requests of a steady reconcile of
// a 4-object Release); a later status reconciles the Release again (SP-29).
type inventorySpec struct {
	uid        types.UID
	generation int64
	syncWave   v1.SyncWaveStatus
	waiting    bool
}

func specOf(inv *v1.ReleaseInventory) inventorySpec {
	s := inventorySpec{uid: inv.UID, generation: inv.Generation}
	if inv.SyncWave != nil {
		s.syncWave, s.waiting = *inv.SyncWave, true
	}
	return s
}

// holds says whether inv has the spec s describes.
func (s inventorySpec) holds(inv *v1.ReleaseInventory) bool {
	return s.uid != "" && specOf(inv) == s
}

// remember records inv, as the API server answered a read or a write of it, as the
// last spec of rel's inventory; nil (a write that failed: what the API server has is
// unknown) forgets it, so that the next apply reads it.
func (r *Reconciler) remember(rel *v1.Release, inv *v1.ReleaseInventory) {
	if inv == nil || inv.UID == "" {
		r.inventories.forget(releaseKey(rel))
		return
	}
	r.inventories.put(releaseKey(rel), rel.UID, specOf(inv))
}

// currentInventory reads the Release's ReleaseInventory from the API server, not the
// cache: the list it is about to grow must include the last write, or an object could
// be lost track of. A missing inventory is an empty one.
func (r *Reconciler) currentInventory(ctx context.Context, rel *v1.Release) (*v1.ReleaseInventory, error) {
	inv, err := store.GetInventory(ctx, r.apiReader, client.ObjectKeyFromObject(rel))
	if inv == nil && err == nil {
		r.remember(rel, nil)
		return store.EmptyInventory(rel), nil
	}
	if err == nil {
		r.remember(rel, inv)
	}
	return inv, err
}

// writeInventory records objects as the inventory's list of renderRef, with the
// progress of its apply (store.WriteInventory), and remembers what it wrote: a write
// that failed forgets the inventory's spec (the next apply reads it), one that wrote
// nothing leaves it as it was. It returns the inventory as written.
func (r *Reconciler) writeInventory(ctx context.Context, rel *v1.Release, inv *v1.ReleaseInventory, renderRef string, syncWave *v1.SyncWaveStatus, objects []v1.InventoryObject) (*v1.ReleaseInventory, error) {
	written, wrote, err := store.WriteInventory(ctx, r.client, rel, inv, renderRef, syncWave, objects)
	switch {
	case err != nil:
		r.remember(rel, nil)
	case wrote:
		r.remember(rel, written)
	}
	return written, err
}

func (c *changeCounts) add(changes []apply.Change) {
	for _, ch := range changes {
		switch ch.Action {
		case apply.Created:
			c.created++
		case apply.Configured:
			c.configured++
		}
	}
}

func deref(res *policy.Result) policy.Result {
	if res == nil {
		return policy.Result{}
	}
	return *res
}

// inventoryObjects lists what the cached inventory says was applied; none without one.
func inventoryObjects(inv *v1.ReleaseInventory) []v1.InventoryObject {
	if inv == nil {
		return nil
	}
	return inv.Objects
}
