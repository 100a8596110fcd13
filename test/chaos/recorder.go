package chaos

import (
	"context"
	"strconv"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"kumodo.io/convoy/api/v1alpha1"
)

// objEvent is one state of an applied object, as a watch saw it.
type objEvent struct {
	cluster string    // "" (the host) or remoteClusterName
	at      time.Time // when the harness saw it
	release string    // namespace/name of the Release that applied it
	object  string    // Kind/name
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
}

// place is where a Release stands in cluster waves.
type place struct {
	cluster string
	wave    int32
}

func newRecorder() *recorder {
	return &recorder{states: map[string][]relState{}, manual: map[string]bool{}, places: map[string]place{}}
}

// start runs the informers (applied objects on both clusters, Releases) until ctx
// ends and returns once they have synced.
func (r *recorder) start(ctx context.Context, e *env) {
	var factories []informers.SharedInformerFactory
	for _, cluster := range []string{"", remoteClusterName} {
		f := informers.NewSharedInformerFactoryWithOptions(e.kubeOf(cluster), 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.LabelSelector = v1alpha1.LabelReleaseName
		}))
		handler := func(obj any) { r.observe(cluster, obj) }
		h := cache.ResourceEventHandlerFuncs{AddFunc: handler, UpdateFunc: func(_, obj any) { handler(obj) }}
		_, _ = f.Core().V1().ConfigMaps().Informer().AddEventHandler(h)
		_, _ = f.Apps().V1().Deployments().Informer().AddEventHandler(h)
		factories = append(factories, f)
	}
	rels := cache.NewSharedIndexInformer(cache.NewListWatchFromClient(e.convoy, v1alpha1.ResourceReleases, metav1.NamespaceAll, fields.Everything()), &v1alpha1.Release{}, 0, nil)
	_, _ = rels.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { r.release(obj) },
		UpdateFunc: func(_, obj any) { r.release(obj) },
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			if rel, ok := obj.(*v1alpha1.Release); ok {
				rel = rel.DeepCopy()
				now := metav1.Now()
				rel.DeletionTimestamp = &now
				r.state(rel)
			}
		},
	})
	for _, f := range factories {
		f.Start(ctx.Done())
	}
	go rels.Run(ctx.Done())
	for _, f := range factories {
		f.WaitForCacheSync(ctx.Done())
	}
	cache.WaitForCacheSync(ctx.Done(), rels.HasSynced)
}

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
	if ev.inputs == "" {
		return
	}
	ev.cluster, ev.at = cluster, time.Now()
	r.mu.Lock()
	r.events = append(r.events, ev)
	r.mu.Unlock()
}

func eventOf(m *metav1.ObjectMeta, kind string) objEvent {
	wave, _ := strconv.ParseInt(m.Annotations[v1alpha1.AnnotationSyncWave], 10, 32)
	rv, _ := strconv.ParseInt(m.ResourceVersion, 10, 64)
	ev := objEvent{
		release: m.Labels[v1alpha1.LabelReleaseNamespace] + "/" + m.Labels[v1alpha1.LabelReleaseName],
		object:  kind + "/" + m.Name,
		wave:    int32(wave),
		rv:      rv,
	}
	if t := m.Annotations[annotationToken]; t != "" {
		ev.inputs = inputsKey(t, m.Annotations[annotationVersion])
	}
	return ev
}

// release records a state of a Release: its mode, and whether a sync request was
// pending in it.
func (r *recorder) release(obj any) {
	if rel, ok := obj.(*v1alpha1.Release); ok {
		r.state(rel)
	}
}

// state records rel as stored at its resourceVersion (from a watch, or from the answer
// to one of the driver's writes).
func (r *recorder) state(rel *v1alpha1.Release) {
	rv, err := strconv.ParseInt(rel.ResourceVersion, 10, 64)
	if err != nil {
		return
	}
	key := rel.Namespace + "/" + rel.Name
	r.mu.Lock()
	defer r.mu.Unlock()
	r.manual[key] = rel.Spec.SyncPolicy.Automatic == nil || !*rel.Spec.SyncPolicy.Automatic
	r.places[key] = place{cluster: rel.Spec.Cluster, wave: rel.Spec.ClusterWave}
	r.states[key] = append(r.states[key], relState{
		rv: rv, at: time.Now(), pending: syncPending(rel), gone: rel.DeletionTimestamp != nil,
		ready:  currentTrue(rel, v1alpha1.ConditionApplied) && currentTrue(rel, v1alpha1.ConditionHealthy),
		inputs: inputsKey(tokenOf(rel.Spec.Values), rel.Spec.Chart.Version),
	})
}

// currentTrue says whether the condition t of rel is True for rel's generation: one
// observed at an older generation is of the spec before an edit (kstatus' rule, and
// the controller's for cluster waves).
func currentTrue(rel *v1alpha1.Release, t string) bool {
	c := apimeta.FindStatusCondition(rel.Status.Conditions, t)
	return c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == rel.Generation
}

// snapshot copies what the checks read.
func (r *recorder) snapshot() ([]objEvent, map[string][]relState, map[string]bool, map[string]place) {
	r.mu.Lock()
	defer r.mu.Unlock()
	states := make(map[string][]relState, len(r.states))
	for k, v := range r.states {
		states[k] = append([]relState(nil), v...)
	}
	manual := make(map[string]bool, len(r.manual))
	for k, v := range r.manual {
		manual[k] = v
	}
	places := make(map[string]place, len(r.places))
	for k, v := range r.places {
		places[k] = v
	}
	return append([]objEvent(nil), r.events...), states, manual, places
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
