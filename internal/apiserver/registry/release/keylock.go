package release

import (
	"context"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"

	"kumodo.io/convoy/internal/apiserver/registry"
)

// keyLock makes the callers that lock the same key take turns (first come, first
// served), and lets different keys run in parallel. An entry lives only while someone
// holds or waits for its key, so the map holds at most one entry per key in use.
//
// The subresource writes of a Release (/sync, /pin, /mutations, /lifecycle) lock
// namespace/name around their read-modify-write: concurrent writes to one Release
// within this process then cost about one etcd transaction each, instead of all but
// one failing their compare-and-swap and retrying together. Writes from other
// replicas, or through the main resource and /status, still conflict and are retried
// by the storage, as before.
type keyLock struct {
	mu      sync.Mutex
	entries map[string]*keyLockEntry
}

type keyLockEntry struct {
	turn chan struct{} // holds one token while the key is locked
	refs int           // holders and waiters; guarded by keyLock.mu
}

func newKeyLock() *keyLock {
	return &keyLock{entries: map[string]*keyLockEntry{}}
}

// lock waits until key is free or ctx is done. On success it returns the function
// that unlocks key, to be called exactly once; otherwise ctx's error.
func (l *keyLock) lock(ctx context.Context, key string) (func(), error) {
	l.mu.Lock()
	e := l.entries[key]
	if e == nil {
		e = &keyLockEntry{turn: make(chan struct{}, 1)}
		l.entries[key] = e
	}
	e.refs++
	l.mu.Unlock()

	select {
	case e.turn <- struct{}{}:
		return func() {
			<-e.turn
			l.release(key, e)
		}, nil
	case <-ctx.Done():
		l.release(key, e)
		return nil, ctx.Err()
	}
}

func (l *keyLock) release(key string, e *keyLockEntry) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e.refs--; e.refs == 0 {
		delete(l.entries, key)
	}
}

// len returns the number of keys held or waited for.
func (l *keyLock) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.entries)
}

// lockRelease locks the Release name in the namespace of ctx. A request that gives up
// while waiting (its context ends) gets a timeout error (504).
func (l *keyLock) lockRelease(ctx context.Context, name string) (func(), error) {
	namespace, _ := genericapirequest.NamespaceFrom(ctx)
	unlock, err := l.lock(ctx, namespace+"/"+name)
	if err != nil {
		return nil, apierrors.NewTimeoutError("waiting for the other writes to release "+namespace+"/"+name+": "+err.Error(), 0)
	}
	return unlock, nil
}

// lockedSubresourceREST is a whole-object subresource of Release (/pin, /mutations,
// /lifecycle) whose updates take turns per Release in this process.
type lockedSubresourceREST struct {
	*registry.SubresourceREST
	locks *keyLock
}

var _ rest.Patcher = &lockedSubresourceREST{}

// Update writes what the strategy lets through, in one read-modify-write in storage,
// after the other writes of this Release in this process.
func (r *lockedSubresourceREST) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo,
	createValidation rest.ValidateObjectFunc, updateValidation rest.ValidateObjectUpdateFunc,
	forceAllowCreate bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	unlock, err := r.locks.lockRelease(ctx, name)
	if err != nil {
		return nil, false, err
	}
	defer unlock()
	return r.SubresourceREST.Update(ctx, name, objInfo, createValidation, updateValidation, forceAllowCreate, options)
}
