package release

import (
	"context"
	"kumodo.io/convoy/internal/testenv"
	"runtime"
	"sync"
	"testing"
	"time"
)

// testCtx bounds every wait of a test, so a broken lock fails the test instead of
// hanging it.
func testCtx(t *testing.T) context.Context {
	return testenv.Context(t, 10*time.Second)
}

func mustLock(ctx context.Context, t *testing.T, l *keyLock, key string) func() {
	t.Helper()
	unlock, err := l.lock(ctx, key)
	if err != nil {
		t.Fatalf("lock %q: %v", key, err)
	}
	return unlock
}

// refs returns the holders and waiters of key.
func refs(l *keyLock, key string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e := l.entries[key]; e != nil {
		return e.refs
	}
	return 0
}

// waitRefs yields until key has n holders and waiters.
func waitRefs(ctx context.Context, t *testing.T, l *keyLock, key string, n int) {
	t.Helper()
	for refs(l, key) != n {
		if ctx.Err() != nil {
			t.Fatalf("key %q: %d holders and waiters, want %d", key, refs(l, key), n)
		}
		runtime.Gosched()
	}
}

func TestKeyLockNoLeak(t *testing.T) {
	ctx := testCtx(t)
	l := newKeyLock()
	for _, key := range []string{"ns/a", "ns/b", "other/a"} {
		mustLock(ctx, t, l, key)()
	}
	if n := l.len(); n != 0 {
		t.Fatalf("%d entries after every unlock, want 0", n)
	}

	// A waiter that gives up leaves nothing behind either.
	unlock := mustLock(ctx, t, l, "ns/a")
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := l.lock(canceled, "ns/a"); err == nil {
		t.Fatal("lock of a held key with a canceled context succeeded")
	}
	if n := refs(l, "ns/a"); n != 1 {
		t.Fatalf("%d holders and waiters after the waiter gave up, want 1", n)
	}
	unlock()
	if n := l.len(); n != 0 {
		t.Fatalf("%d entries after every unlock, want 0", n)
	}
}

func TestKeyLockSerialisesSameKey(t *testing.T) {
	ctx := testCtx(t)
	l := newKeyLock()
	unlockFirst := mustLock(ctx, t, l, "ns/rel")

	acquired := make(chan func())
	go func() {
		unlock, err := l.lock(ctx, "ns/rel")
		if err != nil {
			close(acquired)
			return
		}
		acquired <- unlock
	}()
	waitRefs(ctx, t, l, "ns/rel", 2) // the second caller is waiting
	select {
	case <-acquired:
		t.Fatal("second lock of the same key succeeded while the first was held")
	default:
	}

	unlockFirst()
	var unlockSecond func()
	select {
	case unlockSecond = <-acquired:
	case <-ctx.Done():
		t.Fatal("second lock not acquired after the first unlock")
	}
	if unlockSecond == nil {
		t.Fatal("second lock failed")
	}
	unlockSecond()
	if n := l.len(); n != 0 {
		t.Fatalf("%d entries after every unlock, want 0", n)
	}
}

// Many callers of one key: never two inside at once, and nothing left afterwards.
func TestKeyLockMutualExclusion(t *testing.T) {
	ctx := testCtx(t)
	l := newKeyLock()
	var inside, maxInside, done int
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				unlock, err := l.lock(ctx, "ns/rel")
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				inside++
				maxInside = max(maxInside, inside)
				mu.Unlock()
				runtime.Gosched()
				mu.Lock()
				inside--
				done++
				mu.Unlock()
				unlock()
			}
		}()
	}
	wg.Wait()
	if maxInside != 1 || done != 32*50 {
		t.Fatalf("at most %d callers inside at once, %d done; want 1, %d", maxInside, done, 32*50)
	}
	if n := l.len(); n != 0 {
		t.Fatalf("%d entries after every unlock, want 0", n)
	}
}

func TestKeyLockDifferentKeysInParallel(t *testing.T) {
	ctx := testCtx(t)
	l := newKeyLock()
	keys := []string{"ns/a", "ns/b", "other/a"}
	// Each caller holds its key until every caller holds its own: this finishes only
	// if the keys are held at the same time.
	var holding sync.WaitGroup
	holding.Add(len(keys))
	allHeld := make(chan struct{})
	var done sync.WaitGroup
	for _, key := range keys {
		done.Add(1)
		go func() {
			defer done.Done()
			unlock, err := l.lock(ctx, key)
			if err != nil {
				t.Errorf("lock %q: %v", key, err)
				holding.Done()
				return
			}
			defer unlock()
			holding.Done()
			select {
			case <-allHeld:
			case <-ctx.Done():
				t.Errorf("key %q: the other keys were not locked while it was held", key)
			}
		}()
	}
	holding.Wait()
	if n := l.len(); n != len(keys) {
		t.Errorf("%d entries while %d keys are held, want %d", n, len(keys), len(keys))
	}
	close(allHeld)
	done.Wait()
	if n := l.len(); n != 0 {
		t.Fatalf("%d entries after every unlock, want 0", n)
	}
}
