package controller

import (
	"sync"

	"k8s.io/apimachinery/pkg/util/resourceversion"

	"kumodo.io/convoy/internal/policy"
)

// writeLog remembers, for each Release, the resourceVersion of the controller's last
// write to it (its status or its finalizer). A reconcile that gets an older Release from
// the cache (the informer has not seen that write yet) reads it from the API server
// instead: deciding on the status from before the write would undo it, for example
// apply a render again that a rollback has just replaced. It is safe for concurrent
// use; the zero value is ready to use.
type writeLog struct {
	mu  sync.Mutex
	rvs map[policy.Key]string
}

// record notes rv as the resourceVersion that the controller's write to key returned.
func (w *writeLog) record(key policy.Key, rv string) {
	if rv == "" {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.rvs == nil {
		w.rvs = map[policy.Key]string{}
	}
	w.rvs[key] = rv
}

// predates reports whether a Release of key at resourceVersion rv is older than the
// controller's last write to it. A resourceVersion that does not compare (not one of
// etcd's revisions) never predates.
func (w *writeLog) predates(key policy.Key, rv string) bool {
	w.mu.Lock()
	last, ok := w.rvs[key]
	w.mu.Unlock()
	if !ok {
		return false
	}
	cmp, err := resourceversion.CompareResourceVersion(rv, last)
	return err == nil && cmp < 0
}

// forget drops what the log holds for key, a Release that is gone.
func (w *writeLog) forget(key policy.Key) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.rvs, key)
}
