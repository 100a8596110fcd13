package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"kumodo.io/convoy/api/v1alpha1"
)

// objEvent is one state of an applied object, as a watch saw it.
type objEvent struct {
	cluster string    // "" (the host) or remoteClusterName
	at      time.Time // when the harness saw it
	release string    // namespace/name of the Release that applied it
	object  string    // Kind/name
	kind    string
	wave    int32
	inputs  string // token@version of the render it came from
	rv      int64  // resourceVersion: etcd's revision, one order for every kind
	healthy bool   // ready for the next wave: a ConfigMap always, a Deployment when Available
}

// recorder watches, from the start of a run, the objects Releases apply and the
// Releases themselves, and keeps what the invariants need. convoy apiserver keeps its
// objects in the control plane's etcd, so the resourceVersions of Releases and of
// applied objects are revisions of one store and can be compared.
type recorder struct {
	mu     sync.Mutex
	events []objEvent
	states map[string][]relState // Release → its states as seen, in arrival order
	manual map[string]bool       // Release → manual mode
	places map[string]place      // Release → its Cluster and cluster wave
	gaps   relists               // the relists of each stream
	// last is the highest resourceVersion seen on each stream, and when.
	last       map[stream]seenAt
	listedOnce map[stream]bool
	// aim, when set, is told of the moments that aimed kills wait for (env.aim);
	// applying records the (Release, inputs) whose first wave it has seen applied.
	aim      func(faultKind, string)
	applying map[string]bool
	// sets are the states of the ReleaseSet seen (pauseWindows).
	sets []setState
}

// relState is a Release at one resourceVersion: was a sync request pending, was it
// ready for the next cluster wave, was it being deleted or gone?
type relState struct {
	rv      int64
	at      time.Time // when the harness saw it
	pending bool
	ready   bool   // Applied=True and Healthy=True for its generation: what a higher cluster wave waits for
	gone    bool   // being deleted, or deleted
	inputs  string // token@version its spec asks for
	// written: from the answer to one of the driver's writes, not from the watch (so
	// not evidence of where the watch stood)
	written bool
	// status is its conditions in short (statusSummary): what a write in the quiet
	// window changed (changedIn)
	status string
	// revision is the ReleaseSet revision it holds (a set's Release), and setReady
	// whether it is Ready at it as the set judges: Ready=True and the status of its
	// generation (checkStageOrder)
	revision string
	setReady bool
	// readySince is the lastTransitionTime of its Ready condition when setReady: the
	// earliest a stage's bake time may count from (the controller counts from then or
	// later)
	readySince time.Time
	// bound is the render its pending /sync approves (sync-requested-render; "" for a
	// plain /sync, which approves any render); pinned says that it is pinned, pin to
	// which render ("" when the pin names none).
	bound, pin string
	pinned     bool
	// render is status.render.ref, and rendered the inputs (token@version) it is the
	// render of, when this state says so (renderedInputs); "" when it does not.
	render, rendered string
}

// place is where a Release stands in cluster waves.
type place struct {
	cluster string
	wave    int32
}

func newRecorder() *recorder {
	return &recorder{states: map[string][]relState{}, manual: map[string]bool{}, places: map[string]place{},
		gaps: relists{}, last: map[stream]seenAt{}, listedOnce: map[stream]bool{}, applying: map[string]bool{}}
}

// start runs the informers (applied objects on both clusters, Releases) until ctx
// ends and returns once they have synced.
func (r *recorder) start(ctx context.Context, e *env) {
	handler := func(cluster string) cache.ResourceEventHandlerFuncs {
		h := func(obj any) { r.observe(cluster, obj) }
		return cache.ResourceEventHandlerFuncs{AddFunc: h, UpdateFunc: func(_, obj any) { h(obj) },
			DeleteFunc: func(obj any) { r.removed(cluster, obj) }}
	}
	byRelease := func(o *metav1.ListOptions) { o.LabelSelector = v1alpha1.LabelReleaseName }
	var informers []cache.SharedIndexInformer
	for _, cluster := range []string{"", remoteClusterName} {
		kube := e.kubeOf(cluster)
		cms := cache.NewSharedIndexInformer(r.listWatch(stream{cluster, "ConfigMap"}, byRelease,
			func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				return kube.CoreV1().ConfigMaps(metav1.NamespaceAll).List(ctx, o)
			},
			func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
				return kube.CoreV1().ConfigMaps(metav1.NamespaceAll).Watch(ctx, o)
			}), &corev1.ConfigMap{}, 0, nil)
		deps := cache.NewSharedIndexInformer(r.listWatch(stream{cluster, "Deployment"}, byRelease,
			func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				return kube.AppsV1().Deployments(metav1.NamespaceAll).List(ctx, o)
			},
			func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
				return kube.AppsV1().Deployments(metav1.NamespaceAll).Watch(ctx, o)
			}), &appsv1.Deployment{}, 0, nil)
		jobs := cache.NewSharedIndexInformer(&cache.ListWatch{
			ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				o.LabelSelector = v1alpha1.LabelHook
				return kube.BatchV1().Jobs(metav1.NamespaceAll).List(ctx, o)
			},
			WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
				o.LabelSelector = v1alpha1.LabelHook
				return kube.BatchV1().Jobs(metav1.NamespaceAll).Watch(ctx, o)
			},
		}, &batchv1.Job{}, 0, nil)
		_, _ = cms.AddEventHandler(handler(cluster))
		_, _ = deps.AddEventHandler(handler(cluster))
		_, _ = jobs.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
			if j, ok := obj.(*batchv1.Job); ok {
				r.offer(faultKillMidHook, fmt.Sprintf("the hook Job %s/%s%s was created", j.Namespace, j.Name, on(cluster)))
			}
		}})
		informers = append(informers, cms, deps, jobs)
	}
	lw := cache.NewListWatchFromClient(e.convoy, v1alpha1.ResourceReleases, metav1.NamespaceAll, fields.Everything())
	rels := cache.NewSharedIndexInformer(r.listWatch(releaseStream, nil, lw.ListWithContextFunc, lw.WatchFuncWithContext), &v1alpha1.Release{}, 0, nil)
	_, _ = rels.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { r.release(obj) },
		UpdateFunc: func(_, obj any) { r.release(obj) },
		DeleteFunc: func(obj any) {
			d, byRelist := obj.(cache.DeletedFinalStateUnknown)
			if byRelist {
				obj = d.Obj
			}
			if rel, ok := obj.(*v1alpha1.Release); ok {
				rel = rel.DeepCopy()
				now := metav1.Now()
				rel.DeletionTimestamp = &now
				if byRelist {
					// A relist found it gone; the object is its last state seen, whose
					// resourceVersion is not when it went (gone).
					last, _ := strconv.ParseInt(rel.ResourceVersion, 10, 64)
					rel.ResourceVersion = strconv.FormatInt(r.goneAt(releaseStream, last), 10)
				}
				r.watched(rel)
			}
		},
	})
	informers = append(informers, rels)
	slw := cache.NewListWatchFromClient(e.convoy, v1alpha1.ResourceReleaseSets, fleetNamespace, fields.Everything())
	sets := cache.NewSharedIndexInformer(slw, &v1alpha1.ReleaseSet{}, 0, nil)
	_, _ = sets.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { r.releaseSet(obj) },
		UpdateFunc: func(_, obj any) { r.releaseSet(obj) },
	})
	informers = append(informers, sets)
	synced := make([]cache.InformerSynced, 0, len(informers))
	for _, inf := range informers {
		go inf.Run(ctx.Done())
		synced = append(synced, inf.HasSynced)
	}
	cache.WaitForCacheSync(ctx.Done(), synced...)
}

// stream is one watch of the recorder: a kind on a cluster ("" is the host; Releases
// are on the host).
type stream struct{ cluster, kind string }

// releaseStream is the watch of Releases.
var releaseStream = stream{"", "Release"}

// relist is a list of a stream after its first: its watch ended and could not resume
// (a kube-apiserver or etcd restart, a compaction), so the informer listed again.
// Between from (the highest resourceVersion the recorder had seen on the stream, at
// fromAt) and to (the list's), the recorder saw only the last state of each object,
// the list's answer at end.
type relist struct {
	from, to    int64
	fromAt, end time.Time
}

// relists are the relists of each stream.
type relists map[stream][]relist

// hides says whether a state of an object at rv on s came with a relist, so that
// states of it before rv may have gone unseen.
func (rl relists) hides(s stream, rv int64) bool {
	for _, g := range rl[s] {
		if g.from < rv && rv <= g.to {
			return true
		}
	}
	return false
}

// straddles says whether a relist of s may have hidden the last state before rv of
// an object whose last state known before rv is at lo: one that began at or after lo,
// before rv, and listed after rv (the relist showed a state after rv, not the one
// before). A state that the watch saw above the relist's start came with the list,
// so held until the list; one from the answer to a driver's write (written) says
// nothing of what followed it unseen (seed 371706423: the settle's last /sync).
func (rl relists) straddles(s stream, lo, rv int64, written bool) bool {
	for _, g := range rl[s] {
		if (lo <= g.from || written) && g.from < rv && rv < g.to {
			return true
		}
	}
	return false
}

// after says whether a relist of s ended after rv: states of an object seen at rv
// may have been followed by some that went unseen.
func (rl relists) after(s stream, rv int64) bool {
	for _, g := range rl[s] {
		if g.to > rv {
			return true
		}
	}
	return false
}

// during says whether states on s seen between the times from and to may have gone
// unseen: a relist of s covered part of that time.
func (rl relists) during(s stream, from, to time.Time) bool {
	for _, g := range rl[s] {
		if g.fromAt.Before(to) && g.end.After(from) {
			return true
		}
	}
	return false
}

// gone is the resourceVersion at which an object of s that a relist found gone is
// recorded, given last, that of its last state seen (what the informer's
// DeletedFinalStateUnknown carries): the last relist's, by which it was gone. It went
// somewhere between its last state seen and that list: recorded at its last state,
// the gone state would tie with that one and read as "gone from then on", or lose to
// it (seed 1251186771: chaos-0/r003, deleted while the watch of Releases was down,
// counted as not ready until the end for the cluster waves above it).
func (rl relists) gone(s stream, last int64) int64 {
	if gs := rl[s]; len(gs) > 0 && gs[len(gs)-1].to > last {
		return gs[len(gs)-1].to
	}
	return last
}

// goneAt is relists.gone on the relists recorded so far.
func (r *recorder) goneAt(s stream, last int64) int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.gaps.gone(s, last)
}

// listWatch lists and watches s for an informer (with tweak applied to the options)
// and records s's relists. It declines WatchList (a list streamed over a watch) so
// that each list is one List call whose resourceVersion says where it stands.
func (r *recorder) listWatch(s stream, tweak func(*metav1.ListOptions), list cache.ListWithContextFunc, watchFn cache.WatchFuncWithContext) cache.ListerWatcher {
	if tweak == nil {
		tweak = func(*metav1.ListOptions) {}
	}
	return &recordingLW{
		list: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			tweak(&o)
			obj, err := list(ctx, o)
			if err == nil && o.Continue == "" {
				if m, merr := apimeta.ListAccessor(obj); merr == nil {
					rv, _ := strconv.ParseInt(m.GetResourceVersion(), 10, 64)
					r.listed(s, rv)
				}
			}
			return obj, err
		},
		watch: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			tweak(&o)
			return watchFn(ctx, o)
		},
	}
}

// listed records a list of s at resourceVersion rv: a relist unless it is the first.
func (r *recorder) listed(s stream, rv int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.listedOnce[s] {
		last := r.last[s]
		r.gaps[s] = append(r.gaps[s], relist{from: last.rv, to: rv, fromAt: last.at, end: time.Now()})
	}
	r.listedOnce[s] = true
}

// seen records that the recorder saw a state of s at rv; the caller holds r.mu.
func (r *recorder) seen(s stream, rv int64, at time.Time) {
	if rv > r.last[s].rv {
		r.last[s] = seenAt{rv, at}
	}
}

// seenAt is a resourceVersion and when the recorder saw it.
type seenAt struct {
	rv int64
	at time.Time
}

// recordingLW is the ListerWatcher of listWatch.
type recordingLW struct {
	list  cache.ListWithContextFunc
	watch cache.WatchFuncWithContext
}

func (l *recordingLW) List(o metav1.ListOptions) (runtime.Object, error) {
	return l.list(context.Background(), o)
}

func (l *recordingLW) Watch(o metav1.ListOptions) (watch.Interface, error) {
	return l.watch(context.Background(), o)
}

func (l *recordingLW) ListWithContext(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
	return l.list(ctx, o)
}

func (l *recordingLW) WatchWithContext(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
	return l.watch(ctx, o)
}

// IsWatchListSemanticsUnSupported makes the reflector list with List calls.
func (l *recordingLW) IsWatchListSemanticsUnSupported() bool { return true }

func (r *recorder) observe(cluster string, obj any) {
	var ev objEvent
	switch o := obj.(type) {
	case *corev1.ConfigMap:
		ev = eventOf(&o.ObjectMeta, "ConfigMap")
		ev.healthy = true
	case *appsv1.Deployment:
		ev = eventOf(&o.ObjectMeta, "Deployment")
		want := int32(1)
		if o.Spec.Replicas != nil {
			want = *o.Spec.Replicas
		}
		s := o.Status
		ev.healthy = s.ObservedGeneration >= o.Generation && s.UpdatedReplicas == want && s.AvailableReplicas == want && s.Replicas == want
	default:
		return
	}
	ev.cluster, ev.at = cluster, time.Now()
	r.mu.Lock()
	r.seen(ev.stream(), ev.rv, ev.at)
	first := false
	if ev.inputs != "" {
		r.events = append(r.events, ev)
		if k := ev.release + " " + ev.inputs; ev.wave == 0 && !r.applying[k] {
			r.applying[k], first = true, true
		}
	}
	r.mu.Unlock()
	if first { // waves 1 and 2 follow: an apply is under way
		r.offer(faultKillMidApply, fmt.Sprintf("wave 0 of Release %s was applied with inputs %s%s", ev.release, ev.inputs, on(cluster)))
	}
}

// removed sees an applied object deleted: a prune when its Release is not being
// deleted.
func (r *recorder) removed(cluster string, obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	m, err := apimeta.Accessor(obj)
	if err != nil {
		return
	}
	rel := m.GetLabels()[v1alpha1.LabelReleaseNamespace] + "/" + m.GetLabels()[v1alpha1.LabelReleaseName]
	r.mu.Lock()
	states := r.states[rel]
	pruned := len(states) > 0 && !states[len(states)-1].gone
	r.mu.Unlock()
	if pruned {
		r.offer(faultKillMidPrune, fmt.Sprintf("the prune of %s/%s of Release %s%s", m.GetNamespace(), m.GetName(), rel, on(cluster)))
	}
}

// releaseSet records a state of the ReleaseSet that the watch saw, and offers a stage
// that rolls out to the faults aimed at one.
func (r *recorder) releaseSet(obj any) {
	set, ok := obj.(*v1alpha1.ReleaseSet)
	if !ok {
		return
	}
	rv, err := strconv.ParseInt(set.ResourceVersion, 10, 64)
	if err != nil {
		return
	}
	r.mu.Lock()
	r.sets = append(r.sets, setState{rv: rv, observedGeneration: set.Status.ObservedGeneration, paused: set.Spec.Paused})
	r.mu.Unlock()
	if set.Spec.Paused {
		return
	}
	if m := progressing(set, ""); m != "" {
		r.offer(faultKillMidStage, m)
	}
	if m := progressing(set, restStage); m != "" {
		r.offer(faultLeaveMidStage, m)
	}
}

// offer tells aim of a moment, when a run set it.
func (r *recorder) offer(kind faultKind, moment string) {
	if r.aim != nil {
		r.aim(kind, moment)
	}
}

// on names the remote cluster in a moment ("" on the host).
func on(cluster string) string {
	if cluster == "" {
		return ""
	}
	return " on Cluster " + cluster
}

// stream is the watch that saw ev.
func (ev objEvent) stream() stream { return stream{ev.cluster, ev.kind} }

func eventOf(m *metav1.ObjectMeta, kind string) objEvent {
	wave, _ := strconv.ParseInt(m.Annotations[v1alpha1.AnnotationSyncWave], 10, 32)
	rv, _ := strconv.ParseInt(m.ResourceVersion, 10, 64)
	ev := objEvent{
		release: m.Labels[v1alpha1.LabelReleaseNamespace] + "/" + m.Labels[v1alpha1.LabelReleaseName],
		object:  kind + "/" + m.Name,
		kind:    kind,
		wave:    int32(wave),
		rv:      rv,
	}
	if t := m.Annotations[annotationToken]; t != "" {
		ev.inputs = inputsKey(t, m.Annotations[annotationVersion])
	}
	return ev
}

// release records a state of a Release that the watch saw: its mode, and whether a
// sync request was pending in it.
func (r *recorder) release(obj any) {
	if rel, ok := obj.(*v1alpha1.Release); ok {
		r.watched(rel)
	}
}

// watched records a state of rel that the watch of Releases saw.
func (r *recorder) watched(rel *v1alpha1.Release) { r.record(rel, true) }

// state records rel as stored at its resourceVersion, from the answer to one of the
// driver's writes.
func (r *recorder) state(rel *v1alpha1.Release) { r.record(rel, false) }

// record records rel as stored at its resourceVersion; fromWatch says that the watch of
// Releases saw it (which moves that stream's highest resourceVersion seen).
func (r *recorder) record(rel *v1alpha1.Release, fromWatch bool) {
	rv, err := strconv.ParseInt(rel.ResourceVersion, 10, 64)
	if err != nil {
		return
	}
	key := rel.Namespace + "/" + rel.Name
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	if fromWatch {
		r.seen(releaseStream, rv, now)
	}
	r.manual[key] = rel.Spec.SyncPolicy.Automatic == nil || !*rel.Spec.SyncPolicy.Automatic
	r.places[key] = place{cluster: rel.Spec.Cluster, wave: rel.Spec.ClusterWave}
	r.states[key] = append(r.states[key], relState{
		rv: rv, at: now, pending: syncPending(rel), gone: rel.DeletionTimestamp != nil,
		ready:      currentTrue(rel, v1alpha1.ConditionApplied) && healthyForWaves(rel),
		inputs:     inputsKey(tokenOf(rel.Spec.Values), rel.Spec.Chart.Version),
		written:    !fromWatch,
		status:     statusSummary(rel),
		revision:   rel.Annotations[v1alpha1.AnnotationReleaseSetRevision],
		setReady:   rel.Status.ObservedGeneration == rel.Generation && apimeta.IsStatusConditionTrue(rel.Status.Conditions, v1alpha1.ConditionReady),
		readySince: readySince(rel),
		bound:      rel.Annotations[v1alpha1.AnnotationSyncRequestedRender],
		pin:        pinRender(rel),
		pinned:     rel.Pin != nil,
		render:     renderRef(rel),
		rendered:   renderedInputs(rel),
	})
}

// readySince is the lastTransitionTime of rel's Ready condition when it is True; zero
// otherwise.
func readySince(rel *v1alpha1.Release) time.Time {
	c := apimeta.FindStatusCondition(rel.Status.Conditions, v1alpha1.ConditionReady)
	if c == nil || c.Status != metav1.ConditionTrue {
		return time.Time{}
	}
	return c.LastTransitionTime.Time
}

// renderRef is rel's status.render.ref, "" when it has none.
func renderRef(rel *v1alpha1.Release) string {
	if rel.Status.Render == nil {
		return ""
	}
	return rel.Status.Render.Ref
}

// pinRender is the render rel is pinned to, "" when it is not pinned.
func pinRender(rel *v1alpha1.Release) string {
	if rel.Pin == nil {
		return ""
	}
	return rel.Pin.RenderRef
}

// renderedInputs is the inputs (token@version) whose render status.render names, when
// rel says that it rendered its spec: the status is of its generation
// (observedGeneration), the render of its chart version, and its Applied condition
// has a reason that only a reconcile that rendered gives. A reconcile that stopped
// before it rendered (the chart repository or the Cluster unreachable, a lower cluster
// wave's hold) writes the status of the generation too, with the render of an earlier
// one, so observedGeneration alone says nothing of the render. "" otherwise.
func renderedInputs(rel *v1alpha1.Release) string {
	rs := rel.Status.Render
	if rs == nil || rs.Ref == "" || rel.Status.ObservedGeneration != rel.Generation || rs.ChartVersion != rel.Spec.Chart.Version {
		return ""
	}
	applied := apimeta.FindStatusCondition(rel.Status.Conditions, v1alpha1.ConditionApplied)
	if applied == nil || applied.ObservedGeneration != rel.Generation || !renderedReasons[applied.Reason] {
		return ""
	}
	return inputsKey(tokenOf(rel.Spec.Values), rel.Spec.Chart.Version)
}

// renderedReasons are the reasons of the Applied condition that a reconcile gives only
// after it rendered the spec: an apply, a render waiting for a /sync, a sync wave or
// hooks. A reason that may come before the render (SourceNotReady, ClusterNotReady,
// WaitingForClusterWave, DeployFailed, ...) does not count.
var renderedReasons = map[string]bool{
	v1alpha1.ReasonApplied:            true,
	v1alpha1.ReasonWaitingForSync:     true,
	v1alpha1.ReasonWaitingForSyncWave: true,
	v1alpha1.ReasonWaitingForHooks:    true,
}

// statusSummary is rel's generation and conditions in short: type=status/reason
// (observedGeneration): message; then the rest of its status as JSON (a write may
// change no condition).
func statusSummary(rel *v1alpha1.Release) string {
	b := fmt.Sprintf("generation %d", rel.Generation)
	for _, c := range rel.Status.Conditions {
		b += fmt.Sprintf("; %s=%s/%s (%d): %s", c.Type, c.Status, c.Reason, c.ObservedGeneration, c.Message)
	}
	rest := rel.Status.DeepCopy()
	rest.Conditions = nil
	if j, err := json.Marshal(rest); err == nil {
		b += "; status " + string(j)
	}
	return b
}

// changedIn names the Releases whose new states the watch saw between from and to,
// each with the state before and after: which Release a write in the quiet window
// changed, and how (the metrics that count the writes name no object).
func changedIn(states map[string][]relState, from, to time.Time) []string {
	var out []string
	for _, key := range slices.Sorted(maps.Keys(states)) {
		ss := states[key]
		for i, st := range ss {
			if st.written || st.at.Before(from) || st.at.After(to) {
				continue
			}
			before := "none seen"
			for j := i - 1; j >= 0; j-- {
				if !ss[j].written {
					before = fmt.Sprintf("rv %d: %s", ss[j].rv, ss[j].status)
					break
				}
			}
			out = append(out, fmt.Sprintf("%s at rv %d: %s (before, %s)", key, st.rv, st.status, before))
		}
	}
	return out
}

// currentTrue says whether the condition t of rel is True for rel's generation: one
// observed at an older generation is of the spec before an edit (kstatus' rule, and
// the controller's for cluster waves).
// healthyForWaves says whether the Healthy condition of rel, for its generation, lets
// the higher cluster waves go on: True, or Unknown/Reassessing (the render it last
// reported Healthy, applied again after a drift was put back, waits for the observer's
// next look; waves.md).
func healthyForWaves(rel *v1alpha1.Release) bool {
	c := apimeta.FindStatusCondition(rel.Status.Conditions, v1alpha1.ConditionHealthy)
	if c == nil || c.ObservedGeneration != rel.Generation {
		return false
	}
	return c.Status == metav1.ConditionTrue || c.Status == metav1.ConditionUnknown && c.Reason == v1alpha1.ReasonReassessing
}

func currentTrue(rel *v1alpha1.Release, t string) bool {
	c := apimeta.FindStatusCondition(rel.Status.Conditions, t)
	return c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == rel.Generation
}

// history is what the recorder saw: what the checks read.
type history struct {
	events []objEvent
	states map[string][]relState // Release → its states as seen
	manual map[string]bool       // Release → manual mode
	places map[string]place      // Release → its Cluster and cluster wave
	gaps   relists
	sets   []setState // the ReleaseSet's states seen
}

// snapshot copies what the checks read.
func (r *recorder) snapshot() history {
	r.mu.Lock()
	defer r.mu.Unlock()
	h := history{
		events: slices.Clone(r.events), states: make(map[string][]relState, len(r.states)),
		manual: maps.Clone(r.manual), places: maps.Clone(r.places), gaps: make(relists, len(r.gaps)),
		sets: slices.Clone(r.sets),
	}
	for k, v := range r.states {
		h.states[k] = slices.Clone(v)
	}
	for k, v := range r.gaps {
		h.gaps[k] = slices.Clone(v)
	}
	return h
}

// lastRender is status.render.ref in the latest state recorded of Release key (by
// resourceVersion): what the driver binds a /sync to, as kubectl convoy release sync
// binds to the render it reads. "" when none is known.
func (r *recorder) lastRender(key string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var last *relState
	for i, s := range r.states[key] {
		if last == nil || s.rv > last.rv {
			last = &r.states[key][i]
		}
	}
	if last == nil {
		return ""
	}
	return last.render
}

// syncPending says whether a /sync request is pending in rel: sync-requested-at is
// set and later, to the second, than status.lastHandledSyncAt (sync-policy.md). Every
// sync request — /sync, a forced one, a /pin write — sets that annotation.
func syncPending(rel *v1alpha1.Release) bool {
	at, err := v1alpha1.ParseSyncTime(rel.Annotations[v1alpha1.AnnotationSyncRequestedAt])
	if err != nil {
		return false
	}
	h := rel.Status.LastHandledSyncAt
	return h == nil || at.After(h.UTC().Truncate(time.Second))
}

// behind counts the Releases of a list whose state there the watch of Releases has
// not delivered (nor a write's answer), and the Releases recorded as present that the
// list lacks.
func (r *recorder) behind(items []v1alpha1.Release) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	listed := map[string]bool{}
	for i := range items {
		key := items[i].Namespace + "/" + items[i].Name
		listed[key] = true
		rv, _ := strconv.ParseInt(items[i].ResourceVersion, 10, 64)
		if !r.hasState(key, func(s relState) bool { return s.rv >= rv }) {
			n++
		}
	}
	for key, states := range r.states {
		if !listed[key] && len(states) > 0 && !states[len(states)-1].gone {
			n++
		}
	}
	return n
}

// hasState says whether some state of Release key satisfies pred; the caller holds r.mu.
func (r *recorder) hasState(key string, pred func(relState) bool) bool {
	return slices.ContainsFunc(r.states[key], pred)
}

// standIn records a list of Releases at listRV as a relist of the watch of Releases,
// for a watch that has fallen behind (behind): a gap from the last state the watch
// delivered to listRV, each listed state, and each Release recorded as present that
// the list lacks as gone at listRV. The checks then do not judge what the watch may
// have missed.
func (r *recorder) standIn(listRV int64, items []v1alpha1.Release) {
	r.listed(releaseStream, listRV)
	listed := map[string]bool{}
	for i := range items {
		listed[items[i].Namespace+"/"+items[i].Name] = true
		r.watched(&items[i]) // as a relist's items
	}
	r.mu.Lock()
	var gone []string
	for key, states := range r.states {
		if !listed[key] && len(states) > 0 && !states[len(states)-1].gone {
			gone = append(gone, key)
		}
	}
	r.mu.Unlock()
	for _, key := range gone {
		r.mu.Lock()
		last := r.states[key][len(r.states[key])-1]
		r.states[key] = append(r.states[key], relState{rv: listRV, at: time.Now(), gone: true, inputs: last.inputs})
		r.mu.Unlock()
	}
}
