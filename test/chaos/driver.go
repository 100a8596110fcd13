package chaos

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/policy"
)

// act is one kind of change the driver makes.
type act int

const (
	actEdit      act = iota // new values (a new token)
	actVersion              // another chart version
	actSync                 // POST /sync
	actForce                // POST /sync?force=true
	actBurst                // several /sync (one forced) at once from concurrent clients
	actPin                  // pin, or unpin when pinned
	actDelete               // delete; the next step on it recreates it
	actNamespace            // delete its namespace (and so every Release in it), wait until it is gone, create it again
)

var actNames = [...]string{"edit", "version", "sync", "force", "burst", "pin", "delete", "delete namespace"}

func (a act) String() string { return actNames[a] }

// step is one change of the plan: act on Release rel; pick chooses among options.
type step struct {
	rel  int
	act  act
	pick int
}

// plan draws n steps from rng over releases Releases, with weights that make
// values edits and syncs common and deletions rare.
func plan(rng *rand.Rand, n, releases int) []step {
	weights := []struct {
		a act
		w int
	}{{actEdit, 30}, {actVersion, 12}, {actSync, 25}, {actForce, 6}, {actBurst, 6}, {actPin, 6}, {actDelete, 4}, {actNamespace, 1}}
	total := 0
	for _, w := range weights {
		total += w.w
	}
	out := make([]step, n)
	for i := range out {
		x := rng.IntN(total)
		var a act
		for _, w := range weights {
			if x < w.w {
				a = w.a
				break
			}
			x -= w.w
		}
		out[i] = step{rel: rng.IntN(releases), act: a, pick: rng.IntN(1 << 20)}
	}
	return out
}

// driver changes Releases as the plan says, from concurrent clients.
type driver struct {
	e        *env
	rels     []*release
	rec      *recorder
	tokens   atomic.Int64
	counts   sync.Map // "<act> ok|error" → *atomic.Int64
	firstErr sync.Map // "<act>" → the first error of that action, for the report
	syncSent atomic.Int64
	syncAck  atomic.Int64
	trace    *eventLog // every request and its answer, to <logs>/driver.log
}

func (d *driver) count(what string) {
	v, _ := d.counts.LoadOrStore(what, new(atomic.Int64))
	v.(*atomic.Int64).Add(1)
}

func (d *driver) newToken() string { return "t" + strconv.FormatInt(d.tokens.Add(1), 10) }

// createAll creates every Release of the model (with its hooks, and a first /sync in
// manual mode), concurrency at a time, cluster wave by cluster wave as an operator
// would: the platform before what runs on it.
func (d *driver) createAll(ctx context.Context, concurrency int) error {
	byWave := map[int32][]*release{}
	var waves []int32
	for _, r := range d.rels {
		if _, ok := byWave[r.wave]; !ok {
			waves = append(waves, r.wave)
		}
		byWave[r.wave] = append(byWave[r.wave], r)
	}
	slices.Sort(waves)
	for _, w := range waves {
		if err := d.createSome(ctx, byWave[w], concurrency); err != nil {
			return err
		}
	}
	return nil
}

func (d *driver) createSome(ctx context.Context, rels []*release, concurrency int) error {
	sem := make(chan struct{}, concurrency)
	errs := make(chan error, len(rels))
	var wg sync.WaitGroup
	for _, r := range rels {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			r.mu.Lock()
			defer r.mu.Unlock()
			if err := d.create(ctx, r); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// namespaceGoneBound bounds the wait for a deleted namespace to be gone: the
// namespace controller deletes its Releases, whose finalizers delete what they applied
// on either cluster.
const namespaceGoneBound = 3 * time.Minute

// deleteNamespace deletes the namespace ns on the host, with every Release in it (the
// namespace controller deletes convoy's resources too, and each Release's finalizer
// what it applied, on the remote Cluster as well), waits until it is gone and creates
// it again; its Releases are then absent until later steps recreate them. It holds
// every Release of ns meanwhile (in the model's order, so two never wait for each
// other).
func (d *driver) deleteNamespace(ctx context.Context, ns string) {
	ctx, cancel := context.WithTimeout(ctx, namespaceGoneBound+30*time.Second)
	defer cancel()
	var in []*release
	for _, r := range d.rels {
		if r.ns == ns {
			r.mu.Lock()
			defer r.mu.Unlock()
			in = append(in, r)
		}
	}
	err := d.e.kube.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
	if err == nil || apierrors.IsNotFound(err) {
		for _, r := range in {
			r.exists = false
		}
		d.e.aim(faultKillMidDelete, "the deletion of namespace "+ns)
		err = retry(ctx, namespaceGoneBound, func(ctx context.Context) error {
			_, err := d.e.kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
			switch {
			case apierrors.IsNotFound(err):
				return nil
			case err != nil:
				return fmt.Errorf("read namespace %s: %w", ns, err)
			}
			return fmt.Errorf("namespace %s is not gone yet", ns)
		})
	}
	if err == nil {
		_, err = d.e.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	}
	if err != nil {
		d.count(actNamespace.String() + " error")
		d.firstErr.LoadOrStore(actNamespace.String(), fmt.Sprintf("%s: %v", ns, err))
		d.trace.printf("namespace %s: delete and create again: %v", ns, err)
		return
	}
	d.count(actNamespace.String() + " ok")
	d.trace.printf("namespace %s: deleted with its %d Releases, gone, created again", ns, len(in))
}

// create creates r with a fresh token; the caller holds r.mu.
func (d *driver) create(ctx context.Context, r *release) error {
	r.token, r.pinned, r.ackSync, r.ackForce = d.newToken(), false, time.Time{}, time.Time{}
	r.version = versionA
	obj := r.object(d.e.proxy.url())
	created := &v1alpha1.Release{}
	err := d.e.convoy.Post().Namespace(r.ns).Resource(v1alpha1.ResourceReleases).Body(obj).Do(ctx).Into(created)
	if apierrors.IsNotFound(err) {
		// Its namespace is gone and was not created again (a deleteNamespace whose wait
		// ran out): create it, as an operator would, then the Release.
		_, nerr := d.e.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: r.ns}}, metav1.CreateOptions{})
		if nerr == nil || apierrors.IsAlreadyExists(nerr) {
			err = d.e.convoy.Post().Namespace(r.ns).Resource(v1alpha1.ResourceReleases).Body(obj).Do(ctx).Into(created)
		}
	}
	if err != nil {
		return fmt.Errorf("create Release %s: %w", r.key(), err)
	}
	d.rec.state(created)
	d.trace.printf("%s created (manual %v, inputs %s): resourceVersion %s", r.key(), r.manual, r.inputs(), created.ResourceVersion)
	r.exists = true
	if r.hooks {
		if err := d.patch(ctx, r, v1alpha1.SubresourceLifecycle, lifecycle()); err != nil {
			return fmt.Errorf("set the hooks of Release %s: %w", r.key(), err)
		}
	}
	if r.manual {
		_ = d.sync(ctx, r, false, "")
	}
	return nil
}

// run executes steps, at most one every interval, from workers clients, until the
// steps are done or ctx ends.
func (d *driver) run(ctx context.Context, steps []step, workers int, interval time.Duration) {
	ch := make(chan step)
	go func() {
		defer close(ch)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for _, s := range steps {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			select {
			case ch <- s:
			case <-ctx.Done():
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for s := range ch {
				d.do(ctx, s)
			}
		})
	}
	wg.Wait()
}

func (d *driver) do(ctx context.Context, s step) {
	if s.act == actNamespace && d.rels[s.rel].ns != d.e.canary.ns {
		d.deleteNamespace(ctx, d.rels[s.rel].ns)
		return
	}
	if s.act == actNamespace { // the canary's namespace stays: a /sync instead
		s.act = actSync
	}
	r := d.rels[s.rel]
	r.mu.Lock() // before the step's time starts: a namespace step may hold it for minutes
	defer r.mu.Unlock()
	if ctx.Err() != nil {
		// The fault phase ended while the step waited for the Release (a namespace step
		// held it): its requests would fail at once with the phase's "context deadline
		// exceeded", which reads like a request that hung.
		d.count("too late")
		d.trace.printf("%s %s: not sent, the fault phase ended while it waited", r.key(), s.act)
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	began := time.Now()
	var err error
	what := s.act.String()
	switch syncKindOf(r, s) {
	case syncBound:
		what += " (bound)"
	case syncBoundThenEdit:
		what = "bound sync, then new values"
	case syncEditThenBound:
		what = "new values, then a bound sync"
	}
	if !r.exists {
		what = "recreate"
		err = d.create(ctx, r)
		if apierrors.IsAlreadyExists(err) {
			what = "recreate-while-deleting"
		}
	} else {
		err = d.act(ctx, r, s)
	}
	if errors.Is(err, errRenderChanged) {
		// Expected (counted by sync): nothing was written, nothing to read back.
		d.trace.printf("%s %s (inputs %s): %v", r.key(), what, r.inputs(), err)
		return
	}
	if err != nil {
		d.count(what + " error")
		d.firstErr.LoadOrStore(what, fmt.Sprintf("%s: %v", r.key(), err))
		// How long it took tells a refusal from a request that hung for the step's 30 s.
		d.trace.printf("%s %s (inputs %s), after %s: %v", r.key(), what, r.inputs(), time.Since(began).Truncate(time.Millisecond), err)
		// A write cut by a fault may have happened all the same: read back what it is,
		// with a context of its own (the step's may be what ran out). When even that
		// fails, settle reads it back before the end.
		rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer rcancel()
		if rerr := d.resync(rctx, r); rerr != nil {
			r.unsure = true
			d.trace.printf("%s read back: %v", r.key(), rerr)
		}
		return
	}
	d.count(what + " ok")
	d.trace.printf("%s %s: ok, inputs now %s, pinned %v", r.key(), what, r.inputs(), r.pinned)
}

func (d *driver) act(ctx context.Context, r *release, s step) error {
	switch s.act {
	case actEdit:
		kind := syncKindOf(r, s)
		if kind == syncBoundThenEdit {
			// A person approves the render they looked at, and the values change
			// right after: the approval is not of them. A 409 (the render changed
			// already) is counted; the new values follow all the same.
			if err := d.syncBound(ctx, r, false); err != nil && !errors.Is(err, errRenderChanged) {
				return err
			}
		}
		if err := d.edit(ctx, r); err != nil || kind != syncEditThenBound {
			return err
		}
		// New values, and a /sync bound at once to the render last seen: until the
		// controller has rendered them, status.render.ref is still the render before
		// them, which the /sync then approves (as kubectl convoy release sync would).
		if err := d.syncBound(ctx, r, false); err != nil && !errors.Is(err, errRenderChanged) {
			return err
		}
	case actVersion:
		choices := []string{versionA, versionB}
		if r.mayFail {
			choices = append(choices, versionFailing)
		}
		v := choices[s.pick%len(choices)]
		if v == r.version {
			v = choices[(s.pick+1)%len(choices)]
		}
		if err := d.patch(ctx, r, "", fmt.Appendf(nil, `{"spec":{"chart":{"version":%q}}}`, v)); err != nil {
			return err
		}
		r.version = v
	case actSync, actForce:
		kind := syncKindOf(r, s)
		if kind == syncPlain {
			return d.sync(ctx, r, s.act == actForce, "")
		}
		if err := d.syncBound(ctx, r, s.act == actForce); err != nil || kind != syncBoundThenEdit {
			return err
		}
		return d.edit(ctx, r)
	case actBurst:
		var wg sync.WaitGroup
		errs := make([]error, 6)
		for i := range errs {
			wg.Go(func() { errs[i] = d.sync(ctx, r, i == 0, "") })
		}
		wg.Wait()
		return errors.Join(errs...)
	case actPin:
		body := []byte(`{"pin":{"reason":"chaos"}}`)
		if r.pinned {
			body = []byte(`{"pin":null}`)
		}
		if err := d.patch(ctx, r, v1alpha1.SubresourcePin, body); err != nil {
			return err
		}
		r.pinned = !r.pinned
	case actDelete:
		err := d.e.convoy.Delete().Namespace(r.ns).Resource(v1alpha1.ResourceReleases).Name(r.name).Do(ctx).Error()
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		r.exists = false
		d.e.aim(faultKillMidDelete, "the deletion of Release "+r.key()) // a fault waiting for a deletion strikes now
	}
	return nil
}

// edit sends new values (a new token).
func (d *driver) edit(ctx context.Context, r *release) error {
	token := d.newToken()
	if err := d.patch(ctx, r, "", fmt.Appendf(nil, `{"spec":{"values":{"token":%q}}}`, token)); err != nil {
		return err
	}
	r.token = token
	return nil
}

// syncBound sends a /sync bound to the render the driver last saw in
// status.render.ref (recorder.lastRender), as kubectl convoy release sync does; a
// plain one before any render was seen.
func (d *driver) syncBound(ctx context.Context, r *release, force bool) error {
	render := d.rec.lastRender(r.key())
	if render == "" {
		d.count("bound /sync sent plain: no render seen yet")
	}
	return d.sync(ctx, r, force, render)
}

// resync sets the model of r from the stored Release, after a write whose outcome is
// unknown (the connection was cut); the caller holds r.mu.
func (d *driver) resync(ctx context.Context, r *release) error {
	return retry(ctx, time.Minute, func(ctx context.Context) error {
		got := &v1alpha1.Release{}
		err := d.e.convoy.Get().Namespace(r.ns).Resource(v1alpha1.ResourceReleases).Name(r.name).Do(ctx).Into(got)
		switch {
		case apierrors.IsNotFound(err):
			r.exists, r.unsure = false, false
			return nil
		case err != nil:
			return err
		}
		ns, err := d.e.kube.CoreV1().Namespaces().Get(ctx, r.ns, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			ns = nil
		case err != nil:
			return err
		}
		r.exists = !goingAway(got, ns)
		r.token, r.version, r.pinned = tokenOf(got.Spec.Values), got.Spec.Chart.Version, got.Pin != nil
		r.unsure = false
		d.trace.printf("%s read back: exists %v, inputs %s, pinned %v", r.key(), r.exists, r.inputs(), r.pinned)
		return nil
	})
}

// goingAway says whether a stored Release is on its way out, so that the model must
// take it as deleted: it has a deletion timestamp, or its namespace (nil: gone) is
// terminating. The namespace controller deletes a terminating namespace's Releases
// when it gets to them, which takes as long as convoy apiserver is unreachable; until
// then a Release in it has no deletion timestamp, yet is going (seed 142163185: the
// read back after a failed re-create counted chaos-3/r043 as existing). A Release
// that outlived its namespace (release.OutlivedNamespace: the namespace of its name
// has another UID than the one it recorded, or, without one, is younger) goes too: the namespace controller finalized the namespace without it,
// and convoy's controller deletes it (seed 1251186771: the read backs after the
// namespace step found the old chaos-2 Releases, and counted them as existing).
func goingAway(rel *v1alpha1.Release, ns *corev1.Namespace) bool {
	return rel.DeletionTimestamp != nil || ns == nil || ns.DeletionTimestamp != nil || ns.Status.Phase == corev1.NamespaceTerminating ||
		policy.OutlivedNamespace(
			policy.Stored{NamespaceUID: types.UID(rel.Annotations[v1alpha1.AnnotationNamespaceUID]), Created: rel.CreationTimestamp.Time},
			policy.Namespace{Found: true, UID: ns.UID, Created: ns.CreationTimestamp.Time})
}

// patch sends a JSON merge patch to the Release or one of its subresources.
func (d *driver) patch(ctx context.Context, r *release, sub string, body []byte) error {
	req := d.e.convoy.Patch(types.MergePatchType).Namespace(r.ns).Resource(v1alpha1.ResourceReleases).Name(r.name).Body(body)
	if sub != "" {
		req = req.SubResource(sub)
	}
	out := &v1alpha1.Release{}
	if err := req.Do(ctx).Into(out); err != nil {
		return err
	}
	d.trace.printf("%s PATCH %s %s: resourceVersion %s", r.key(), sub, body, out.ResourceVersion)
	d.rec.state(out)
	return nil
}

// errRenderChanged is the answer 409 Conflict to a /sync bound to a render that is no
// longer the Release's current render (nor its pinned one): the render changed after
// the driver read it, as it may after kubectl convoy release sync read it. Nothing was
// written; the driver counts it and goes on.
var errRenderChanged = errors.New("the render approved is no longer current")

// sync POSTs /sync (?force=true) and records what convoy acknowledged. With render
// it is bound to that render (?render=): it approves that render only.
func (d *driver) sync(ctx context.Context, r *release, force bool, render string) error {
	d.syncSent.Add(1)
	r.syncsSent++
	var out *v1alpha1.Release
	var err error
	if render == "" {
		out, err = d.e.cli.Sync(ctx, r.ns, r.name, v1alpha1.SyncOptions{Force: force})
	} else {
		out = &v1alpha1.Release{}
		req := d.e.convoy.Post().Namespace(r.ns).Resource(v1alpha1.ResourceReleases).Name(r.name).SubResource(v1alpha1.SubresourceSync).Param("render", render)
		if force {
			req = req.Param("force", "true")
		}
		err = req.Do(ctx).Into(out)
		if apierrors.IsConflict(err) {
			d.count("bound /sync refused: its render no longer current (409)")
			return fmt.Errorf("%w: %w", errRenderChanged, err)
		}
	}
	if err != nil {
		return err
	}
	d.syncAck.Add(1)
	d.rec.state(out)
	d.trace.printf("%s /sync force=%v render=%q: resourceVersion %s, %s=%s %s=%s %s=%s", r.key(), force, v1alpha1.RenderRef(render).Short(), out.ResourceVersion,
		v1alpha1.AnnotationSyncRequestedAt, out.Annotations[v1alpha1.AnnotationSyncRequestedAt],
		v1alpha1.AnnotationSyncForceRequestedAt, out.Annotations[v1alpha1.AnnotationSyncForceRequestedAt],
		v1alpha1.AnnotationSyncRequestedRender, v1alpha1.RenderRef(out.Annotations[v1alpha1.AnnotationSyncRequestedRender]).Short())
	record := func(annotation string, last *time.Time) error {
		t, err := v1alpha1.ParseSyncTime(out.Annotations[annotation])
		if err != nil {
			return fmt.Errorf("the /sync answer of Release %s has no valid %s: %w", r.key(), annotation, err)
		}
		if t.After(*last) {
			*last = t
		}
		return nil
	}
	if force {
		return record(v1alpha1.AnnotationSyncForceRequestedAt, &r.ackForce)
	}
	return record(v1alpha1.AnnotationSyncRequestedAt, &r.ackSync)
}

// syncKind is how the driver sends the /sync of a step on a manual Release, by the
// step's pick: as kubectl convoy release sync does, bound to the render it last saw in
// status.render.ref (bound), sometimes with new values right after it (boundThenEdit:
// the approval is of the render before them, so nothing of them may be applied), or
// plain (--any-render); or new values with a bound /sync right after them
// (editThenBound: the render last seen is then often the one before them). A third of
// the /syncs are plain, a third bound, a third bound then new values; a forced one is
// plain or bound; a third of the values edits come right after a bound /sync, a third
// right before one. An automatic Release's /sync is plain, and so is every
// /sync of a burst (the "No lost request" rule's concurrent clients), of a creation
// (no render yet) and of settle.
type syncKind int

const (
	syncPlain syncKind = iota
	syncBound
	syncBoundThenEdit
	syncEditThenBound
)

func syncKindOf(r *release, s step) syncKind {
	if !r.manual {
		return syncPlain
	}
	k := syncKind(s.pick % 3)
	switch s.act {
	case actSync:
		return k
	case actForce:
		return min(k, syncBound)
	case actEdit:
		return [...]syncKind{syncBoundThenEdit, syncEditThenBound, syncPlain}[k]
	}
	return syncPlain
}

// settle prepares the end of a run: every pin removed and, in manual mode, a last
// /sync acknowledged, so each Release must converge to its current inputs.
func (d *driver) settle(ctx context.Context) error {
	var errs []error
	for _, r := range d.rels {
		r.mu.Lock()
		err := d.settleOne(ctx, r)
		r.mu.Unlock()
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (d *driver) settleOne(ctx context.Context, r *release) error {
	if r.unsure {
		if err := d.resync(ctx, r); err != nil {
			return fmt.Errorf("read back Release %s: %w", r.key(), err)
		}
	}
	if !r.exists {
		return nil
	}
	return retry(ctx, time.Minute, func(ctx context.Context) error {
		if r.pinned {
			if err := d.patch(ctx, r, v1alpha1.SubresourcePin, []byte(`{"pin":null}`)); err != nil {
				return fmt.Errorf("unpin Release %s: %w", r.key(), err)
			}
			r.pinned = false
		}
		// Plain: a /sync bound to the render last seen would approve nothing when the
		// controller has not yet rendered the last values (a stale approval), and the
		// run must converge to them.
		if r.manual {
			if err := d.sync(ctx, r, false, ""); err != nil {
				return fmt.Errorf("last /sync of Release %s: %w", r.key(), err)
			}
		}
		return nil
	})
}

// retry runs f every second until it succeeds or timeout passes; the last error.
func retry(ctx context.Context, timeout time.Duration, f func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
		err := f(rctx)
		rcancel()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return err
		case <-tick.C:
		}
	}
}

// errorSamples returns the first error of each action that failed.
func (d *driver) errorSamples() map[string]string {
	out := map[string]string{}
	d.firstErr.Range(func(k, v any) bool {
		out[k.(string)] = v.(string)
		return true
	})
	return out
}

// counts returns the driver's outcome counts.
func (d *driver) outcomes() map[string]int64 {
	out := map[string]int64{}
	d.counts.Range(func(k, v any) bool {
		out[k.(string)] = v.(*atomic.Int64).Load()
		return true
	})
	return out
}
