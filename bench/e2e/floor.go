package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/bench/internal/benchenv"
	"kumodo.io/convoy/internal/observer/health"
	"kumodo.io/convoy/internal/render"
	"kumodo.io/convoy/internal/source"
)

// The floor (-floor) is what the control plane alone needs for the objects of N
// Releases: the chart rendered for each Release before the clock starts (as convoy
// renders it, internal/render), then every object applied with one server-side apply
// from as many clients as create the Releases, until every Deployment is Healthy as the
// observer assesses it (internal/observer/health, kstatus). No convoy process runs
// but convoy apiserver, idle: no Release, no dry run, no status, no watch of convoy's
// objects. It is what no Release controller on this machine can go below, for
// comparison with the run to Ready. With -floor-dry-runs each object also gets the dry
// runs that the seed requires of a first apply: one before its apply, and one in the
// reconcile that the observer's first health data starts (three requests an object
// instead of one), the apply and the second dry run without field validation as convoy
// sends them; still no Release, Render, inventory or status is written. With
// -floor-design they are too: every request of convoy's API that the design requires
// (designfloor.go).

// floorResult is the figures of one floor run.
type floorResult struct {
	n, objects    int
	namespaces    int
	dryRuns       bool
	design        bool      // -floor-design: with convoy's API requests (designfloor.go)
	load          [2]string // at the start, when all were Healthy
	toHealthy     time.Duration
	p50, p99, max time.Duration
	reqs          map[string]float64
	convoyReqs    map[string]float64
	cpu           map[string]float64
}

// floorObject is one object of the floor: its resource and its apply body, made once.
type floorObject struct {
	kind, name string
	resource   schema.GroupVersionResource
	body       []byte
}

// measureFloor measures the floor for n Releases on e (started without convoy's controller
// and observer); with design (-floor-design), each Release's requests of convoy's API too.
func (cfg *config) measureFloor(ctx context.Context, e *env, n int, design *designFloor) (*floorResult, error) {
	cacheDir, err := os.MkdirTemp("", "convoy-bench-floor-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(cacheDir)
	fetcher, err := source.New(source.Options{CacheDir: cacheDir})
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(e.Admin)
	if err != nil {
		return nil, err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(e.Admin)
	if err != nil {
		return nil, err
	}
	groups, err := restmapper.GetAPIGroupResources(dc)
	if err != nil {
		return nil, err
	}
	mapper := restmapper.NewDiscoveryRESTMapper(groups)
	// Each object's resource and apply body are made before the clock starts: the
	// bench's own work shares the CPUs with the control plane it measures.
	fmt.Fprintf(os.Stderr, "Rendering the chart for %d Releases...\n", n)
	objects := make([][]floorObject, n)
	for i := range n {
		rel := benchenv.PodinfoRelease(cfg.namespaceOf(i), releaseName(i), e.Charts.URL)
		chart, err := fetcher.Fetch(ctx, rel.Spec.Chart, 0, nil)
		if err != nil {
			return nil, fmt.Errorf("fetch the chart of %s: %w", releaseName(i), err)
		}
		res, err := render.Render(ctx, render.Request{Release: rel, Chart: render.Chart{
			What: chart.What, Digest: chart.Digest, Commit: chart.Commit, Archive: chart.Archive, Files: chart.Files,
		}})
		if err != nil {
			return nil, fmt.Errorf("render %s: %w", releaseName(i), err)
		}
		if design != nil {
			if err := design.prepare(rel, res); err != nil {
				return nil, err
			}
		}
		for _, o := range res.Objects {
			u := o.Unstructured
			m, err := mapper.RESTMapping(u.GroupVersionKind().GroupKind(), u.GroupVersionKind().Version)
			if err != nil {
				return nil, err
			}
			data, err := u.MarshalJSON()
			if err != nil {
				return nil, err
			}
			objects[i] = append(objects[i], floorObject{kind: u.GetKind(), name: u.GetName(), resource: m.Resource, body: data})
		}
	}

	deployments := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	list, err := dyn.Resource(deployments).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	w, err := dyn.Resource(deployments).Watch(ctx, metav1.ListOptions{ResourceVersion: list.GetResourceVersion()})
	if err != nil {
		return nil, err
	}
	defer w.Stop()
	var mu sync.Mutex
	healthy := map[string]time.Time{}
	go func() {
		for ev := range w.ResultChan() {
			u, ok := ev.Object.(*unstructured.Unstructured)
			if !ok || ev.Type == watch.Deleted || health.ObjectStatus(u).Health != v1.HealthHealthy {
				continue
			}
			mu.Lock()
			if _, seen := healthy[u.GetName()]; !seen {
				healthy[u.GetName()] = time.Now()
			}
			mu.Unlock()
		}
	}()

	res := &floorResult{n: n, namespaces: len(cfg.namespaces(n)), dryRuns: cfg.floorDryRuns, design: design != nil, cpu: map[string]float64{}}
	res.load[0] = benchenv.LoadAvg()
	k0, _ := e.KubeMetrics(ctx)
	c0 := e.ConvoyMetrics(ctx)
	p0 := e.Snapshot()
	fmt.Fprintf(os.Stderr, "Applying the objects of %d Releases from %d clients...\n", n, cfg.createConcurrency)
	started := make([]time.Time, n)
	var failed atomic.Value
	start := time.Now()
	// apply sends the server-side apply of o; validate: with the server's default field
	// validation, else without, as convoy repeats an object it validated (internal/apply).
	apply := func(ns string, o floorObject, dryRun, validate bool) error {
		force := true
		opts := metav1.PatchOptions{FieldManager: "bench-floor", Force: &force}
		if dryRun {
			opts.DryRun = []string{metav1.DryRunAll}
		}
		if !validate {
			opts.FieldValidation = metav1.FieldValidationIgnore
		}
		_, err := dyn.Resource(o.resource).Namespace(ns).Patch(ctx, o.name, types.ApplyPatchType, o.body, opts)
		return err
	}
	// step sends the design floor's requests of Release i at one step (-floor-design).
	step := func(i int, send func(*designFloor, context.Context, int) error) bool {
		if design == nil {
			return true
		}
		if err := send(design, ctx, i); err != nil {
			failed.CompareAndSwap(nil, err)
			return false
		}
		return true
	}
	benchenv.ForEach(ctx, n, cfg.createConcurrency, func(i int) {
		ns := cfg.namespaceOf(i)
		started[i] = time.Now()
		if !step(i, (*designFloor).beforeApply) {
			return
		}
		for _, o := range objects[i] {
			var err error
			if cfg.floorDryRuns {
				err = apply(ns, o, true, true) // the pre-apply dry run of the first reconcile
			}
			if err == nil {
				err = apply(ns, o, false, !cfg.floorDryRuns)
			}
			if err != nil {
				failed.CompareAndSwap(nil, fmt.Errorf("apply %s %s: %w", o.kind, o.name, err))
				return
			}
		}
		if !cfg.floorDryRuns || !step(i, (*designFloor).afterApply) {
			return
		}
		// The reconcile that the observer's first health data starts applies the render
		// again (SP-03, SP-29): a dry run of each object, which finds nothing to change.
		for _, o := range objects[i] {
			if err := apply(ns, o, true, false); err != nil {
				failed.CompareAndSwap(nil, fmt.Errorf("second dry run of %s %s: %w", o.kind, o.name, err))
				return
			}
		}
		step(i, (*designFloor).afterSecondDryRuns)
	})
	if err, _ := failed.Load().(error); err != nil {
		return nil, err
	}
	for _, objs := range objects {
		res.objects += len(objs)
	}
	deadline := time.Now().Add(cfg.timeout)
	lastPrint := time.Now()
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(healthy)
	}
	for count() < n && time.Now().Before(deadline) && ctx.Err() == nil {
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
		if time.Since(lastPrint) > 10*time.Second {
			lastPrint = time.Now()
			fmt.Fprintf(os.Stderr, "  %s: %d/%d Deployments Healthy\n", time.Since(start).Round(time.Second), count(), n)
		}
	}
	k1, _ := e.KubeMetrics(ctx)
	res.cpu = benchenv.CPUDelta(p0, e.Snapshot())
	res.load[1] = benchenv.LoadAvg()
	kk := []string{"verb", "dry_run", "group", "resource", "subresource", "code"}
	res.reqs = benchenv.Delta(benchenv.Counts(k0, "apiserver_request_total", kk...), benchenv.Counts(k1, "apiserver_request_total", kk...))
	res.convoyReqs = benchenv.Delta(benchenv.Counts(c0, "apiserver_request_total", kk...),
		benchenv.Counts(e.ConvoyMetrics(ctx), "apiserver_request_total", kk...))
	mu.Lock()
	var last time.Time
	var lats []time.Duration
	for i := range n {
		if t, ok := healthy[releaseName(i)]; ok {
			last = maxTime(last, t)
			lats = append(lats, t.Sub(started[i]))
		}
	}
	mu.Unlock()
	if len(lats) < n {
		return res, fmt.Errorf("only %d of %d Deployments Healthy within %s (logs: %s)", len(lats), n, cfg.timeout, e.Cluster.LogDir())
	}
	slices.Sort(lats)
	res.toHealthy = last.Sub(start)
	res.p50, res.p99, res.max = lats[len(lats)/2], lats[min(len(lats)-1, len(lats)*99/100)], lats[len(lats)-1]
	fmt.Fprintf(os.Stderr, "  %d/%d Deployments Healthy after %s\n", n, n, res.toHealthy.Round(time.Millisecond))
	return res, nil
}

func (r *floorResult) print(out io.Writer) {
	what := "one server-side apply each"
	switch {
	case r.design:
		what = "a dry run, the apply and a second dry run each, and convoy's API requests of the design (-floor-design)"
	case r.dryRuns:
		what = "a dry run, the apply and a second dry run each (-floor-dry-runs)"
	}
	fmt.Fprintf(out, "\n## Floor: the objects of N = %d Releases without convoy (%s)\n\n", r.n, what)
	fmt.Fprintf(out, "load average (1, 5, 15 min): start %s; all Healthy %s\n\n", r.load[0], r.load[1])
	fmt.Fprintln(out, "| measure | value |\n|---|---|")
	fmt.Fprintf(out, "| objects applied (%s) | %d |\n", what, r.objects)
	fmt.Fprintf(out, "| namespaces (-per-namespace) | %d |\n", r.namespaces)
	fmt.Fprintf(out, "| first apply → every Deployment Healthy | **%s** |\n", r.toHealthy.Round(100*time.Millisecond))
	fmt.Fprintf(out, "| per Release first apply → Healthy, p50 / p99 / max | %s / %s / %s |\n",
		r.p50.Round(100*time.Millisecond), r.p99.Round(100*time.Millisecond), r.max.Round(100*time.Millisecond))
	fmt.Fprintf(out, "| requests per Release: kube-apiserver / convoy apiserver | %.1f / %.1f |\n",
		benchenv.Total(r.reqs)/float64(r.n), benchenv.Total(r.convoyReqs)/float64(r.n))
	fmt.Fprintf(out, "| CPU s (all processes) | %.1f |\n\n", benchenv.Total(r.cpu))
	fmt.Fprintln(out, "| process | CPU s |\n|---|---:|")
	for _, kv := range benchenv.Top(r.cpu, len(r.cpu)) {
		fmt.Fprintf(out, "| %s | %.1f |\n", kv.K, kv.V)
	}
	for _, server := range []struct {
		name string
		reqs map[string]float64
	}{{"kube-apiserver", r.reqs}, {"convoy apiserver", r.convoyReqs}} {
		fmt.Fprintf(out, "\n%s requests (per Release ≥ 0.05):\n\n", server.name)
		for _, kv := range benchenv.Top(server.reqs, 30) {
			if per := kv.V / float64(r.n); per >= 0.05 {
				fmt.Fprintf(out, "    %-66s %8.0f %7.2f\n", kv.K, kv.V, per)
			}
		}
	}
}
