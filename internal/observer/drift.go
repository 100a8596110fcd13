package observer

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/hooks"
	"kumodo.io/convoy/internal/manifest"
	"kumodo.io/convoy/internal/observer/health"
	"kumodo.io/convoy/internal/store"
	"kumodo.io/convoy/internal/targets"
)

// DriftChecker compares the live objects on a target cluster with the objects of a
// render (a server-side apply dry run with convoy's field manager) and returns the
// objects that differ with their field paths. internal/observer/drift implements it.
type DriftChecker interface {
	Check(ctx context.Context, target client.Client, objects []*unstructured.Unstructured) ([]v1.DriftedObject, error)
}

// driftStatus is the drift to report and when the next check is due (0: none). Every
// spec.syncPolicy.interval of the Release, the live objects are compared with the
// Render of status.lastSuccessful.renderRef; with the interval unset or 0 there are no
// checks and no drift data. A result is of the render it compared with: once another
// render is lastSuccessful, the check is due at once; while the apply of a render is
// under way (the inventory names another render, or holds at a sync wave) there is no
// check, the objects being partly of that render (health.NextDriftCheck). Between
// checks the last result stands (the one this observer found, so that a status write
// lost to a conflict is not lost for a whole interval; else the stored one). A check
// that fails keeps the result, is logged, and is tried again at the next interval.
func (o *Observer) driftStatus(ctx context.Context, target *targets.Target, rel *v1.Release, inv *v1.ReleaseInventory, now time.Time) (*v1.DriftStatus, time.Duration) {
	key := types.NamespacedName{Namespace: rel.Namespace, Name: rel.Name}
	if o.drift == nil || rel.Status.LastSuccessful == nil {
		return inv.Status.Drift, 0
	}
	last, result := o.driftTimes.get(key)
	if result == nil {
		result = inv.Status.Drift
	}
	ref := rel.Status.LastSuccessful.RenderRef
	next := health.NextDriftCheck(health.DriftCheckInput{
		Interval:       rel.Spec.SyncPolicy.Interval,
		LastSuccessful: ref,
		Applied:        inv.RenderRef,
		Holding:        inv.SyncWave != nil,
		Checked:        last.render,
		LastCheck:      last.at,
		Now:            now,
	})
	switch {
	case next.Off:
		o.driftTimes.forget(key)
		return nil, 0
	case next.Held:
		return result, 0
	case next.After > 0:
		return result, next.After
	}
	interval := rel.Spec.SyncPolicy.Interval.Duration
	log := logr.FromContextOrDiscard(ctx)
	objects, err := o.renderObjects(ctx, rel, ref)
	if err == nil {
		var drifted []v1.DriftedObject
		drifted, err = o.drift.Check(ctx, target.Client, objects)
		if err == nil {
			o.metrics.driftChecks.Inc()
			result = health.Drift(result, drifted, now)
			o.driftTimes.set(key, driftCheck{at: now, render: ref, result: result})
			return result, interval
		}
	}
	log.Error(err, "The drift check failed; trying again at the next interval", "lastSuccessful", ref)
	o.driftTimes.set(key, driftCheck{at: now, render: ref, result: result})
	return result, interval
}

// renderObjects reads the objects of the Render ref of rel.
func (o *Observer) renderObjects(ctx context.Context, rel *v1.Release, ref string) ([]*unstructured.Unstructured, error) {
	objs, err := o.readRender(ctx, rel, ref)
	if err != nil {
		return nil, err
	}
	out := make([]*unstructured.Unstructured, len(objs))
	for i, ob := range objs {
		out[i] = ob.Unstructured
	}
	return out, nil
}

// readRender reads the objects of the Render ref of rel, with their sync waves.
func (o *Observer) readRender(ctx context.Context, rel *v1.Release, ref string) ([]manifest.Object, error) {
	obj, err := store.GetRender(ctx, o.apiReader, rel.Namespace, rel.Name, ref)
	if err != nil {
		return nil, err
	}
	if obj == nil {
		return nil, fmt.Errorf("the Render %s/%s of render %s does not exist", rel.Namespace, v1.RenderRef(ref).RenderName(rel.Name), ref)
	}
	us, err := store.Objects(obj)
	if err != nil {
		return nil, err
	}
	objs, err := renderObjectsOf(us)
	if err != nil {
		return nil, fmt.Errorf("read the manifests of Render %s/%s: %w", obj.Namespace, obj.Name, err)
	}
	return objs, nil
}

// renderObjectsOf picks of a Render's decoded manifests the objects its apply applies,
// with their sync waves: every object but the chart's hooks.
func renderObjectsOf(us []*unstructured.Unstructured) ([]manifest.Object, error) {
	var objs []manifest.Object
	for _, u := range us {
		if _, isHook, _ := hooks.Parse(u, ""); isHook {
			continue
		}
		wave, err := manifest.WaveOf(u)
		if err != nil {
			return nil, fmt.Errorf("%s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
		}
		objs = append(objs, manifest.Object{Unstructured: u, Wave: wave})
	}
	return objs, nil
}

// driftTimes is when the observer last checked each Release for drift, of which
// render, and the result. In memory only: after a restart the first assessment checks
// at once.
type driftTimes struct {
	mu    sync.Mutex
	times map[types.NamespacedName]driftCheck
}

// driftCheck is one check: its time, the render it compared with, and the result to
// report (after a failed check, the one it kept).
type driftCheck struct {
	at     time.Time
	render string
	result *v1.DriftStatus
}

// get returns the last check (zero: none) and its result (nil: none).
func (d *driftTimes) get(key types.NamespacedName) (driftCheck, *v1.DriftStatus) {
	d.mu.Lock()
	defer d.mu.Unlock()
	c := d.times[key]
	return c, c.result
}

func (d *driftTimes) set(key types.NamespacedName, c driftCheck) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.times == nil {
		d.times = map[types.NamespacedName]driftCheck{}
	}
	d.times[key] = c
}

func (d *driftTimes) forget(key types.NamespacedName) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.times, key)
}
