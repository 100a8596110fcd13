package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/watch"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/bench/internal/benchenv"
)

const listNamespace = "bench-list"

// timing is one measurement, run some times.
type timing struct {
	what  string
	runs  []time.Duration
	note  string
	cpu   map[string]float64 // CPU seconds over all runs
	bytes int
}

func (t *timing) median() time.Duration {
	s := slices.Clone(t.runs)
	slices.Sort(s)
	return s[len(s)/2]
}

// listWatch is the figures of the list and watch measurements.
type listWatch struct {
	n                int
	createElapsed    time.Duration
	createFailures   map[int]int
	createFirstErr   map[int]string
	createCPU        map[string]float64
	rssBefore        map[string]benchenv.ProcStat // before creating
	rssAfterCreate   map[string]benchenv.ProcStat
	rssAfterListings map[string]benchenv.ProcStat
	timings          []*timing
}

func benchListWatch(ctx context.Context, e *env, cfg config, rep *report) error {
	if err := e.EnsureNamespace(ctx, listNamespace); err != nil {
		return err
	}
	lw := &listWatch{n: cfg.listReleases, createFailures: map[int]int{}, createFirstErr: map[int]string{}}
	rep.lw = lw
	lw.rssBefore = e.Snapshot()

	// Create, counting failures; a failed create is retried afterwards so that the
	// listings see all n.
	fmt.Fprintf(os.Stderr, "Creating %d Releases from %d clients...\n", cfg.listReleases, cfg.createConcurrency)
	name := func(i int) string { return fmt.Sprintf("rel-%05d", i) }
	var (
		next   atomic.Int64
		mu     sync.Mutex
		failed []int
		wg     sync.WaitGroup
	)
	start := time.Now()
	for range cfg.createConcurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= cfg.listReleases || ctx.Err() != nil {
					return
				}
				rctx, cancel := context.WithTimeout(ctx, time.Minute)
				err := e.create(rctx, newRelease(listNamespace, name(i)))
				cancel()
				if err != nil {
					mu.Lock()
					code := statusCode(err)
					lw.createFailures[code]++
					if _, ok := lw.createFirstErr[code]; !ok {
						lw.createFirstErr[code] = err.Error()
					}
					failed = append(failed, i)
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	lw.createElapsed = time.Since(start)
	lw.createCPU = benchenv.CPUDelta(lw.rssBefore, e.Snapshot())
	fmt.Fprintf(os.Stderr, "  %s (%.0f/s), failures %v\n", lw.createElapsed.Round(time.Millisecond), float64(cfg.listReleases)/lw.createElapsed.Seconds(), lw.createFailures)
	for _, i := range failed {
		rctx, cancel := context.WithTimeout(ctx, time.Minute)
		err := e.create(rctx, newRelease(listNamespace, name(i)))
		cancel()
		if err != nil && statusCode(err) != 409 { // 409: the failed create was stored after all
			return fmt.Errorf("creating %s again: %w", name(i), err)
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	lw.rssAfterCreate = e.Snapshot()

	decoder := serializer.NewCodecFactory(benchenv.Scheme).UniversalDeserializer()
	measure := func(what string, f func(ctx context.Context) (int, error)) error {
		t := &timing{what: what}
		before := e.Snapshot()
		for r := range cfg.repeats {
			rctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
			t0 := time.Now()
			b, err := f(rctx)
			d := time.Since(t0)
			cancel()
			if err != nil {
				return fmt.Errorf("%s: %w", what, err)
			}
			t.runs, t.bytes = append(t.runs, d), b
			fmt.Fprintf(os.Stderr, "  %s, run %d: %s\n", what, r+1, d.Round(time.Millisecond))
		}
		t.cpu = benchenv.CPUDelta(before, e.Snapshot())
		lw.timings = append(lw.timings, t)
		return nil
	}
	// get LISTs the Releases of the namespace with the query parameters params (name,
	// value, …; an empty value is left out) and decodes them; size is the response's.
	get := func(ctx context.Context, params ...string) (l *convoyv1alpha1.ReleaseList, size int, err error) {
		req := e.Convoy.Get().Namespace(listNamespace).Resource("releases")
		for i := 0; i+1 < len(params); i += 2 {
			if params[i+1] != "" {
				req = req.Param(params[i], params[i+1])
			}
		}
		raw, err := req.Do(ctx).Raw()
		if err != nil {
			return nil, 0, err
		}
		l = &convoyv1alpha1.ReleaseList{}
		if _, _, err := decoder.Decode(raw, nil, l); err != nil {
			return nil, 0, err
		}
		return l, len(raw), nil
	}
	list := func(rv string) func(ctx context.Context) (int, error) {
		return func(ctx context.Context) (int, error) {
			l, size, err := get(ctx, "resourceVersion", rv)
			if err != nil {
				return 0, err
			}
			if len(l.Items) != cfg.listReleases {
				return 0, fmt.Errorf("got %d Releases, want %d", len(l.Items), cfg.listReleases)
			}
			return size, nil
		}
	}
	fmt.Fprintln(os.Stderr, "LIST and WATCH...")
	if err := measure("LIST (consistent read, no resourceVersion)", list("")); err != nil {
		return err
	}
	if err := measure("LIST resourceVersion=0 (from the watch cache)", list("0")); err != nil {
		return err
	}
	pages := 0
	err := measure(fmt.Sprintf("LIST limit=%d, every page", cfg.pageSize), func(ctx context.Context) (int, error) {
		cont, items, bytes := "", 0, 0
		pages = 0
		for {
			l, size, err := get(ctx, "limit", fmt.Sprint(cfg.pageSize), "continue", cont)
			if err != nil {
				return 0, err
			}
			pages++
			items += len(l.Items)
			bytes += size
			if cont = l.Continue; cont == "" {
				break
			}
			if pages > cfg.listReleases/max(cfg.pageSize, 1)+10 {
				return 0, fmt.Errorf("more than %d pages", pages)
			}
		}
		if items != cfg.listReleases {
			return 0, fmt.Errorf("got %d Releases in %d pages, want %d", items, pages, cfg.listReleases)
		}
		return bytes, nil
	})
	if err != nil {
		return err
	}
	lw.timings[len(lw.timings)-1].note = fmt.Sprintf("%d pages", pages)

	var firstEvent []time.Duration
	err = measure("WATCH resourceVersion=0 until all initial events", func(ctx context.Context) (int, error) {
		t0 := time.Now()
		w, err := e.Convoy.Get().Namespace(listNamespace).Resource("releases").
			Param("watch", "true").Param("resourceVersion", "0").Watch(ctx)
		if err != nil {
			return 0, err
		}
		defer w.Stop()
		seen := make(map[string]bool, cfg.listReleases)
		for len(seen) < cfg.listReleases {
			select {
			case <-ctx.Done():
				return 0, fmt.Errorf("after %d of %d initial events: %w", len(seen), cfg.listReleases, ctx.Err())
			case ev, ok := <-w.ResultChan():
				if !ok {
					return 0, fmt.Errorf("the watch ended after %d of %d initial events", len(seen), cfg.listReleases)
				}
				if len(seen) == 0 {
					firstEvent = append(firstEvent, time.Since(t0))
				}
				switch ev.Type {
				case watch.Added:
					seen[ev.Object.(*convoyv1alpha1.Release).Name] = true
				case watch.Error:
					return 0, fmt.Errorf("watch error event: %v", ev.Object)
				}
			}
		}
		return 0, nil
	})
	if err != nil {
		return err
	}
	slices.Sort(firstEvent)
	lw.timings[len(lw.timings)-1].note = fmt.Sprintf("first event after %s (median)", ms(firstEvent[len(firstEvent)/2]))
	lw.rssAfterListings = e.Snapshot()
	return nil
}
