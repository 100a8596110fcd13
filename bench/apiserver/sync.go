package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/bench/internal/benchenv"
)

const syncNamespace = "bench-sync"

// syncResult is one POST /sync as the client saw it.
type syncResult struct {
	target  int
	latency time.Duration
	code    int    // 0: success
	err     string // when code != 0
	value   string // sync-requested-at of the returned Release
	rv      string // its resourceVersion
}

// syncLevel is the figures of one level: one target set at one concurrency.
type syncLevel struct {
	mode        string // "spread over N" or "one Release"
	concurrency int
	targets     int
	sent, ok    int
	elapsed     time.Duration
	latencies   []time.Duration // successful requests, sorted
	codes       map[int]int     // failures by HTTP status (-1: no response)
	firstErr    map[int]string
	cpu         map[string]float64
	// From convoy apiserver's metrics, deltas over the level.
	serverRequests    float64 // apiserver_request_duration_seconds_count, subresource sync
	serverSeconds     float64 // ... _sum
	serverNon200      float64 // apiserver_request_total of sync with another code than 200
	etcdUpdates       float64 // etcd_requests_total, operation update, releases
	etcdUpdateSeconds float64 // etcd_request_duration_seconds_sum, same
	etcdGets          float64 // etcd_requests_total, operation get, releases
	problems          []string
	aheadOfClock      time.Duration // the largest sync-requested-at minus the time at the end
}

func (l *syncLevel) rps() float64 { return float64(l.ok) / l.elapsed.Seconds() }

func (l *syncLevel) percentile(p float64) time.Duration {
	if len(l.latencies) == 0 {
		return 0
	}
	i := int(float64(len(l.latencies))*p+0.999999) - 1
	return l.latencies[max(0, min(i, len(l.latencies)-1))]
}

func (e *env) postSync(ctx context.Context, ns, name string) (*convoyv1alpha1.Release, error) {
	out := &convoyv1alpha1.Release{}
	return out, e.Convoy.Post().Namespace(ns).Resource("releases").Name(name).SubResource("sync").Do(ctx).Into(out)
}

func benchSync(ctx context.Context, e *env, cfg config, rep *report) error {
	if err := e.EnsureNamespace(ctx, syncNamespace); err != nil {
		return err
	}
	// Warm up: connections, the delegated authorization cache, the watch cache.
	if cfg.warmup > 0 {
		fmt.Fprintf(os.Stderr, "Warm-up: %d unmeasured /sync requests...\n", cfg.warmup)
		if _, err := e.syncLevel(ctx, cfg, "warm-up", []string{"warmup-0", "warmup-1", "warmup-2", "warmup-3"}, slices.Max(cfg.concurrency), cfg.warmup); err != nil {
			return err
		}
	}
	for _, mode := range []string{"spread", "one"} {
		for _, c := range cfg.concurrency {
			var names []string
			if mode == "spread" {
				for i := range cfg.releases {
					names = append(names, fmt.Sprintf("spread-c%d-%04d", c, i))
				}
			} else {
				names = []string{fmt.Sprintf("one-c%d", c)}
			}
			fmt.Fprintf(os.Stderr, "/sync: %d clients on %d Release(s), %d requests or %s...\n", c, len(names), cfg.requests, cfg.duration)
			l, err := e.syncLevel(ctx, cfg, mode, names, c, cfg.requests)
			if err != nil {
				return err
			}
			rep.sync = append(rep.sync, l)
			fmt.Fprintf(os.Stderr, "  %d ok of %d in %s: %.0f/s, p50 %s, p99 %s, failures %v\n",
				l.ok, l.sent, l.elapsed.Round(time.Millisecond), l.rps(), ms(l.percentile(0.5)), ms(l.percentile(0.99)), l.codes)
			for _, p := range l.problems {
				fmt.Fprintln(os.Stderr, "  PROBLEM:", p)
			}
		}
	}
	return nil
}

// syncLevel creates the Releases names, then sends up to requests POST /sync to them
// round robin from concurrency clients, for at most cfg.duration, and checks that
// no write was lost.
func (e *env) syncLevel(ctx context.Context, cfg config, mode string, names []string, concurrency, requests int) (*syncLevel, error) {
	if err := e.createAll(ctx, syncNamespace, names); err != nil {
		return nil, err
	}
	l := &syncLevel{mode: mode, concurrency: concurrency, targets: len(names), codes: map[int]int{}, firstErr: map[int]string{}}
	results := make([]syncResult, 0, requests)
	var mu sync.Mutex
	var next atomic.Int64

	metricsBefore, err := e.ScrapeConvoy(ctx)
	if err != nil {
		return nil, err
	}
	procBefore := e.Snapshot()
	start := time.Now()
	deadline := start.Add(cfg.duration)
	var wg sync.WaitGroup
	for range concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			local := make([]syncResult, 0, requests/concurrency+1)
			for {
				i := int(next.Add(1) - 1)
				if i >= requests || time.Now().After(deadline) || ctx.Err() != nil {
					break
				}
				target := i % len(names)
				rctx, cancel := context.WithTimeout(ctx, time.Minute)
				t0 := time.Now()
				got, err := e.postSync(rctx, syncNamespace, names[target])
				r := syncResult{target: target, latency: time.Since(t0)}
				cancel()
				if err != nil {
					r.code, r.err = statusCode(err), err.Error()
				} else {
					r.value, r.rv = got.Annotations[convoyv1alpha1.AnnotationSyncRequestedAt], got.ResourceVersion
				}
				local = append(local, r)
			}
			mu.Lock()
			results = append(results, local...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	l.elapsed = time.Since(start)
	end := time.Now()
	l.cpu = benchenv.CPUDelta(procBefore, e.Snapshot())
	metricsAfter, err := e.ScrapeConvoy(ctx)
	if err != nil {
		return nil, err
	}
	delta := func(name string, labels ...string) float64 {
		return metricSum(metricsAfter, name, labels...) - metricSum(metricsBefore, name, labels...)
	}
	l.serverRequests = delta("apiserver_request_duration_seconds_count", `subresource="sync"`)
	l.serverSeconds = delta("apiserver_request_duration_seconds_sum", `subresource="sync"`)
	l.serverNon200 = delta("apiserver_request_total", `subresource="sync"`) - delta("apiserver_request_total", `subresource="sync"`, `code="200"`)
	l.etcdUpdates = delta("etcd_requests_total", `operation="update"`, `resource="releases"`)
	l.etcdUpdateSeconds = delta("etcd_request_duration_seconds_sum", `operation="update"`, `resource="releases"`)
	l.etcdGets = delta("etcd_requests_total", `operation="get"`, `resource="releases"`)

	l.sent = len(results)
	for _, r := range results {
		if r.code != 0 {
			l.codes[r.code]++
			if _, ok := l.firstErr[r.code]; !ok {
				l.firstErr[r.code] = r.err
			}
			continue
		}
		l.ok++
		l.latencies = append(l.latencies, r.latency)
	}
	slices.Sort(l.latencies)
	if err := e.checkNoLostWrite(ctx, l, names, results, end); err != nil {
		return nil, err
	}
	return l, nil
}

// checkNoLostWrite checks, per Release, that every successful /sync made its own
// write (distinct resourceVersions), that in the order of the writes the values of
// sync-requested-at strictly increase (api.md, "No lost request"), and that the
// stored Release holds the value of the last write.
func (e *env) checkNoLostWrite(ctx context.Context, l *syncLevel, names []string, results []syncResult, end time.Time) error {
	perTarget := make([][]syncResult, len(names))
	for _, r := range results {
		if r.code == 0 {
			perTarget[r.target] = append(perTarget[r.target], r)
		}
	}
	problem := func(format string, args ...any) {
		if len(l.problems) < 10 {
			l.problems = append(l.problems, fmt.Sprintf(format, args...))
		}
	}
	for t, rs := range perTarget {
		if len(rs) == 0 {
			continue
		}
		rv := func(r syncResult) uint64 { n, _ := strconv.ParseUint(r.rv, 10, 64); return n }
		sort.Slice(rs, func(i, j int) bool { return rv(rs[i]) < rv(rs[j]) })
		for i := 1; i < len(rs); i++ {
			if rs[i].rv == rs[i-1].rv {
				problem("%s: two /sync requests returned resourceVersion %s: one write was lost", names[t], rs[i].rv)
				continue
			}
			a, errA := time.Parse(time.RFC3339, rs[i-1].value)
			b, errB := time.Parse(time.RFC3339, rs[i].value)
			if errA != nil || errB != nil || !b.After(a) {
				problem("%s: sync-requested-at %q (rv %s) then %q (rv %s): not strictly later", names[t], rs[i-1].value, rs[i-1].rv, rs[i].value, rs[i].rv)
			}
		}
		last := rs[len(rs)-1]
		if at, err := time.Parse(time.RFC3339, last.value); err == nil {
			l.aheadOfClock = max(l.aheadOfClock, at.Sub(end.Truncate(time.Second)))
		}
		stored, err := e.get(ctx, syncNamespace, names[t])
		if err != nil {
			return fmt.Errorf("reading back %s: %w", names[t], err)
		}
		if got := stored.Annotations[convoyv1alpha1.AnnotationSyncRequestedAt]; got != last.value || stored.ResourceVersion != last.rv {
			problem("%s: stored sync-requested-at %q (rv %s), want the last write's %q (rv %s)", names[t], got, stored.ResourceVersion, last.value, last.rv)
		}
	}
	return nil
}

// createAll creates the Releases names in ns from 16 clients; an existing Release
// is an error (each measurement uses fresh names).
func (e *env) createAll(ctx context.Context, ns string, names []string) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(16)
	for _, n := range names {
		g.Go(func() error {
			rctx, cancel := context.WithTimeout(gctx, time.Minute)
			defer cancel()
			if err := e.create(rctx, newRelease(ns, n)); err != nil {
				return fmt.Errorf("creating Release %s/%s: %w", ns, n, err)
			}
			return nil
		})
	}
	return g.Wait()
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }
