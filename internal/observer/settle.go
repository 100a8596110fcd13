package observer

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// renderSightings remembers, per inventory, when the observer first assessed the
// render the inventory names, until its health data names it too: the start of that
// render's settle (health.SettleWait). It is safe for concurrent use; the zero value is
// ready to use.
type renderSightings struct {
	mu    sync.Mutex
	byKey map[types.NamespacedName]sighting
}

type sighting struct {
	uid       types.UID
	renderRef string
	at        time.Time
}

// firstSeen returns when the render renderRef of the inventory uid was first seen,
// now if this is the first time.
func (s *renderSightings) firstSeen(key types.NamespacedName, uid types.UID, renderRef string, now time.Time) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	if seen, ok := s.byKey[key]; ok && seen.uid == uid && seen.renderRef == renderRef {
		return seen.at
	}
	if s.byKey == nil {
		s.byKey = map[types.NamespacedName]sighting{}
	}
	s.byKey[key] = sighting{uid: uid, renderRef: renderRef, at: now}
	return now
}

// forget drops key's sighting: its render is reported, or the inventory is gone.
func (s *renderSightings) forget(key types.NamespacedName) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.byKey, key)
}
