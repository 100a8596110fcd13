package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/bench/internal/benchenv"
)

const namespace = "bench-observer"

// quiet is how long the observer must send nothing before the steady window starts.
const quiet = 10 * time.Second

func newRelease(name, repoURL string, replicas int) (*convoyv1alpha1.Release, error) {
	values, err := json.Marshal(map[string]any{"replicas": replicas})
	if err != nil {
		return nil, err
	}
	return &convoyv1alpha1.Release{
		TypeMeta:   metav1.TypeMeta{APIVersion: convoyv1alpha1.SchemeGroupVersion.String(), Kind: "Release"},
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: convoyv1alpha1.ReleaseSpec{
			Chart:  convoyv1alpha1.ChartSource{Repository: repoURL, Name: "waves", Version: "0.1.0"},
			Values: &runtime.RawExtension{Raw: values},
			// Manual mode: a render is applied on /sync only.
		},
	}, nil
}

// result is the figures of one N.
type result struct {
	n             int
	createElapsed time.Duration
	failedTries   int64
	ready         int
	lat           latencies
	obsReady      benchenv.ProcStat // the observer when every Release is Ready
	obsRSSMax     int64             // largest VmRSS sampled while waiting (KiB)
	obsEnd        benchenv.ProcStat // after the steady window
	cpuAssess     map[string]float64
	cpuSteady     map[string]float64
	assess        obsCounters
	convoyAssess  map[string]float64
	ctlAssess     ctlFigures
	ctlSteady     ctlFigures
	quietAfter    time.Duration // all Ready → the observer quiet
	steadyDur     time.Duration
	steadyRSS     []int64 // the observer's VmRSS every 10 s of the steady window (KiB)
	steady        obsCounters
	convoySteady  map[string]float64
	steadyEvents  map[string]int
	loadBefore    string
	loadAfter     string
	watchRestarts int64
}

// runOne starts convoy observer from bin in be, a fresh environment with the
// namespace, and measures n Releases (benchenv.Bench.Measure).
func (cfg *config) runOne(ctx context.Context, be *benchenv.Env, bin string, n int) (*result, error) {
	e, err := startObserver(ctx, cfg, be, bin)
	if err != nil {
		return nil, err
	}
	res := &result{n: n, loadBefore: benchenv.LoadAvg()}
	tr := newTracker()

	// The bench's watches, open before the first create (Watch returns once the
	// server answered).
	dyn, err := dynamic.NewForConfig(e.Admin)
	if err != nil {
		return nil, err
	}
	deployments := dyn.Resource(schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}).Namespace(namespace)
	convoyWatch := func(resource string) opener {
		return func(ctx context.Context, rv string) (watch.Interface, error) {
			return e.Convoy.Get().Namespace(namespace).Resource(resource).
				Param("watch", "true").Param("resourceVersion", rv).Param("allowWatchBookmarks", "false").
				Timeout(30 * time.Minute).Watch(ctx)
		}
	}
	watches := []struct {
		what   string
		open   opener
		handle func(time.Time, watch.EventType, runtime.Object)
	}{
		{"releases", convoyWatch("releases"), tr.onRelease},
		{"releaseinventories", convoyWatch("releaseinventories"), tr.onInventory},
		{"deployments", func(ctx context.Context, rv string) (watch.Interface, error) {
			return deployments.Watch(ctx, metav1.ListOptions{ResourceVersion: rv, TimeoutSeconds: ptrInt64(1800)})
		}, tr.onDeployment},
	}
	wctx, wcancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var restarts atomic.Int64
	defer func() {
		wcancel()
		wg.Wait()
	}()
	for _, w := range watches {
		wi, err := w.open(wctx, "")
		if err != nil {
			return nil, fmt.Errorf("watch %s: %w", w.what, err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			keepWatching(wctx, w.what, w.open, wi, w.handle, &restarts)
		}()
	}

	m0 := e.metricsNow(ctx)
	p0 := e.Snapshot()

	// Create the N Releases and send each one person's /sync, from createConcurrency clients.
	logf("Creating %d Releases and sending one /sync each, from %d clients...", n, cfg.CreateConcurrency)
	var next, failed atomic.Int64
	var cg sync.WaitGroup
	start := time.Now()
	for range cfg.CreateConcurrency {
		cg.Add(1)
		go func() {
			defer cg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				if err := createAndSync(ctx, e, tr, fmt.Sprintf("app-%05d", i), cfg.replicas, &failed); err != nil {
					logf("%v", err)
				}
			}
		}()
	}
	cg.Wait()
	res.createElapsed, res.failedTries = time.Since(start), failed.Load()
	logf("  created and synced in %s", res.createElapsed.Round(time.Millisecond))

	// Wait for every Release Ready (Applied and Healthy), sampling the observer's RSS.
	obsPID := e.PID("convoy-observer")
	deadline := time.Now().Add(cfg.Timeout)
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	lastPrint := time.Now()
	for tr.readyCount() < n && time.Now().Before(deadline) && ctx.Err() == nil {
		<-tick.C
		res.obsRSSMax = max(res.obsRSSMax, benchenv.ReadProc(obsPID).RSSKiB)
		if time.Since(lastPrint) > 15*time.Second {
			lastPrint = time.Now()
			logf("  %s: %d/%d Ready", time.Since(start).Round(time.Second), tr.readyCount(), n)
		}
	}
	res.ready = tr.readyCount()
	m1 := e.metricsNow(ctx)
	p1 := e.Snapshot()
	res.lat = tr.latencies()
	res.obsReady = p1["convoy-observer"]
	res.cpuAssess = benchenv.CPUDelta(p0, p1)
	res.assess = observerCounters(m1.obs).sub(observerCounters(m0.obs))
	res.convoyAssess = convoyRequests(m0.convoy, m1.convoy)
	res.ctlAssess = controllerFigures(m0.ctl, m1.ctl)
	logf("  %d/%d Ready after %s", res.ready, n, res.lat.lastReady.Sub(res.lat.firstSync).Round(time.Millisecond))
	if res.ready < n {
		res.loadAfter = benchenv.LoadAvg()
		return res, fmt.Errorf("only %d of %d Releases Ready within %s (logs: %s)", res.ready, n, cfg.Timeout, e.Cluster.LogDir())
	}

	// Until the observer has sent nothing for `quiet`: the last status writes of the
	// apply phase land.
	allReady := time.Now()
	if err := waitQuiet(ctx, e, 5*time.Minute); err != nil {
		return res, err
	}
	res.quietAfter = time.Since(allReady)

	// The steady window: nothing changes; the observer and the controller resync.
	logf("Steady window of %s (observer and controller --resync=%s)...", cfg.Steady, cfg.Resync)
	t0 := time.Now()
	m2 := e.metricsNow(ctx)
	p2 := e.Snapshot()
	// The window's length is the measurement; the observer's RSS every 10 s meanwhile.
	end := t0.Add(cfg.Steady)
	sample := time.NewTicker(10 * time.Second)
	defer sample.Stop()
	for time.Now().Before(end) {
		select {
		case <-ctx.Done():
			return res, ctx.Err()
		case <-time.After(time.Until(end)):
		case <-sample.C:
			res.steadyRSS = append(res.steadyRSS, benchenv.ReadProc(obsPID).RSSKiB)
		}
	}
	m3 := e.metricsNow(ctx)
	p3 := e.Snapshot()
	res.steadyDur = time.Since(t0)
	res.steady = observerCounters(m3.obs).sub(observerCounters(m2.obs))
	res.convoySteady = convoyRequests(m2.convoy, m3.convoy)
	res.ctlSteady = controllerFigures(m2.ctl, m3.ctl)
	res.cpuSteady = benchenv.CPUDelta(p2, p3)
	res.obsEnd = p3["convoy-observer"]
	res.steadyEvents = map[string]int{"releases": tr.since("releases", t0), "releaseinventories": tr.since("releaseinventories", t0)}
	res.loadAfter = benchenv.LoadAvg()
	res.watchRestarts = restarts.Load()
	return res, nil
}

// createAndSync creates Release name and sends the person's /sync, up to 5 tries each.
func createAndSync(ctx context.Context, e *env, tr *tracker, name string, replicas int, failed *atomic.Int64) error {
	rel, err := newRelease(name, e.Charts.URL, replicas)
	if err != nil {
		return err
	}
	err = retry(ctx, failed, func(ctx context.Context) error {
		err := e.Convoy.Post().Namespace(namespace).Resource("releases").Body(rel).Do(ctx).Error()
		if err != nil && strings.Contains(err.Error(), "already exists") {
			return nil
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("create %s: %w", name, err)
	}
	synced := &convoyv1alpha1.Release{}
	err = retry(ctx, failed, func(ctx context.Context) error {
		return e.Convoy.Post().Namespace(namespace).Resource("releases").Name(name).SubResource("sync").Do(ctx).Into(synced)
	})
	if err != nil {
		return fmt.Errorf("POST releases/%s/sync: %w", name, err)
	}
	now := time.Now()
	tr.mu.Lock()
	t := tr.get(name)
	t.synced, t.personValue = now, synced.Annotations[convoyv1alpha1.AnnotationSyncRequestedAt]
	tr.mu.Unlock()
	return nil
}

// retry calls f with a one-minute bound up to 5 times, a second apart, counting failures.
func retry(ctx context.Context, failed *atomic.Int64, f func(context.Context) error) error {
	var err error
	for range 5 {
		rctx, cancel := context.WithTimeout(ctx, time.Minute)
		err = f(rctx)
		cancel()
		if err == nil {
			return nil
		}
		failed.Add(1)
		logf("%v", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
	return err
}

// waitQuiet polls the observer's counters until neither its status writes nor its
// /sync requests moved for `quiet`, within bound.
func waitQuiet(ctx context.Context, e *env, bound time.Duration) error {
	deadline := time.Now().Add(bound)
	last := observerCounters(e.metricsNow(ctx).obs)
	since := time.Now()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for time.Since(since) < quiet {
		if time.Now().After(deadline) {
			return fmt.Errorf("the observer kept writing for %s after every Release was Ready", bound)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
		c := observerCounters(e.metricsNow(ctx).obs)
		if c.statusWrites != last.statusWrites || c.syncRequests != last.syncRequests {
			last, since = c, time.Now()
		}
	}
	return nil
}

// ctlFigures are the controller's reconciles and its mean reconcile and queue times
// between two metrics texts: where the time from /sync to Ready goes.
type ctlFigures struct {
	reconciles map[string]float64 // result
	reconcile  benchenv.Mean
	queueWait  benchenv.Mean
}

func controllerFigures(a, b string) ctlFigures {
	return ctlFigures{
		reconciles: benchenv.Delta(benchenv.Counts(a, "controller_runtime_reconcile_total", "result"), benchenv.Counts(b, "controller_runtime_reconcile_total", "result")),
		reconcile:  sumMeans(benchenv.HistMeans(a, b, "controller_runtime_reconcile_time_seconds")),
		queueWait:  sumMeans(benchenv.HistMeans(a, b, "workqueue_queue_duration_seconds")),
	}
}

func sumMeans(m map[string]benchenv.Mean) benchenv.Mean {
	var out benchenv.Mean
	for _, v := range m {
		out.Count += v.Count
		out.Sum += v.Sum
	}
	return out
}

func ptrInt64(v int64) *int64 { return &v }
