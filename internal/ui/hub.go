package ui

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// Kinds of objects the hub streams, as the browser names them.
const (
	KindRelease   = "Release"
	KindInventory = "ReleaseInventory"
	KindRender    = "Render"
	KindCluster   = "Cluster"
	KindEvent     = "Event"
	// KindReleaseSet is streamed where the user may list and watch ReleaseSets and
	// convoy apiserver serves them.
	KindReleaseSet = "ReleaseSet"
	// KindAlert and KindReceiver are streamed where the user may list and watch them
	// and convoy apiserver serves them; with Alerts, the Events of the Alerts (one
	// Warning per failed delivery attempt) are streamed as KindEvent too.
	KindAlert    = "Alert"
	KindReceiver = "Receiver"
)

// Message is one change sent to the browser: an object put (added or changed)
// or deleted. Key is namespace/name (name for cluster-scoped objects).
type Message struct {
	Op     string          `json:"op"` // put, delete, synced (the snapshot is complete)
	Kind   string          `json:"kind,omitempty"`
	Key    string          `json:"key,omitempty"`
	Object json.RawMessage `json:"object,omitempty"`
}

// source is one watched kind: its informer and whether the user may watch it
// at all (a Cluster list may be forbidden to a namespace's user).
type source struct {
	kind     string
	informer cache.SharedIndexInformer
}

// hub keeps informers of what the UI shows and fans their changes out to the
// browsers' streams. A change only names a key; the object sent is the one in
// the informer's store at the time it is sent, so a slow notification never
// sends a stale object after a newer one.
type hub struct {
	sources []source

	mu   sync.Mutex
	subs map[chan Message]bool
}

// watchScope is what the hub watches: namespaces, and Clusters when the user
// may list and watch them.
type watchScope struct {
	namespaces []nsScope
	clusters   bool
}

// nsScope is one namespace ("" for all) and which kinds besides Releases the
// user may list and watch there (the others are left out).
type nsScope struct {
	name                                                         string
	inventories, renders, events, releaseSets, alerts, receivers bool
}

func newHub(cfg *rest.Config, convoy rest.Interface, scope watchScope) (*hub, error) {
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	h := &hub{subs: map[chan Message]bool{}}
	add := func(kind string, lw cache.ListerWatcher, obj runtime.Object, transform cache.TransformFunc) error {
		inf := cache.NewSharedIndexInformer(lw, obj, 0, cache.Indexers{})
		if transform != nil {
			if err := inf.SetTransform(transform); err != nil {
				return err
			}
		}
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(o any) { h.changed(kind, o) },
			UpdateFunc: func(_, o any) { h.changed(kind, o) },
			DeleteFunc: func(o any) { h.changed(kind, o) },
		}); err != nil {
			return err
		}
		h.sources = append(h.sources, source{kind: kind, informer: inf})
		return nil
	}
	for _, n := range scope.namespaces {
		ns := n.name
		for _, k := range []struct {
			kind, resource string
			obj            runtime.Object
			transform      cache.TransformFunc
			allowed        bool
		}{
			{KindRelease, v1.ResourceReleases, &v1.Release{}, nil, true},
			{KindInventory, v1.ResourceReleaseInventories, &v1.ReleaseInventory{}, nil, n.inventories},
			{KindRender, v1.ResourceRenders, &v1.Render{}, stripManifests, n.renders},
			{KindReleaseSet, v1.ResourceReleaseSets, &v1.ReleaseSet{}, nil, n.releaseSets},
			{KindAlert, v1.ResourceAlerts, &v1.Alert{}, nil, n.alerts},
			{KindReceiver, v1.ResourceReceivers, &v1.Receiver{}, nil, n.receivers},
		} {
			if !k.allowed {
				continue
			}
			if err := add(k.kind, cache.NewListWatchFromClient(convoy, k.resource, ns, fields.Everything()), k.obj, k.transform); err != nil {
				return nil, err
			}
		}
		if !n.events {
			continue
		}
		events := cache.NewListWatchFromClient(kube.CoreV1().RESTClient(), "events", ns,
			fields.OneTermEqualSelector("involvedObject.kind", KindRelease))
		if err := add(KindEvent, events, &corev1.Event{}, nil); err != nil {
			return nil, err
		}
		if !n.alerts {
			continue
		}
		// A second source of KindEvent: message finds a key in either.
		alertEvents := cache.NewListWatchFromClient(kube.CoreV1().RESTClient(), "events", ns,
			fields.OneTermEqualSelector("involvedObject.kind", KindAlert))
		if err := add(KindEvent, alertEvents, &corev1.Event{}, nil); err != nil {
			return nil, err
		}
	}
	if scope.clusters {
		if err := add(KindCluster, cache.NewListWatchFromClient(convoy, v1.ResourceClusters, "", fields.Everything()), &v1.Cluster{}, nil); err != nil {
			return nil, err
		}
	}
	return h, nil
}

// stripManifests drops a Render's manifests (large, and fetched only for a diff)
// and managedFields from what the hub keeps.
func stripManifests(o any) (any, error) {
	if r, ok := o.(*v1.Render); ok {
		r = r.DeepCopy()
		r.Manifests = nil
		r.ManagedFields = nil
		return r, nil
	}
	return o, nil
}

// run starts the informers and waits until each has listed once.
func (h *hub) run(ctx context.Context) error {
	for _, s := range h.sources {
		go s.informer.Run(ctx.Done())
	}
	syncs := make([]cache.InformerSynced, 0, len(h.sources))
	for _, s := range h.sources {
		syncs = append(syncs, s.informer.HasSynced)
	}
	if !cache.WaitForCacheSync(ctx.Done(), syncs...) {
		return fmt.Errorf("the watches of the UI did not start: %w", context.Cause(ctx))
	}
	return nil
}

func (h *hub) changed(kind string, o any) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(o)
	if err != nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.subs) == 0 {
		return
	}
	m := h.message(kind, key)
	for ch := range h.subs {
		select {
		case ch <- m:
		default:
			// A browser that does not keep up loses its stream; EventSource
			// reconnects and gets a fresh snapshot.
			delete(h.subs, ch)
			close(ch)
		}
	}
}

// message is the current state of kind/key in the hub's store.
func (h *hub) message(kind, key string) Message {
	for _, s := range h.sources {
		if s.kind != kind {
			continue
		}
		if o, ok, _ := s.informer.GetStore().GetByKey(key); ok {
			b, err := json.Marshal(o)
			if err == nil {
				return Message{Op: "put", Kind: kind, Key: key, Object: b}
			}
		}
	}
	return Message{Op: "delete", Kind: kind, Key: key}
}

// subscribe returns a channel with a snapshot of every object, a synced
// message, then every change; the channel is closed when the subscriber falls
// behind. cancel ends the subscription.
func (h *hub) subscribe() (<-chan Message, func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	var snapshot []Message
	for _, s := range h.sources {
		keys := s.informer.GetStore().ListKeys()
		sort.Strings(keys)
		for _, k := range keys {
			snapshot = append(snapshot, h.message(s.kind, k))
		}
	}
	ch := make(chan Message, len(snapshot)+1024)
	for _, m := range snapshot {
		ch <- m
	}
	ch <- Message{Op: "synced"}
	h.subs[ch] = true
	return ch, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.subs[ch] {
			delete(h.subs, ch)
			close(ch)
		}
	}
}

// keepAlive is how often an idle stream gets a comment line, so that proxies
// and the browser keep it open.
const keepAlive = 20 * time.Second
