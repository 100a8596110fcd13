package observer

import (
	"context"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/targets"
)

// An inventory entry records the uid of an object convoy's apply created
// (apply.Applied; decision 0234). An informer's view of the object with another uid
// is of another object of the same name: an earlier one, deleted since, whose
// deletion the informer has not seen yet (its watch broke, and the object was gone
// before it listed again), or a later one that someone else made after deleting
// convoy's. Only the API server tells them apart, and only then is it asked.

// viewOf is the view to assess obj from: live, the informer's, when it is of the
// object the entry names (the same uid, or no uid recorded); when it is not, the API
// server's answer (nil: the object is not there). current is false when the API
// server has the object the entry names: the informer is behind, and its next event
// queues the inventory again. fresh says the view is not the informer's, or is of an
// object that replaced the one convoy created: its generation is not comparable with
// the entry's.
func (o *Observer) viewOf(ctx context.Context, target *targets.Target, key types.NamespacedName, obj v1.InventoryObject, live *unstructured.Unstructured) (view *unstructured.Unstructured, current, fresh bool, err error) {
	if live == nil || obj.UID == "" || live.GetUID() == obj.UID {
		return live, true, false, nil
	}
	if o.replaced.is(key, obj.UID, live.GetUID()) {
		// The API server said so already: the informer's view is of the object that
		// replaced convoy's.
		return live, true, true, nil
	}
	read, err := readObject(ctx, target, obj.ObjectReference)
	switch {
	case err != nil:
		return nil, false, false, err
	case read == nil:
		// Convoy's object is gone too: Missing.
		return nil, true, true, nil
	case read.GetUID() == obj.UID:
		return nil, false, false, nil
	default:
		o.replaced.set(key, obj.UID, read.GetUID())
		return read, true, true, nil
	}
}

// readObject reads ref from target's API server (target.Client does not cache); nil
// when it is not there.
func readObject(ctx context.Context, target *targets.Target, ref v1.ObjectReference) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(schema.GroupVersionKind{Group: ref.Group, Version: ref.Version, Kind: ref.Kind})
	err := target.Client.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, u)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("read %s %s/%s on cluster %q: %w", ref.Kind, ref.Namespace, ref.Name, target.Name, err)
	}
	return u, nil
}

// replacedObjects remembers, per inventory, the objects the API server showed to have
// replaced the one convoy created (recorded uid to the uid of the object there then),
// so that an informer's view of the replacement is assessed without asking again.
// Empty unless someone else replaced an object convoy created; the next apply records
// the replacement's uid (apply.Applied), after which the view matches the entry.
type replacedObjects struct {
	mu    sync.Mutex
	known map[types.NamespacedName]map[types.UID]types.UID
}

func (r *replacedObjects) is(key types.NamespacedName, recorded, seen types.UID) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.known[key][recorded] == seen
}

func (r *replacedObjects) set(key types.NamespacedName, recorded, seen types.UID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.known == nil {
		r.known = map[types.NamespacedName]map[types.UID]types.UID{}
	}
	if r.known[key] == nil {
		r.known[key] = map[types.UID]types.UID{}
	}
	r.known[key][recorded] = seen
}

func (r *replacedObjects) forget(key types.NamespacedName) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.known, key)
}
