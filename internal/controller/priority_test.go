package controller

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// SP-26 — seed: "The annotation convoy.kumodo.io/sync-requested-at changes." — and
// SP-29 — seed: "The observer writes new health data to the ReleaseInventory." — start
// a reconcile promptly, also under a mass create.
// Work on a Release under way goes ahead of the Releases created before it (decision
// 0128: under a mass create the first /sync waited 15 minutes in the work queue,
// first come, first served). One worker is held on a Release while five more are
// created behind it; then a sixth Release, reconciled before, gets a trigger: when the
// worker is let go, the sixth is reconciled next (or, if its event reached the queue a
// moment after the worker took the next Release, second), not after the five.
func TestWorkUnderWayGoesAheadOfTheReleasesCreatedBeforeIt(t *testing.T) {
	cases := map[string]struct {
		// opts make the sixth Release; ready is the state to wait for before the test.
		opts  []releaseOption
		ready func(e *env)
		// trigger starts its reconcile; it returns what the controller's cache must hold
		// for the trigger's event to be on its way to the queue.
		trigger func(e *env) (client.Object, func(client.Object) bool)
		// done says the trigger's reconcile happened.
		done func(e *env) (bool, string)
	}{
		"SP-26 a /sync (priority 100)": {
			ready: func(e *env) { e.waitApplied("target", "False", v1.ReasonWaitingForSync) },
			trigger: func(e *env) (client.Object, func(client.Object) bool) {
				synced := e.sync("target", false)
				return &v1.Release{}, func(o client.Object) bool { return syncRequestedAt(o.(*v1.Release)) == syncRequestedAt(synced) }
			},
			done: func(e *env) (bool, string) {
				c := apimeta.FindStatusCondition(e.release("target").Status.Conditions, v1.ConditionApplied)
				return c != nil && c.Reason == v1.ReasonApplied, fmt.Sprintf("Applied %+v", c)
			},
		},
		"SP-29 new health data in the ReleaseInventory (priority 0, new Releases -50)": {
			opts:  []releaseOption{automatic()},
			ready: func(e *env) { e.waitApplied("target", "True", v1.ReasonApplied) },
			trigger: func(e *env) (client.Object, func(client.Object) bool) {
				e.writeHealthy("target", e.release("target").Status.LastSuccessful.RenderRef)
				return &v1.ReleaseInventory{}, func(o client.Object) bool { return o.(*v1.ReleaseInventory).Status.Health == v1.HealthHealthy }
			},
			done: func(e *env) (bool, string) {
				c := apimeta.FindStatusCondition(e.release("target").Status.Conditions, v1.ConditionHealthy)
				return c != nil && c.Status == metav1.ConditionTrue, fmt.Sprintf("Healthy %+v", c)
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := &gate{}
			// No delay for health data: the test is about the order of the ready items
			// (TestSP29_TheObserversSyncJoinsTheReconcileOfItsHealthData is about the delay).
			e := newEnv(t, envOptions{concurrency: 1, middleware: g.wrap, healthDataDelay: -1})
			e.createRelease("target", tc.opts...)
			tc.ready(e)
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
			obj, holds := tc.trigger(e)
			// The controller's cache holds the trigger: its event is on its way to the
			// queue, behind the five creates.
			e.eventually("the controller's cache to hold the trigger", func() (bool, string) {
				if err := e.reconciler.client.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: "target"}, obj); err != nil {
					return false, err.Error()
				}
				return holds(obj), "not yet"
			})
			g.open()

			e.eventually("the trigger's reconcile", func() (bool, string) { return tc.done(e) })
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
			if at := slices.Index(after, "target"); at < 0 || at > 1 {
				t.Fatalf("the reconciles after blocker started in the order %v: target is not among the first two, it waited behind the Releases created before its trigger", after)
			}
		})
	}
}

// SP-29 — seed: "The observer writes new health data to the ReleaseInventory." — and
// SP-26 — "The annotation convoy.kumodo.io/sync-requested-at changes." — each start a
// reconcile; in automatic mode the observer writes its health data and then sends its
// /sync (observer/health/doc.go), and the two make one reconcile: the health data's
// reconcile waits in the queue for Options.HealthDataDelay, and the /sync, arriving
// within it, makes it ready at once (decision 0139: each reconcile of an automatic Release
// is a dry run of every object). The delay is 5 s here, so that the test does not
// depend on how fast the machine is; the default is DefaultHealthDataDelay.
func TestSP29_TheObserversSyncJoinsTheReconcileOfItsHealthData(t *testing.T) {
	const delay = 5 * time.Second
	e := newEnv(t, envOptions{concurrency: 1, healthDataDelay: delay})
	e.createRelease("web", automatic())
	rel := e.waitApplied("web", "True", v1.ReasonApplied)
	e.eventually("the first apply's reconciles to end", func() (bool, string) {
		r, ok := e.lastResult("web")
		return ok && r.err == nil && e.release("web").Status.ObservedGeneration == rel.Generation, "not yet"
	})
	before := e.reconciles("web")

	e.writeHealthy("web", rel.Status.LastSuccessful.RenderRef)
	written := time.Now()
	e.sync("web", false)

	e.eventually("Healthy=True", func() (bool, string) {
		c := apimeta.FindStatusCondition(e.release("web").Status.Conditions, v1.ConditionHealthy)
		return c != nil && c.Status == metav1.ConditionTrue, fmt.Sprintf("Healthy %+v", c)
	})
	if waited := time.Since(written); waited >= delay {
		t.Fatalf("Healthy came %v after the health data: the /sync did not make its reconcile ready", waited)
	}
	// The count grows when a reconcile returns, after its status write: wait for it.
	e.eventually("the reconcile that wrote Healthy to end", func() (bool, string) {
		n := e.reconciles("web") - before
		return n >= 1, fmt.Sprintf("%d reconciles", n)
	})
	// Past the delay: the health data's reconcile was the /sync's, not one more.
	e.consistently("one reconcile for the health data and the /sync", delay+time.Second, func() (bool, string) {
		n := e.reconciles("web") - before
		return n == 1, fmt.Sprintf("%d reconciles, want 1", n)
	})
}
