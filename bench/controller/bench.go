package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/bench/internal/benchenv"
)

const namespace = "bench-controller"

// metricsSnap is every metrics text at one moment.
type metricsSnap struct {
	kube, convoy, ctl string
}

// reqDelta is the requests between two snapshots, by label groups.
type reqDelta struct {
	ctl        map[string]float64 // controller's client: method code
	kube       map[string]float64 // kube-apiserver: verb group resource subresource code
	convoy     map[string]float64 // convoy apiserver: verb resource subresource code
	reconciles map[string]float64 // controller_runtime_reconcile_total: result
	// means are mean durations of the controller's histograms (sum/count deltas):
	// reconcile, time in the work queue, client request latency by verb.
	means map[string]benchenv.Mean
}

func diff(a, b metricsSnap) reqDelta {
	kk := []string{"verb", "dry_run", "resource", "subresource", "code"}
	means := map[string]benchenv.Mean{}
	for k, v := range benchenv.HistMeans(a.ctl, b.ctl, "controller_runtime_reconcile_time_seconds", "controller") {
		means["reconcile "+k] = v
	}
	for k, v := range benchenv.HistMeans(a.ctl, b.ctl, "workqueue_queue_duration_seconds", "name") {
		means["queue wait "+k] = v
	}
	for k, v := range benchenv.HistMeans(a.ctl, b.ctl, "convoy_release_reconcile_duration_seconds", "reason") {
		means["convoy reconcile "+k] = v
	}
	for k, v := range benchenv.HistMeans(a.ctl, b.ctl, "rest_client_request_duration_seconds", "verb") {
		means["client request "+k] = v
	}
	return reqDelta{
		means:      means,
		ctl:        benchenv.Delta(benchenv.Counts(a.ctl, "rest_client_requests_total", "method", "code"), benchenv.Counts(b.ctl, "rest_client_requests_total", "method", "code")),
		kube:       benchenv.Delta(benchenv.Counts(a.kube, "apiserver_request_total", kk...), benchenv.Counts(b.kube, "apiserver_request_total", kk...)),
		convoy:     benchenv.Delta(benchenv.Counts(a.convoy, "apiserver_request_total", kk...), benchenv.Counts(b.convoy, "apiserver_request_total", kk...)),
		reconciles: benchenv.Delta(benchenv.Counts(a.ctl, "controller_runtime_reconcile_total", "controller", "result"), benchenv.Counts(b.ctl, "controller_runtime_reconcile_total", "controller", "result")),
	}
}

// watchLog records every watch event of one resource in the namespace.
type watchLog struct {
	resource string
	mu       sync.Mutex
	events   []watchEvent
	applied  map[string]time.Time // Release name → first seen Applied=True
	restarts int
}

type watchEvent struct {
	at  time.Time
	typ watch.EventType
}

func (w *watchLog) appliedCount() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.applied)
}

// since counts the events after t, by type.
func (w *watchLog) since(t time.Time) map[string]float64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[string]float64{}
	for _, ev := range w.events {
		if ev.at.After(t) {
			out[string(ev.typ)]++
		}
	}
	return out
}

// watchResource watches resource in the namespace from rv until ctx ends; a closed
// watch is reopened from the last resourceVersion seen (at most 1,000 times).
func (e *env) watchResource(ctx context.Context, w *watchLog, rv string) {
	for i := 0; i < 1000 && ctx.Err() == nil; i++ {
		wi, err := e.Convoy.Get().Namespace(namespace).Resource(w.resource).
			Param("watch", "true").Param("resourceVersion", rv).Param("allowWatchBookmarks", "false").
			Timeout(10 * time.Minute).Watch(ctx)
		if err != nil {
			fmt.Fprintf(os.Stderr, "watch %s: %v\n", w.resource, err)
			time.Sleep(time.Second)
			continue
		}
		for ev := range wi.ResultChan() {
			if ev.Type == watch.Error {
				fmt.Fprintf(os.Stderr, "watch %s: error event %v\n", w.resource, ev.Object)
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
			w.mu.Lock()
			w.events = append(w.events, watchEvent{now, ev.Type})
			if r, ok := ev.Object.(*convoyv1alpha1.Release); ok {
				if c := meta.FindStatusCondition(r.Status.Conditions, convoyv1alpha1.ConditionApplied); c != nil && c.Status == metav1.ConditionTrue {
					if _, seen := w.applied[r.Name]; !seen {
						w.applied[r.Name] = now
					}
				}
			}
			w.mu.Unlock()
		}
		wi.Stop()
		w.mu.Lock()
		w.restarts++
		w.mu.Unlock()
	}
}

// result is the figures of one N.
type result struct {
	n                int
	createElapsed    time.Duration
	createFailures   int64
	applied          int
	toApplied        time.Duration // first create → last Applied=True
	p50, p90, maxLat time.Duration // create → Applied=True, per Release
	apply            reqDelta      // first create → all Applied
	steady           reqDelta      // the steady window
	steadyDur        time.Duration
	steadyEvents     map[string]map[string]float64 // resource → type → count
	cpuApply         map[string]float64
	procsEnd         map[string]benchenv.ProcStat
	ctlRSSApplied    benchenv.ProcStat
	loadBefore       string
	loadAfter        string
	watchRestarts    int
	kubeSeesReleases bool
}

// runOne measures n Releases on be, a fresh environment with the namespace
// (benchenv.Bench.Measure).
func (cfg *config) runOne(ctx context.Context, be *benchenv.Env, _ string, n int) (*result, error) {
	e := &env{be}
	res := &result{n: n, loadBefore: benchenv.LoadAvg(), steadyEvents: map[string]map[string]float64{}}

	wctx, wcancel := context.WithCancel(ctx)
	defer wcancel()
	logs := map[string]*watchLog{}
	for _, resource := range []string{"releases", "releaseinventories"} {
		rv, err := e.ListResourceVersion(ctx, namespace, resource)
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", resource, err)
		}
		w := &watchLog{resource: resource, applied: map[string]time.Time{}}
		logs[resource] = w
		go e.watchResource(wctx, w, rv)
	}
	time.Sleep(time.Second) // let the watches open

	m0 := e.metricsNow(ctx)
	p0 := e.Snapshot()

	// Create N Releases from createConcurrency clients.
	fmt.Fprintf(os.Stderr, "Creating %d Releases from %d clients...\n", n, cfg.CreateConcurrency)
	name := func(i int) string { return fmt.Sprintf("podinfo-%05d", i) }
	created := make([]time.Time, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range cfg.CreateConcurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				for try := 0; try < 5; try++ {
					rctx, cancel := context.WithTimeout(ctx, time.Minute)
					created[i] = time.Now()
					err := e.Convoy.Post().Namespace(namespace).Resource("releases").Body(benchenv.PodinfoRelease(namespace, name(i), e.Charts.URL)).Do(rctx).Error()
					cancel()
					if err == nil || strings.Contains(err.Error(), "already exists") {
						break
					}
					res.createFailures++
					fmt.Fprintf(os.Stderr, "create %s: %v\n", name(i), err)
					time.Sleep(time.Second)
				}
			}
		}()
	}
	wg.Wait()
	res.createElapsed = time.Since(start)
	fmt.Fprintf(os.Stderr, "  created in %s\n", res.createElapsed.Round(time.Millisecond))

	// Wait for every Applied=True.
	rl := logs["releases"]
	deadline := time.Now().Add(cfg.Timeout)
	lastPrint := time.Now()
	for rl.appliedCount() < n && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(100 * time.Millisecond)
		if time.Since(lastPrint) > 10*time.Second {
			lastPrint = time.Now()
			fmt.Fprintf(os.Stderr, "  %s: %d/%d Applied\n", time.Since(start).Round(time.Second), rl.appliedCount(), n)
		}
	}
	res.applied = rl.appliedCount()
	rl.mu.Lock()
	var last time.Time
	var lats []time.Duration
	for nm, t := range rl.applied {
		if t.After(last) {
			last = t
		}
		var i int
		if _, err := fmt.Sscanf(nm, "podinfo-%05d", &i); err == nil && i < n {
			lats = append(lats, t.Sub(created[i]))
		}
	}
	rl.mu.Unlock()
	res.toApplied = last.Sub(start)
	if len(lats) > 0 {
		slices.Sort(lats)
		res.p50, res.p90, res.maxLat = lats[len(lats)/2], lats[len(lats)*9/10], lats[len(lats)-1]
	}
	m1 := e.metricsNow(ctx)
	p1 := e.Snapshot()
	res.apply = diff(m0, m1)
	res.cpuApply = benchenv.CPUDelta(p0, p1)
	res.ctlRSSApplied = p1["convoy-controller"]
	res.kubeSeesReleases = benchenv.SumWhere(res.apply.kube, func(k string) bool { return strings.Contains(k, " releases") }) > 0
	fmt.Fprintf(os.Stderr, "  %d/%d Applied after %s\n", res.applied, n, res.toApplied.Round(time.Millisecond))
	if res.applied < n {
		res.loadAfter = benchenv.LoadAvg()
		res.procsEnd = p1
		return res, fmt.Errorf("only %d of %d Releases Applied within %s (controller log: %s/convoy-controller.log)", res.applied, n, cfg.Timeout, e.Cluster.LogDir())
	}

	// The steady window: nothing changes; the informer resyncs at least once.
	fmt.Fprintf(os.Stderr, "Steady window of %s (controller --resync=%s)...\n", cfg.Steady, cfg.Resync)
	time.Sleep(2 * time.Second) // the last status writes of the apply phase land
	t0 := time.Now()
	m2 := e.metricsNow(ctx)
	select {
	case <-ctx.Done():
		return res, ctx.Err()
	case <-time.After(cfg.Steady):
	}
	m3 := e.metricsNow(ctx)
	res.steadyDur = time.Since(t0)
	res.steady = diff(m2, m3)
	for r, w := range logs {
		res.steadyEvents[r] = w.since(t0)
		res.watchRestarts += w.restarts
	}
	res.procsEnd = e.Snapshot()
	res.loadAfter = benchenv.LoadAvg()
	return res, nil
}
