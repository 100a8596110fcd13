package main

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/observer/health"
)

// opener opens a watch from resourceVersion rv ("" the current state).
type opener func(ctx context.Context, rv string) (watch.Interface, error)

// keepWatching hands every event of wi to handle with the time it arrived, and
// reopens the watch from the last resourceVersion seen when it closes (at most 1,000
// times, a second apart after an error), until ctx ends. It counts each reopening in
// reopened as it happens, so that the bench can read the count while it still watches.
func keepWatching(ctx context.Context, what string, open opener, wi watch.Interface, handle func(time.Time, watch.EventType, runtime.Object), reopened *atomic.Int64) {
	rv := ""
	for restarts := 0; restarts < 1000 && ctx.Err() == nil; restarts++ {
		if wi == nil {
			reopened.Add(1)
			var err error
			if wi, err = open(ctx, rv); err != nil {
				fmt.Fprintf(os.Stderr, "watch %s: %v\n", what, err)
				select {
				case <-ctx.Done():
				case <-time.After(time.Second):
				}
				continue
			}
		}
		for ev := range wi.ResultChan() {
			if ev.Type == watch.Error {
				if ctx.Err() != nil {
					break // the bench stops its watches
				}
				fmt.Fprintf(os.Stderr, "watch %s: error event %v\n", what, ev.Object)
				rv = "" // start again from the current state
				break
			}
			if ev.Type == watch.Bookmark {
				continue
			}
			now := time.Now()
			if a, err := meta.Accessor(ev.Object); err == nil {
				rv = a.GetResourceVersion()
			}
			handle(now, ev.Type, ev.Object)
		}
		wi.Stop()
		wi = nil
	}
}

// syncChange is a value of sync-requested-at and when the bench first saw it.
type syncChange struct {
	at    time.Time
	value string
}

// track is what the bench saw of one Release.
type track struct {
	synced      time.Time    // the person's /sync answered
	personValue string       // the sync-requested-at it wrote
	healthy     time.Time    // its wave-0 Deployment first seen kstatus Current
	waiting     time.Time    // first seen Applied=False/WaitingForSyncWave
	ready       time.Time    // first seen Applied=True and Healthy=True
	changes     []syncChange // sync-requested-at as it changed
}

// tracker is every Release's track and the event times of the watched resources.
type tracker struct {
	mu     sync.Mutex
	tracks map[string]*track
	ready  int
	events map[string][]time.Time // "releases" | "releaseinventories" → event times
}

func newTracker() *tracker {
	return &tracker{tracks: map[string]*track{}, events: map[string][]time.Time{}}
}

// get is name's track; the caller holds mu.
func (t *tracker) get(name string) *track {
	tr, ok := t.tracks[name]
	if !ok {
		tr = &track{}
		t.tracks[name] = tr
	}
	return tr
}

func (t *tracker) readyCount() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.ready
}

func (t *tracker) onRelease(now time.Time, _ watch.EventType, obj runtime.Object) {
	r, ok := obj.(*convoyv1alpha1.Release)
	if !ok {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.events["releases"] = append(t.events["releases"], now)
	tr := t.get(r.Name)
	if v := r.Annotations[convoyv1alpha1.AnnotationSyncRequestedAt]; v != "" && (len(tr.changes) == 0 || tr.changes[len(tr.changes)-1].value != v) {
		tr.changes = append(tr.changes, syncChange{now, v})
	}
	applied := meta.FindStatusCondition(r.Status.Conditions, convoyv1alpha1.ConditionApplied)
	healthy := meta.FindStatusCondition(r.Status.Conditions, convoyv1alpha1.ConditionHealthy)
	if applied != nil && applied.Reason == convoyv1alpha1.ReasonWaitingForSyncWave && tr.waiting.IsZero() {
		tr.waiting = now
	}
	if applied != nil && applied.Status == metav1.ConditionTrue && healthy != nil && healthy.Status == metav1.ConditionTrue && tr.ready.IsZero() {
		tr.ready = now
		t.ready++
	}
}

func (t *tracker) onInventory(now time.Time, _ watch.EventType, _ runtime.Object) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.events["releaseinventories"] = append(t.events["releaseinventories"], now)
}

// onDeployment records when a Release's Deployment is first Healthy by the observer's
// own rule (health.ObjectStatus: kstatus Current).
func (t *tracker) onDeployment(now time.Time, typ watch.EventType, obj runtime.Object) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok || typ == watch.Deleted {
		return
	}
	if health.ObjectStatus(u).Health != convoyv1alpha1.HealthHealthy {
		return
	}
	name := u.GetLabels()[convoyv1alpha1.LabelReleaseName]
	if name == "" {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if tr := t.get(name); tr.healthy.IsZero() {
		tr.healthy = now
	}
}

// since counts the events of resource after from.
func (t *tracker) since(resource string, from time.Time) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, at := range t.events[resource] {
		if at.After(from) {
			n++
		}
	}
	return n
}

// latencies are the per-Release figures, in the order of the Releases.
type latencies struct {
	healthyToSync  []time.Duration // Deployment Current → the observer's wave /sync
	triggerToSync  []time.Duration // max(Current, WaitingForSyncWave) → that /sync
	syncToReady    []time.Duration // the person's /sync → Ready
	syncToHealthy  []time.Duration // the person's /sync → wave 0 Healthy
	waveSyncReady  []time.Duration // the observer's wave /sync → Ready
	firstSync      time.Time
	lastReady      time.Time
	observerSyncs  map[int]int // observer /syncs seen per Release → Releases
	noWaveSync     int         // Releases without an observer /sync after healthy
	early          int         // … of which had one before (the bench's watch lagged)
	notHealthySeen int
}

func (t *tracker) latencies() latencies {
	t.mu.Lock()
	defer t.mu.Unlock()
	l := latencies{observerSyncs: map[int]int{}}
	for _, tr := range t.tracks {
		if tr.synced.IsZero() {
			continue
		}
		if l.firstSync.IsZero() || tr.synced.Before(l.firstSync) {
			l.firstSync = tr.synced
		}
		if !tr.ready.IsZero() {
			l.syncToReady = append(l.syncToReady, tr.ready.Sub(tr.synced))
			if tr.ready.After(l.lastReady) {
				l.lastReady = tr.ready
			}
		}
		// The observer's /syncs: every value after the person's (they strictly increase).
		var obs []syncChange
		for _, c := range tr.changes {
			if c.value > tr.personValue {
				obs = append(obs, c)
			}
		}
		l.observerSyncs[len(obs)]++
		if tr.healthy.IsZero() {
			l.notHealthySeen++
			continue
		}
		l.syncToHealthy = append(l.syncToHealthy, tr.healthy.Sub(tr.synced))
		found := false
		for _, c := range obs {
			if !c.at.Before(tr.healthy) {
				l.healthyToSync = append(l.healthyToSync, c.at.Sub(tr.healthy))
				from := tr.healthy
				if tr.waiting.After(from) {
					from = tr.waiting
				}
				l.triggerToSync = append(l.triggerToSync, c.at.Sub(from))
				if !tr.ready.IsZero() {
					l.waveSyncReady = append(l.waveSyncReady, tr.ready.Sub(c.at))
				}
				found = true
				break
			}
		}
		if !found {
			l.noWaveSync++
			if len(obs) > 0 {
				l.early++
			}
		}
	}
	return l
}
