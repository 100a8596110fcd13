package chaos

import (
	"context"
	"strconv"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"kumodo.io/convoy/api/v1alpha1"
)

// objEvent is one state of an applied object, as a watch saw it.
type objEvent struct {
	release string // namespace/name of the Release that applied it
	object  string // Kind/name
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
	// allowRV: the inputs → the lowest resourceVersion of a Release that carried a
	// sync request (a /sync, a forced /sync, a /pin write) while its spec had them.
	allowRV map[string]int64
	manual  map[string]bool   // Release → manual mode
	lastReq map[string]string // Release → its sync annotations and pin when last seen
}

func newRecorder() *recorder {
	return &recorder{allowRV: map[string]int64{}, manual: map[string]bool{}, lastReq: map[string]string{}}
}

// start runs the informers until ctx ends and returns once they have synced.
func (r *recorder) start(ctx context.Context, e *env) {
	f := informers.NewSharedInformerFactoryWithOptions(e.kube, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.LabelSelector = v1alpha1.LabelReleaseName
	}))
	handler := func(obj any) { r.observe(obj) }
	h := cache.ResourceEventHandlerFuncs{AddFunc: handler, UpdateFunc: func(_, obj any) { handler(obj) }}
	_, _ = f.Core().V1().ConfigMaps().Informer().AddEventHandler(h)
	_, _ = f.Apps().V1().Deployments().Informer().AddEventHandler(h)
	rels := cache.NewSharedIndexInformer(cache.NewListWatchFromClient(e.convoy, v1alpha1.ResourceReleases, metav1.NamespaceAll, fields.Everything()), &v1alpha1.Release{}, 0, nil)
	_, _ = rels.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { r.release(obj) },
		UpdateFunc: func(_, obj any) { r.release(obj) },
	})
	f.Start(ctx.Done())
	go rels.Run(ctx.Done())
	f.WaitForCacheSync(ctx.Done())
	cache.WaitForCacheSync(ctx.Done(), rels.HasSynced)
}

func (r *recorder) observe(obj any) {
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

// release notes a Release's mode and, when its sync annotations or pin changed since
// it was last seen, that its current inputs were requested.
func (r *recorder) release(obj any) {
	rel, ok := obj.(*v1alpha1.Release)
	if !ok {
		return
	}
	key := rel.Namespace + "/" + rel.Name
	req := rel.Annotations[v1alpha1.AnnotationSyncRequestedAt] + "|" + rel.Annotations[v1alpha1.AnnotationSyncForceRequestedAt]
	if rel.Pin != nil {
		req += "|" + rel.Pin.RenderRef
	}
	r.mu.Lock()
	changed := r.lastReq[key] != req
	r.lastReq[key] = req
	r.mu.Unlock()
	if changed && req != "|" {
		r.allow(rel)
	} else {
		r.setManual(rel)
	}
}

func (r *recorder) setManual(rel *v1alpha1.Release) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.manual[rel.Namespace+"/"+rel.Name] = rel.Spec.SyncPolicy.Automatic == nil || !*rel.Spec.SyncPolicy.Automatic
}

// allow records that rel, as stored at its resourceVersion, carried a sync request
// for its current inputs.
func (r *recorder) allow(rel *v1alpha1.Release) {
	r.setManual(rel)
	rv, err := strconv.ParseInt(rel.ResourceVersion, 10, 64)
	if err != nil {
		return
	}
	in := inputsKey(tokenOf(rel.Spec.Values), rel.Spec.Chart.Version)
	r.mu.Lock()
	defer r.mu.Unlock()
	if old, ok := r.allowRV[in]; !ok || rv < old {
		r.allowRV[in] = rv
	}
}

// deleted forgets the last sync request of a Release the driver deleted, so that its
// re-creation's first request counts.
func (r *recorder) deleted(key string) {
	r.mu.Lock()
	delete(r.lastReq, key)
	r.mu.Unlock()
}

// snapshot copies what the checks read.
func (r *recorder) snapshot() ([]objEvent, map[string]int64, map[string]bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	allow := make(map[string]int64, len(r.allowRV))
	for k, v := range r.allowRV {
		allow[k] = v
	}
	manual := make(map[string]bool, len(r.manual))
	for k, v := range r.manual {
		manual[k] = v
	}
	return append([]objEvent(nil), r.events...), allow, manual
}
