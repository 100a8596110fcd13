package controller

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// The watch predicates, as pure functions of the objects of an event
// (docs/sync-policy.md, "What starts a reconcile"). Each has a table test.

// releaseUpdateTriggers says whether an update of a Release starts a reconcile of that
// Release:
//
//   - an informer resync: old and new have the same resourceVersion (SP-27);
//   - a request on the Release (releaseUpdateRequested).
//
// Everything else passes none of them: a status write (SP-31), a change of mutations
// or lifecycle through the main resource (SP-32, used at the next periodic reconcile),
// labels, other annotations and the finalizer the controller adds.
func releaseUpdateTriggers(old, new *v1.Release) bool {
	return isResync(old, new) || releaseUpdateRequested(old, new)
}

// isResync says whether an update is an informer resync: the same resourceVersion.
func isResync(old, new *v1.Release) bool {
	return old != nil && new != nil && old.ResourceVersion == new.ResourceVersion
}

// releaseUpdateRequested says whether an update of a Release asks for its reconcile:
//
//   - a set deletion timestamp, so the finalizer is handled;
//   - a generation change, which only a spec change makes (SP-25);
//   - a change of convoy.kumodo.io/sync-requested-at (SP-26), which /sync and every
//     write through /pin, /mutations and /lifecycle make (SP-33), and the observer's
//     /sync (SP-34).
//
// These go ahead of the rest of the work queue (priorityRequested).
func releaseUpdateRequested(old, new *v1.Release) bool {
	switch {
	case old == nil || new == nil || isResync(old, new):
		return false
	case new.DeletionTimestamp != nil:
		return true
	case old.Generation != new.Generation:
		return true
	}
	return syncRequestedAt(old) != syncRequestedAt(new)
}

func syncRequestedAt(rel *v1.Release) string {
	return rel.Annotations[v1.AnnotationSyncRequestedAt]
}

// The work queue priorities (controller-runtime's priority queue: the highest first,
// and first come, first served within one; docs/decisions/0128-work-queue-priorities.md):
//
//   - priorityRequested (100): a request on the Release (releaseUpdateRequested): a
//     /sync or an edit is handled within a reconcile or two, not after every Release
//     queued before it;
//   - 0: the work of Releases under way: the observer's health data (SP-29), the
//     cluster waves (SP-30), scheduled requeues;
//   - priorityCreated (-50): a new Release (a create outside the informer's initial
//     list): Releases under way become Ready before new ones start;
//   - handler.LowPriority (-100): the initial list and the resyncs (SP-27).
const (
	priorityRequested = 100
	priorityCreated   = -50
)

// createPriority is the work queue priority of a Release's create event.
func createPriority(inInitialList bool) int {
	if inInitialList {
		return handler.LowPriority
	}
	return priorityCreated
}

// releasePredicate is the predicate of the Release watch (For): the resyncs, every
// delete (the reconcile only forgets the Release's
// in-memory state then) and generic events. Creates and requested updates come
// through releasePriorityPredicate and priorityHandler, at their priorities.
func releasePredicate() predicate.Predicate {
	return predicate.Funcs{
		CreateFunc: func(event.CreateEvent) bool { return false },
		UpdateFunc: func(e event.UpdateEvent) bool {
			old, _ := e.ObjectOld.(*v1.Release)
			new, _ := e.ObjectNew.(*v1.Release)
			return isResync(old, new)
		},
		DeleteFunc:  func(event.DeleteEvent) bool { return true },
		GenericFunc: func(event.GenericEvent) bool { return true },
	}
}

// releasePriorityPredicate lets through every create (SP-24) and the updates of
// releaseUpdateRequested.
func releasePriorityPredicate() predicate.Predicate {
	return predicate.Funcs{
		CreateFunc: func(event.CreateEvent) bool { return true },
		UpdateFunc: func(e event.UpdateEvent) bool {
			old, _ := e.ObjectOld.(*v1.Release)
			new, _ := e.ObjectNew.(*v1.Release)
			return releaseUpdateRequested(old, new)
		},
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}

// priorityHandler enqueues the Release of a create at createPriority and of an update
// at priorityRequested.
func priorityHandler() handler.EventHandler {
	add := func(q workqueue.TypedRateLimitingInterface[reconcile.Request], obj client.Object, priority int) {
		req := reconcile.Request{NamespacedName: client.ObjectKeyFromObject(obj)}
		if pq, ok := q.(priorityqueue.PriorityQueue[reconcile.Request]); ok {
			pq.AddWithOpts(priorityqueue.AddOpts{Priority: ptr.To(priority)}, req)
			return
		}
		q.Add(req)
	}
	return handler.Funcs{
		CreateFunc: func(_ context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			add(q, e.Object, createPriority(e.IsInInitialList))
		},
		UpdateFunc: func(_ context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			add(q, e.ObjectNew, priorityRequested)
		},
	}
}

// DefaultHealthDataDelay is how long the reconcile for new health data (SP-29) waits
// in the work queue. In automatic mode the observer writes the health data and then
// sends /sync (observer/health/doc.go); the /sync, arriving within the delay, joins
// the same reconcile instead of starting one more (decision 0139: a reconcile of an
// automatic Release is a dry run of each of its objects, and a first apply took three
// where two do). Health is reported half a second later.
const DefaultHealthDataDelay = 500 * time.Millisecond

// inventoryHandler enqueues the Release of a ReleaseInventory (inventoryRelease) at
// priority 0 once delay has passed; an event of the Release meanwhile (a /sync at
// priorityRequested) makes it ready at once, at the higher priority.
func inventoryHandler(delay time.Duration) handler.EventHandler {
	add := func(q workqueue.TypedRateLimitingInterface[reconcile.Request], obj client.Object, priority int) {
		for _, req := range inventoryRelease(context.Background(), obj) {
			if pq, ok := q.(priorityqueue.PriorityQueue[reconcile.Request]); ok {
				pq.AddWithOpts(priorityqueue.AddOpts{After: delay, Priority: ptr.To(priority)}, req)
				continue
			}
			q.AddAfter(req, delay)
		}
	}
	return handler.Funcs{
		// Creates pass the predicate only for an inventory being deleted: at start, in
		// the initial list, at the initial list's priority.
		CreateFunc: func(_ context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			priority := 0
			if e.IsInInitialList {
				priority = handler.LowPriority
			}
			add(q, e.Object, priority)
		},
		UpdateFunc: func(_ context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			add(q, e.ObjectNew, 0)
		},
	}
}

// inventoryUpdateTriggers says whether an update of a ReleaseInventory starts a
// reconcile of its Release:
//
//   - its status changed: new health data from the observer (SP-29);
//   - its deletion started: if the Release is gone, the reconcile lets go of the
//     inventory's finalizer.
//
// The controller's own writes of the object list, and resyncs, pass neither; nor does
// a status that differs only in the objects' messages and assessedAt (healthData):
// nothing the controller decides or writes reads them, and a Deployment on its way to
// Available changes its message once or twice without changing its health (decision 0132:
// each such write cost a reconcile of the Release, a dry run of each of its objects).
func inventoryUpdateTriggers(old, new *v1.ReleaseInventory) bool {
	if old == nil || new == nil {
		return false
	}
	if old.DeletionTimestamp == nil && new.DeletionTimestamp != nil {
		return true
	}
	return !equality.Semantic.DeepEqual(healthData(old.Status), healthData(new.Status))
}

// healthData is the part of an inventory's status that the controller reads: st
// without the objects' messages and the time of the assessment.
func healthData(st v1.ReleaseInventoryStatus) v1.ReleaseInventoryStatus {
	st.AssessedAt = nil
	if len(st.Objects) > 0 {
		objects := make([]v1.ObjectHealth, len(st.Objects))
		for i, o := range st.Objects {
			o.Message = ""
			objects[i] = o
		}
		st.Objects = objects
	}
	return st
}

// inventoryPredicate lets through the updates of inventoryUpdateTriggers, and the first
// sight of an inventory whose deletion has started (at the controller's start, or when
// its informer sees it only then): the controller creates and deletes inventories
// itself, but an inventory that is being deleted may wait for its finalizer.
func inventoryPredicate() predicate.Predicate {
	return predicate.Funcs{
		CreateFunc: func(e event.CreateEvent) bool { return e.Object.GetDeletionTimestamp() != nil },
		UpdateFunc: func(e event.UpdateEvent) bool {
			old, _ := e.ObjectOld.(*v1.ReleaseInventory)
			new, _ := e.ObjectNew.(*v1.ReleaseInventory)
			return inventoryUpdateTriggers(old, new)
		},
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}

// clusterWaveConditionChanged says whether an update of a Release changes the status of
// its Applied or Healthy condition, which may release (or hold) the Releases of higher
// cluster waves on the same Cluster (SP-30). A change of reason or message alone does
// not count; nor does a resync.
//
// So does a change of waveReady: an edit of a ready Release, and the status written
// for its new generation. A move of the Release to another Cluster or cluster wave counts too: the Releases it
// held where it was may go on (decision 0091); clusterWaveHandler enqueues the
// higher waves of both places.
func clusterWaveConditionChanged(old, new *v1.Release) bool {
	if old == nil || new == nil {
		return false
	}
	if clusterKey(old) != clusterKey(new) || old.Spec.ClusterWave != new.Spec.ClusterWave {
		return true
	}
	for _, t := range []string{v1.ConditionApplied, v1.ConditionHealthy} {
		if conditionStatus(old, t) != conditionStatus(new, t) {
			return true
		}
	}
	// An edit of a ready Release holds the higher waves (waveReady), and the status
	// of its new generation releases them, even when no condition's status changed.
	return waveReady(old) != waveReady(new)
}

func conditionStatus(rel *v1.Release, conditionType string) string {
	if c := apimeta.FindStatusCondition(rel.Status.Conditions, conditionType); c != nil {
		return string(c.Status)
	}
	return ""
}

// clusterWavePredicate is the predicate of the watch that enqueues the higher cluster
// waves: an Applied or Healthy status change, and the deletion of a Release (a lower
// wave that is gone no longer holds anyone).
func clusterWavePredicate() predicate.Predicate {
	return predicate.Funcs{
		CreateFunc: func(event.CreateEvent) bool { return false },
		UpdateFunc: func(e event.UpdateEvent) bool {
			old, _ := e.ObjectOld.(*v1.Release)
			new, _ := e.ObjectNew.(*v1.Release)
			return clusterWaveConditionChanged(old, new)
		},
		DeleteFunc:  func(event.DeleteEvent) bool { return true },
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}
