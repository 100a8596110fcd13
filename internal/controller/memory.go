package controller

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"

	"kumodo.io/convoy/internal/policy"
)

// releaseMemory holds one value of type T for each Release, valid for the Release of
// the uid it was put for: a Release deleted and created again under the same name
// starts with nothing. It is safe for concurrent use; the zero value is ready to use.
// The reconcile forgets a Release that is gone (Reconciler.forget).
type releaseMemory[T any] struct {
	mu     sync.Mutex
	values map[policy.Key]remembered[T]
}

type remembered[T any] struct {
	uid   types.UID
	value T
}

// get returns what was put for key when it was the Release of uid; false when none.
func (m *releaseMemory[T]) get(key policy.Key, uid types.UID) (T, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e, ok := m.values[key]; ok && e.uid == uid {
		return e.value, true
	}
	var zero T
	return zero, false
}

func (m *releaseMemory[T]) put(key policy.Key, uid types.UID, value T) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.values == nil {
		m.values = map[policy.Key]remembered[T]{}
	}
	m.values[key] = remembered[T]{uid: uid, value: value}
}

func (m *releaseMemory[T]) forget(key policy.Key) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.values, key)
}
