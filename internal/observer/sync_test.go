package observer

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// SP-15: the first time the observer's assessment covers every object of a render, it
// announces it by exactly one /sync; a second render gets exactly one more; a
// restarted observer sends at most one more (here none: the stored status already
// shows the render).
func TestSP15_NewRenderAnnouncedByExactlyOneSync(t *testing.T) {
	e := newEnv(t)
	syncs := e.watchSyncs()
	first, second := renderRef("d"), renderRef("e")
	e.create(testRelease(e.ns, "web"))
	e.rendered("web", first)
	e.create(testConfigMap(e.ns, "web", "config"))
	e.create(testInventory(e.ns, "web", first, entry("ConfigMap", e.ns, "config", 0)))
	obs := e.startObserver(observerOptions{resync: time.Second})

	e.waitHealth("web", first, v1.HealthHealthy)
	e.eventually("one /sync for the first render", func() (bool, string) {
		return syncs.count("web") == 1, fmt.Sprintf("%d /sync", syncs.count("web"))
	})
	// Several resyncs later, still one.
	e.consistently("no second /sync for the same render", 3*time.Second, func() (bool, string) {
		return syncs.count("web") == 1 && obs.syncs() == 1, fmt.Sprintf("%d /sync seen, %d sent", syncs.count("web"), obs.syncs())
	})

	// The controller would render anew and move the inventory to the new render.
	e.rendered("web", second)
	inv := e.inventory("web")
	moved := inv.DeepCopy()
	moved.RenderRef = second
	if err := e.client.Patch(e.ctx, moved, client.MergeFrom(inv)); err != nil {
		t.Fatal(err)
	}
	e.waitHealth("web", second, v1.HealthHealthy)
	e.eventually("one /sync for the second render", func() (bool, string) {
		return syncs.count("web") == 2, fmt.Sprintf("%d /sync", syncs.count("web"))
	})

	// A restart forgets the memory; the stored status stands in for it.
	obs.stop()
	again := e.startObserver(observerOptions{resync: time.Second})
	e.consistently("at most one more /sync after a restart", 3*time.Second, func() (bool, string) {
		return syncs.count("web") <= 3, fmt.Sprintf("%d /sync", syncs.count("web"))
	})
	if again.syncs() > 1 {
		t.Errorf("the restarted observer sent %d /sync, want at most 1", again.syncs())
	}
}

// Steady state: with 100 healthy Releases, no ReleaseInventory status write, no
// /sync and no Release write over several resyncs (1 s here), counted by the
// observer's metrics and by watches on the inventories and Releases.
func TestSteadyStateCausesNoWrites(t *testing.T) {
	const n = 100
	e := newEnv(t)
	ref := renderRef("f")
	for i := range n {
		name := fmt.Sprintf("web-%03d", i)
		e.create(testRelease(e.ns, name))
		e.rendered(name, ref)
		e.create(testConfigMap(e.ns, name, name))
		e.create(testDeployment(e.ns, name, name))
		e.create(testInventory(e.ns, name, ref, entry("ConfigMap", e.ns, name, 0), entry("Deployment", e.ns, name, 1)))
	}
	obs := e.startObserver(observerOptions{resync: time.Second})
	for i := range n {
		e.waitHealth(fmt.Sprintf("web-%03d", i), ref, v1.HealthHealthy)
	}
	e.eventually("one /sync per new render", func() (bool, string) {
		return obs.syncs() == n, fmt.Sprintf("%d /sync", obs.syncs())
	})
	// The write counter moves after the status write returns, which the test may have
	// seen first: take the figures once they have not moved for a second.
	writes, since := -1, time.Time{}
	e.eventually("the status write counter settled", func() (bool, string) {
		if w := obs.writes(); w != writes {
			writes, since = w, time.Now()
		}
		return time.Since(since) >= time.Second, fmt.Sprintf("%d status writes", writes)
	})
	syncs := obs.syncs()

	// Watches from now: their ADDED events are the current state, anything else a write.
	var watches []watch.Interface
	for _, list := range []client.ObjectList{&v1.ReleaseInventoryList{}, &v1.ReleaseList{}} {
		w, err := e.client.Watch(e.ctx, list, client.InNamespace(e.ns))
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		watches = append(watches, w)
	}
	events := 0
	e.consistently("no status write, no /sync and no Release write in steady state", 5*time.Second, func() (bool, string) {
		for _, w := range watches {
			for drained := false; !drained; {
				select {
				case ev := <-w.ResultChan():
					if ev.Type != watch.Added {
						events++
					}
				default:
					drained = true
				}
			}
		}
		return obs.writes() == writes && obs.syncs() == syncs && events == 0,
			fmt.Sprintf("%d status writes, %d /sync, %d write events", obs.writes()-writes, obs.syncs()-syncs, events)
	})
}

// failingSyncer fails while fail is set, else sends /sync with next.
type failingSyncer struct {
	fail  atomic.Bool
	calls atomic.Int32
	next  Syncer
}

// newFailingSyncer is a failingSyncer over the observer's real Syncer, failing until
// told otherwise.
func newFailingSyncer(t *testing.T) *failingSyncer {
	t.Helper()
	cfg, err := controlPlane.UserConfig(identity)
	if err != nil {
		t.Fatal(err)
	}
	direct, err := NewSyncer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	f := &failingSyncer{next: direct}
	f.fail.Store(true)
	return f
}

func (f *failingSyncer) Sync(ctx context.Context, namespace, name, render string) error {
	f.calls.Add(1)
	if f.fail.Load() {
		return errors.New("the API server is away")
	}
	return f.next.Sync(ctx, namespace, name, render)
}

// In manual mode the /sync goes before the status write (health/doc.go): while it
// fails, the status that would show the new render is not written, and the /sync is
// tried again; once it goes through, the status follows.
func TestStatusWaitsForTheSync(t *testing.T) {
	e := newEnv(t)
	syncs := e.watchSyncs()
	ref := renderRef("7")
	e.create(testRelease(e.ns, "web"))
	e.rendered("web", ref)
	e.create(testConfigMap(e.ns, "web", "config"))
	e.create(testInventory(e.ns, "web", ref, entry("ConfigMap", e.ns, "config", 0)))
	syncer := newFailingSyncer(t)
	e.startObserver(observerOptions{syncer: syncer})

	e.eventually("a /sync attempt", func() (bool, string) {
		return syncer.calls.Load() >= 2, fmt.Sprintf("%d attempts", syncer.calls.Load())
	})
	e.consistently("no status write while the /sync fails", 2*time.Second, func() (bool, string) {
		st := e.inventory("web").Status
		return st.RenderRef == "" && st.AssessedAt == nil, fmt.Sprintf("status written: %+v", st)
	})
	syncer.fail.Store(false)
	e.waitHealth("web", ref, v1.HealthHealthy)
	// The count comes from the test's watch of the Release, which may lag the status.
	e.eventually("the /sync on the Release", func() (bool, string) {
		return syncs.count("web") == 1, fmt.Sprintf("%d /sync reached the Release", syncs.count("web"))
	})
	e.consistently("no second /sync", time.Second, func() (bool, string) {
		return syncs.count("web") == 1, fmt.Sprintf("%d /sync reached the Release, want 1", syncs.count("web"))
	})
}

// In automatic mode the status goes first (health/doc.go: the controller then handles
// the health data and the /sync in one reconcile): the status that shows the new render
// is written while the /sync fails, and the /sync — SP-15, "The observer sends one when
// ... health assessment reaches a new render" — is still sent, exactly once, when it
// goes through: the written status does not pass for a sent /sync.
func TestSP15_AutomaticModeWritesTheStatusThenSendsTheSync(t *testing.T) {
	e := newEnv(t)
	syncs := e.watchSyncs()
	ref := renderRef("8")
	automaticRelease := func(name string) {
		rel := testRelease(e.ns, name)
		rel.Spec.SyncPolicy.Automatic = new(true)
		e.create(rel)
		e.rendered(name, ref)
		e.create(testConfigMap(e.ns, name, "config-"+name))
		e.create(testInventory(e.ns, name, ref, entry("ConfigMap", e.ns, "config-"+name, 0)))
	}
	syncer := newFailingSyncer(t)
	e.startObserver(observerOptions{syncer: syncer})
	// Another Release first, so that the ConfigMap informer has synced when web is
	// first assessed: that first assessment, with nothing remembered yet, is the one
	// that writes the render and fails to send its /sync.
	automaticRelease("other")
	e.waitHealth("other", ref, v1.HealthHealthy)
	automaticRelease("web")

	e.waitHealth("web", ref, v1.HealthHealthy)
	written := syncer.calls.Load()
	e.eventually("the /sync tried again after the status write", func() (bool, string) {
		return syncer.calls.Load() > written, fmt.Sprintf("%d attempts, %d before the write was seen", syncer.calls.Load(), written)
	})
	if n := syncs.count("web"); n != 0 {
		t.Fatalf("%d /sync reached the Release while the syncer fails", n)
	}
	syncer.fail.Store(false)
	e.eventually("the /sync on the Release", func() (bool, string) {
		return syncs.count("web") == 1, fmt.Sprintf("%d /sync reached the Release", syncs.count("web"))
	})
	e.consistently("no second /sync", time.Second, func() (bool, string) {
		return syncs.count("web") == 1, fmt.Sprintf("%d /sync reached the Release, want 1", syncs.count("web"))
	})
}
