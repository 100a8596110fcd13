package controller

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// gate holds every reconcile while it is closed, and records the order in which the
// reconciles start.
type gate struct {
	mu      sync.Mutex
	closed  chan struct{} // nil while open
	started []string
}

func (g *gate) wrap(r reconcile.Reconciler) reconcile.Reconciler {
	return reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		g.mu.Lock()
		g.started = append(g.started, req.Name)
		c := g.closed
		g.mu.Unlock()
		if c != nil {
			select {
			case <-c:
			case <-ctx.Done():
				return reconcile.Result{}, ctx.Err()
			}
		}
		return r.Reconcile(ctx, req)
	})
}

func (g *gate) close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.closed = make(chan struct{})
}

func (g *gate) open() {
	g.mu.Lock()
	defer g.mu.Unlock()
	close(g.closed)
	g.closed = nil
}

func (g *gate) order() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.started)
}

// A person's /sync goes ahead of the Releases queued before it (issue 15, point 6: under
// a mass create the first /sync waited 15 minutes in the work queue, first come, first
// served). One worker is held on a Release while five more are created behind it, then
// a sixth, reconciled before, gets a /sync: when the worker is let go, the /sync is
// handled next (or, if its event reached the queue a moment after the worker took the
// next Release, second), not after the five.
func TestASyncRequestGoesAheadOfTheReleasesQueuedBeforeIt(t *testing.T) {
	g := &gate{}
	e := newEnv(t, envOptions{concurrency: 1, middleware: g.wrap})
	e.createRelease("target")
	e.waitApplied("target", "False", v1.ReasonWaitingForSync)
	before := e.reconciles("target")

	g.close()
	e.createRelease("blocker")
	e.eventually("the worker to hold blocker", func() (bool, string) {
		return slices.Contains(g.order(), "blocker"), fmt.Sprintf("started: %v", g.order())
	})
	queued := []string{"queued-0", "queued-1", "queued-2", "queued-3", "queued-4"}
	for _, name := range queued {
		e.createRelease(name)
	}
	synced := e.sync("target", false)
	// The controller's cache holds the /sync: its event is on its way to the queue,
	// behind the five creates.
	e.eventually("the controller's cache to hold the /sync", func() (bool, string) {
		rel := &v1.Release{}
		if err := e.reconciler.client.Get(e.ctx, client.ObjectKeyFromObject(synced), rel); err != nil {
			return false, err.Error()
		}
		return syncRequestedAt(rel) == syncRequestedAt(synced), syncRequestedAt(rel)
	})
	g.open()

	e.waitApplied("target", "True", v1.ReasonApplied)
	e.eventually("every queued Release reconciled", func() (bool, string) {
		for _, name := range queued {
			if e.reconciles(name) == 0 {
				return false, name + " not yet"
			}
		}
		return e.reconciles("target") > before, "target not reconciled again"
	})
	order := g.order()
	after := order[slices.Index(order, "blocker")+1:]
	at := slices.Index(after, "target")
	if at < 0 || at > 1 {
		t.Fatalf("the reconciles after blocker started in the order %v: the /sync of target is not among the first two, it waited behind the queued Releases", after)
	}
}
