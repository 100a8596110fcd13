package observer

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/targets"
)

// watches holds one shared informer per (cluster, group-version-kind), started the
// first time an inventory lists an object of that kind on that cluster. Each informer
// lists and watches only the objects that carry convoy's label
// convoy.kumodo.io/release-name, and its events enqueue the inventory named by the
// object's labels. Nothing polls: an inventory is assessed from the informers' caches.
// An informer that no inventory has used for idleAfter is stopped (retain, forget), so
// that the kinds a fleet stopped deploying do not stay cached for ever.
type watches struct {
	// ctx bounds every informer; it ends with the observer.
	ctx     context.Context
	log     logr.Logger
	enqueue func(types.NamespacedName)
	// idleAfter is how long an informer without users keeps running; now reads the
	// clock.
	idleAfter time.Duration
	now       func() time.Time

	mu       sync.Mutex
	clusters map[string]*clusterWatch // by Cluster name; "" is the host
}

// clusterWatch is the informers of one connection to one cluster.
type clusterWatch struct {
	target  *targets.Target
	dynamic dynamic.Interface
	stop    chan struct{}
	kinds   map[schema.GroupVersionKind]*kindWatch
}

// kindWatch is the informer of one kind on one cluster and the inventories that use it.
type kindWatch struct {
	informer cache.SharedIndexInformer
	users    map[types.NamespacedName]struct{}
	// ctx runs the informer; cancel stops it.
	ctx    context.Context
	cancel context.CancelFunc
	// idleSince is when the last user left; zero while it has users.
	idleSince time.Time
}

// kindKey names the informer of a kind on a cluster.
type kindKey struct {
	cluster string
	gvk     schema.GroupVersionKind
}

// DefaultIdleWatchTimeout is how long the informer of a kind that no inventory lists
// any more keeps running before it is stopped.
const DefaultIdleWatchTimeout = 10 * time.Minute

func newWatches(ctx context.Context, log logr.Logger, enqueue func(types.NamespacedName), idleAfter time.Duration, now func() time.Time) *watches {
	return &watches{ctx: ctx, log: log, enqueue: enqueue, idleAfter: idleAfter, now: now, clusters: map[string]*clusterWatch{}}
}

// lookup is what the informer of ref's kind on target knows of the object: the
// object, nil when it is not on the cluster (or its kind is not served there), and
// synced false when the informer has not listed the kind yet (no result yet). user is
// the inventory that asks: it is enqueued when the informer has synced.
func (w *watches) lookup(target *targets.Target, ref v1.ObjectReference, user types.NamespacedName) (*unstructured.Unstructured, bool, error) {
	gvk := schema.GroupVersionKind{Group: ref.Group, Version: ref.Version, Kind: ref.Kind}
	kw, served, err := w.kind(target, gvk, user)
	if err != nil || !served {
		return nil, err == nil, err
	}
	if !kw.informer.HasSynced() {
		return nil, false, nil
	}
	key := ref.Name
	if ref.Namespace != "" {
		key = ref.Namespace + "/" + ref.Name
	}
	item, exists, err := kw.informer.GetIndexer().GetByKey(key)
	if err != nil || !exists {
		return nil, true, err
	}
	obj, ok := item.(*unstructured.Unstructured)
	if !ok {
		return nil, true, fmt.Errorf("the informer of %s holds a %T", gvk, item)
	}
	obj, err = unpack(obj)
	return obj, true, err
}

// kind returns the informer of gvk on target, starting it on first use, and records
// user as one of its inventories. served is false when the cluster does not serve the
// kind. The kind is mapped to its resource without the lock held: that may ask the
// cluster's discovery.
func (w *watches) kind(target *targets.Target, gvk schema.GroupVersionKind, user types.NamespacedName) (*kindWatch, bool, error) {
	if kw := w.existing(target, gvk, user); kw != nil {
		return kw, true, nil
	}
	mapping, err := target.Client.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("map %s on cluster %q: %w", gvk, target.Name, err)
	}

	w.mu.Lock()
	defer w.mu.Unlock()
	cw := w.cluster(target)
	if kw, ok := cw.kinds[gvk]; ok { // started meanwhile
		kw.use(user)
		return kw, true, nil
	}
	inf := dynamicinformer.NewFilteredDynamicInformer(cw.dynamic, mapping.Resource, metav1.NamespaceAll, 0, cache.Indexers{},
		func(o *metav1.ListOptions) { o.LabelSelector = v1.LabelReleaseName }).Informer()
	if err := inf.SetTransform(projectObject); err != nil {
		return nil, false, err
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    w.onEvent,
		UpdateFunc: func(_, obj any) { w.onEvent(obj) },
		DeleteFunc: w.onEvent,
	}); err != nil {
		return nil, false, err
	}
	ctx, cancel := context.WithCancel(w.ctxFor(cw))
	kw := &kindWatch{informer: inf, users: map[types.NamespacedName]struct{}{user: {}}, ctx: ctx, cancel: cancel}
	cw.kinds[gvk] = kw
	w.log.V(1).Info("Watching a kind", "cluster", target.Name, "kind", gvk.String())
	go inf.RunWithContext(ctx)
	go w.enqueueWhenSynced(kw)
	return kw, true, nil
}

// use records user as one of kw's inventories. w.mu is held.
func (kw *kindWatch) use(user types.NamespacedName) {
	kw.users[user] = struct{}{}
	kw.idleSince = time.Time{}
}

// drop removes user from kw's inventories, noting when the last one left. w.mu is held.
func (kw *kindWatch) drop(user types.NamespacedName, now time.Time) {
	if _, ok := kw.users[user]; !ok {
		return
	}
	delete(kw.users, user)
	if len(kw.users) == 0 {
		kw.idleSince = now
	}
}

// existing returns the running informer of gvk on target's connection, recording
// user; nil when there is none.
func (w *watches) existing(target *targets.Target, gvk schema.GroupVersionKind, user types.NamespacedName) *kindWatch {
	w.mu.Lock()
	defer w.mu.Unlock()
	cw, ok := w.clusters[target.Name]
	if !ok || cw.target != target {
		return nil
	}
	kw, ok := cw.kinds[gvk]
	if !ok {
		return nil
	}
	kw.use(user)
	return kw
}

// cluster returns the informers of target's cluster; a new connection to the cluster
// (its kubeconfig changed) replaces them. w.mu is held.
func (w *watches) cluster(target *targets.Target) *clusterWatch {
	if cw, ok := w.clusters[target.Name]; ok {
		if cw.target == target {
			return cw
		}
		w.stopCluster(target.Name, cw)
	}
	// internal/targets builds the client; target is the connection with convoy's
	// own identity (target.Base), shared by every Release on the cluster.
	cw := &clusterWatch{target: target, dynamic: target.Dynamic(), stop: make(chan struct{}), kinds: map[schema.GroupVersionKind]*kindWatch{}}
	w.clusters[target.Name] = cw
	return cw
}

// ctxFor is a context that ends with the observer or when cw is replaced.
func (w *watches) ctxFor(cw *clusterWatch) context.Context {
	ctx, cancel := context.WithCancel(w.ctx)
	go func() {
		defer cancel()
		select {
		case <-cw.stop:
		case <-ctx.Done():
		}
	}()
	return ctx
}

// stopCluster stops every informer of cw, the connection to cluster. w.mu is held.
func (w *watches) stopCluster(cluster string, cw *clusterWatch) {
	for _, kw := range cw.kinds {
		kw.cancel()
	}
	close(cw.stop)
	delete(w.clusters, cluster)
}

// enqueueWhenSynced enqueues the users of kw once its informer has listed the kind:
// an object that is not there sends no event, yet its inventory now has a result.
func (w *watches) enqueueWhenSynced(kw *kindWatch) {
	if !cache.WaitForCacheSync(kw.ctx.Done(), kw.informer.HasSynced) {
		return
	}
	w.mu.Lock()
	users := make([]types.NamespacedName, 0, len(kw.users))
	for u := range kw.users {
		users = append(users, u)
	}
	w.mu.Unlock()
	for _, u := range users {
		w.enqueue(u)
	}
}

// forget drops an inventory from every informer's users.
func (w *watches) forget(user types.NamespacedName) {
	w.retain(user, nil)
}

// retain keeps user only among the users of the informers in used (the kinds its last
// assessment looked up, on the clusters it looked them up on), then stops the
// informers that have had no user for idleAfter.
func (w *watches) retain(user types.NamespacedName, used map[kindKey]struct{}) {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := w.now()
	for cluster, cw := range w.clusters {
		for gvk, kw := range cw.kinds {
			if _, ok := used[kindKey{cluster: cluster, gvk: gvk}]; !ok {
				kw.drop(user, now)
			}
			if len(kw.users) == 0 && now.Sub(kw.idleSince) >= w.idleAfter {
				w.log.V(1).Info("No inventory lists a kind any more: no longer watching it", "cluster", cluster, "kind", gvk.String())
				kw.cancel()
				delete(cw.kinds, gvk)
			}
		}
		if len(cw.kinds) == 0 {
			w.stopCluster(cluster, cw)
		}
	}
}

// count is the number of informers running, for the metrics.
func (w *watches) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, cw := range w.clusters {
		n += len(cw.kinds)
	}
	return n
}

// onEvent enqueues the inventory of the Release an object's labels name.
func (w *watches) onEvent(obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	o, ok := obj.(metav1.Object)
	if !ok {
		return
	}
	if key, ok := releaseOf(o); ok {
		w.enqueue(key)
	}
}

// releaseOf is the Release that convoy's labels on o name: from releaseKey in an
// object projectObject cached, else from the labels.
func releaseOf(o metav1.Object) (types.NamespacedName, bool) {
	if u, ok := o.(*unstructured.Unstructured); ok {
		if key, ok := u.Object[releaseKey].(string); ok {
			ns, name, found := strings.Cut(key, "/")
			return types.NamespacedName{Namespace: ns, Name: name}, found && ns != "" && name != ""
		}
	}
	labels, annotations := o.GetLabels(), o.GetAnnotations()
	name := v1.NameOfLabel(labels, annotations, v1.LabelReleaseName)
	ns := v1.NameOfLabel(labels, annotations, v1.LabelReleaseNamespace)
	return types.NamespacedName{Namespace: ns, Name: name}, name != "" && ns != ""
}

// projectObject keeps of a cached object only what the observer reads, in a new,
// small map: apiVersion and kind; of metadata the name, namespace, uid,
// resourceVersion, generation, creation and deletion timestamps, convoy's own
// labels (which name the object's Release) and a hook Job's convoy.kumodo.io/hook-run
// annotation (which names its run); of spec only its scalar fields and
// spec.updateStrategy; and status whole. kstatus reads, besides status, metadata's
// generation, creationTimestamp (a Pod) and deletionTimestamp and these spec fields:
// replicas, progressDeadlineSeconds, parallelism, completions, type, clusterIP and
// updateStrategy (type, rollingUpdate.partition) (fluxcd/cli-utils
// pkg/kstatus/status/core.go); a hook Job's phase reads its status and creation
// timestamp and its run. Everything else — managed fields, other annotations, other labels, owner
// references, a workload's pod template, a Service's ports, an Ingress's rules, a
// ConfigMap's data, a Role's rules, a CustomResourceDefinition's schemas — is dropped
// before caching: these objects are most of what the observer holds per Release
// (decision 0124; docs/notes/performance-log.md). What the informer does not read itself is cached
// as one JSON string (packedKey), which lookup unpacks. The drift check does not read
// the cache.
func projectObject(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok { // a DeletedFinalStateUnknown, or an object of another type: as it is
		return obj, nil
	}
	if _, packed := u.Object[packedKey]; packed {
		// Projected already: client-go may transform an object twice (a transform
		// must be idempotent, cache.TransformFunc).
		return obj, nil
	}
	out := make(map[string]any, 4)
	for _, k := range []string{"apiVersion", "kind"} {
		if v, ok := u.Object[k]; ok {
			out[k] = v
		}
	}
	kept, packed, release := projectMetadata(u.Object)
	out["metadata"] = kept
	if release != "" {
		out[releaseKey] = release
	}
	if v, ok := u.Object["status"]; ok {
		packed["status"] = v
	}
	if spec, ok := u.Object["spec"].(map[string]any); ok {
		packed["spec"] = projectSpec(spec)
	}
	b, err := json.Marshal(packed)
	if err != nil {
		return nil, fmt.Errorf("project %s %s: %w", u.GetKind(), u.GetName(), err)
	}
	out[packedKey] = string(b)
	return &unstructured.Unstructured{Object: out}, nil
}

// packedKey holds, in a cached object, the JSON of what projectObject keeps of it
// beyond what the informer itself reads (the name, namespace, resourceVersion and
// labels): metadata's uid, generation and timestamps, spec and status. One string
// instead of the maps a decoded status is made of: at 10,000 Releases (40,000
// objects) those maps were most of the observer's heap (decision 0124). No field of a
// Kubernetes object has a slash in its name.
const packedKey = "convoy.kumodo.io/projected"

// releaseKey holds, in a cached object, "<namespace>/<name>" of the Release that
// convoy's labels name: what onEvent reads. One string instead of a map of the labels
// in metadata, which was ~300 bytes of each of the 40,000 objects at 10,000 Releases
// (decision 0124); the labels themselves are packed.
const releaseKey = "convoy.kumodo.io/release"

// unpack is the object that projectObject cached as cached, whole again: what health
// and the hook phases read.
func unpack(cached *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	raw, ok := cached.Object[packedKey].(string)
	if !ok {
		return cached, nil
	}
	var packed map[string]any
	if err := utiljson.Unmarshal([]byte(raw), &packed); err != nil { // numbers as int64, as decoded
		return nil, fmt.Errorf("unpack %s %s: %w", cached.GetKind(), cached.GetName(), err)
	}
	out := make(map[string]any, 5)
	for k, v := range cached.Object {
		if k != packedKey && k != releaseKey {
			out[k] = v
		}
	}
	metadata := map[string]any{}
	if m, ok := cached.Object["metadata"].(map[string]any); ok {
		for k, v := range m {
			metadata[k] = v
		}
	}
	if m, ok := packed["metadata"].(map[string]any); ok {
		for k, v := range m {
			metadata[k] = v
		}
	}
	out["metadata"] = metadata
	for _, k := range []string{"spec", "status"} {
		if v, ok := packed[k]; ok {
			out[k] = v
		}
	}
	return &unstructured.Unstructured{Object: out}, nil
}

// projectMetadata is what projectObject keeps of an object's metadata: kept, what the
// informer reads (name, namespace, resourceVersion); in packed["metadata"] the uid,
// generation, timestamps and convoy's own labels; and release, "<namespace>/<name>" of
// the Release those labels name ("" when they name none; a label whose value is a
// digest names it with the annotation of the same key, v1.NameOfLabel).
func projectMetadata(obj map[string]any) (kept, packed map[string]any, release string) {
	kept, packed = make(map[string]any, 3), map[string]any{}
	m, ok := obj["metadata"].(map[string]any)
	if !ok {
		return kept, packed, ""
	}
	for _, k := range []string{"name", "namespace", "resourceVersion"} {
		if v, ok := m[k]; ok {
			kept[k] = v
		}
	}
	rest := make(map[string]any, 5)
	for _, k := range []string{"uid", "generation", "creationTimestamp", "deletionTimestamp"} {
		if v, ok := m[k]; ok {
			rest[k] = v
		}
	}
	if labels, ok := m["labels"].(map[string]any); ok {
		convoy := make(map[string]any, 2)
		for k, v := range labels {
			if strings.HasPrefix(k, v1.GroupName+"/") {
				convoy[k] = v
			}
		}
		if len(convoy) > 0 {
			rest["labels"] = convoy
		}
		annotations, _ := m["annotations"].(map[string]any)
		name := nameOfLabel(convoy, annotations, v1.LabelReleaseName)
		ns := nameOfLabel(convoy, annotations, v1.LabelReleaseNamespace)
		if name != "" && ns != "" {
			release = ns + "/" + name
		}
	}
	// A hook Job's run: a chart's hook Job keeps its name from run to run (hooks.go).
	if annotations, ok := m["annotations"].(map[string]any); ok {
		if run, ok := annotations[v1.AnnotationHookRun]; ok {
			rest["annotations"] = map[string]any{v1.AnnotationHookRun: run}
		}
	}
	if len(rest) > 0 {
		packed["metadata"] = rest
	}
	return kept, packed, release
}

// nameOfLabel is v1.NameOfLabel of an unstructured object's labels and annotations:
// the name of a label whose value is a digest (a Release name longer than 63
// characters) is in the annotation of the same key.
func nameOfLabel(labels, annotations map[string]any, key string) string {
	value, _ := labels[key].(string)
	name, _ := annotations[key].(string)
	return v1.NameOfLabel(map[string]string{key: value}, map[string]string{key: name}, key)
}

// projectSpec is what projectObject keeps of spec: its scalar fields and
// updateStrategy.
func projectSpec(spec map[string]any) map[string]any {
	out := make(map[string]any, 4)
	for k, v := range spec {
		switch v.(type) {
		case map[string]any, []any:
			if k == "updateStrategy" {
				out[k] = v
			}
		default:
			out[k] = v
		}
	}
	return out
}

// unsyncedRecheck is when an inventory is looked at again while one of its informers
// has not listed its kind yet (normally the informer's sync enqueues it first; this
// covers a kind whose list keeps failing, such as one the observer may not read).
const unsyncedRecheck = 30 * time.Second
