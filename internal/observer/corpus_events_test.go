package observer

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// objectEvents records what happened to the objects of some kinds while a corpus
// chart ran: every creation and deletion seen through watches started before the
// Release, each with the resourceVersion the API server gave it. The local control
// plane has one etcd, whose revisions number every write of every kind, so the
// resourceVersions order the events across kinds as they happened.
type objectEvents struct {
	mu     sync.Mutex
	events []objectEvent
	broken []string // watches that ended before the test stopped them
}

// objectEvent is one creation (watch.Added) or deletion (watch.Deleted).
type objectEvent struct {
	Type        watch.EventType
	Kind, Name  string
	Labels      map[string]string
	Annotations map[string]string
	RV          string
}

func (ev objectEvent) String() string {
	return fmt.Sprintf("%s %s %s@%s", ev.Type, ev.Kind, ev.Name, ev.RV)
}

// recordedKinds are the kinds a corpus run records: the hook objects' and Jobs, the
// workloads the hooks run around, and the webhook and the objects it matches.
var recordedKinds = []struct {
	gvk        schema.GroupVersionKind
	namespaced bool
}{
	{schema.GroupVersionKind{Version: "v1", Kind: "ServiceAccount"}, true},
	{schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, true},
	{schema.GroupVersionKind{Group: "batch", Version: "v1", Kind: "Job"}, true},
	{schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, true},
	{schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "Role"}, true},
	{schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "RoleBinding"}, true},
	{schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"}, false},
	{schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRoleBinding"}, false},
	{schema.GroupVersionKind{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingWebhookConfiguration"}, false},
}

// recordEvents starts the watches of recordedKinds (namespaced ones in the test's
// namespace) and returns once they are established; Cleanup stops them.
func (e *env) recordEvents() *objectEvents {
	e.t.Helper()
	rec := &objectEvents{}
	for _, k := range recordedKinds {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(k.gvk.GroupVersion().WithKind(k.gvk.Kind + "List"))
		var opts []client.ListOption
		if k.namespaced {
			opts = append(opts, client.InNamespace(e.ns))
		}
		w, err := e.client.Watch(e.ctx, list, opts...)
		if err != nil {
			e.t.Fatalf("watch %s: %v", k.gvk.Kind, err)
		}
		stopped := make(chan struct{})
		e.t.Cleanup(func() { close(stopped); w.Stop() })
		go rec.consume(k.gvk.Kind, w, stopped)
	}
	return rec
}

func (r *objectEvents) consume(kind string, w watch.Interface, stopped <-chan struct{}) {
	for ev := range w.ResultChan() {
		if ev.Type != watch.Added && ev.Type != watch.Deleted {
			continue
		}
		obj, ok := ev.Object.(metav1.Object)
		if !ok {
			continue
		}
		r.mu.Lock()
		r.events = append(r.events, objectEvent{Type: ev.Type, Kind: kind, Name: obj.GetName(),
			Labels: obj.GetLabels(), Annotations: obj.GetAnnotations(), RV: obj.GetResourceVersion()})
		r.mu.Unlock()
	}
	select {
	case <-stopped:
	default:
		r.mu.Lock()
		r.broken = append(r.broken, kind)
		r.mu.Unlock()
	}
}

// matching returns the events of type typ that match, in the order they happened.
func (r *objectEvents) matching(typ watch.EventType, match func(objectEvent) bool) ([]objectEvent, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.broken) > 0 {
		return nil, fmt.Errorf("the watches of %s ended early: the record is incomplete", strings.Join(r.broken, ", "))
	}
	var out []objectEvent
	for _, ev := range r.events {
		if ev.Type == typ && match(ev) {
			out = append(out, ev)
		}
	}
	var err error
	slices.SortStableFunc(out, func(a, b objectEvent) int {
		c, cerr := resourceversion.CompareResourceVersion(a.RV, b.RV)
		if cerr != nil && err == nil {
			err = cerr
		}
		return c
	})
	return out, err
}

// first is the first event of type typ of the object kind/name; ok is false when
// there is none.
func (r *objectEvents) first(typ watch.EventType, kind, name string) (objectEvent, bool, error) {
	evs, err := r.matching(typ, func(ev objectEvent) bool { return ev.Kind == kind && ev.Name == name })
	if err != nil || len(evs) == 0 {
		return objectEvent{}, false, err
	}
	return evs[0], true, nil
}

// before reports whether a happened before b.
func before(a, b objectEvent) bool {
	c, err := resourceversion.CompareResourceVersion(a.RV, b.RV)
	return err == nil && c < 0
}
