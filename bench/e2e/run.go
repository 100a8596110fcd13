package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/bench/internal/benchenv"
	"kumodo.io/convoy/internal/dev"
	"kumodo.io/convoy/internal/localcluster"
)

const (
	namespace = "bench-e2e"
	// author is the user who creates the Releases: create, get, list and watch on
	// Releases in the namespace, nothing else (not an admin, whom convoy apiserver
	// would allow without asking kube-apiserver).
	author = "bench-author"
)

// convoyProc is a convoy controller or observer process whose metrics the bench reads.
type convoyProc struct {
	// name is the process's name (and its user): convoy-controller, convoy-observer,
	// or with -shards convoy-controller-<i> and convoy-observer-<i>.
	name string
	// controller: a controller; else an observer.
	controller bool
	metrics    string
	// pprof is the base URL of its /debug/pprof/; "" without -profile-dir.
	pprof string
}

// snap is every metrics text at one moment.
type snap struct {
	kube, convoy string
	// ctl and obs are the texts of every controller and every observer (shards), one
	// after the other: benchenv.Counts sums the series of the same labels.
	ctl, obs string
	// procs is each convoy controller's and observer's text, by name.
	procs map[string]string
}

func (e *env) metricsNow(ctx context.Context) snap {
	k, err := e.KubeMetrics(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "kube-apiserver /metrics:", err)
	}
	s := snap{kube: k, convoy: e.ConvoyMetrics(ctx), procs: map[string]string{}}
	for _, p := range e.convoyProcs {
		text := benchenv.HTTPGet(ctx, httpClient, p.metrics)
		s.procs[p.name] = text
		if p.controller {
			s.ctl += text + "\n"
		} else {
			s.obs += text + "\n"
		}
	}
	return s
}

// requests are the requests between two snapshots.
type requests struct {
	kube, convoy map[string]float64 // verb [dry_run] [group] resource [subresource] code
	ctl, obs     map[string]float64 // each process's client: method code
	reconciles   map[string]float64 // controller_runtime_reconcile_total of both: controller result
	means        map[string]benchenv.Mean
}

func requestsBetween(a, b snap) requests {
	kk := []string{"verb", "dry_run", "group", "resource", "subresource", "code"}
	d := func(x, y, name string, keys ...string) map[string]float64 {
		return benchenv.Delta(benchenv.Counts(x, name, keys...), benchenv.Counts(y, name, keys...))
	}
	rec := d(a.ctl, b.ctl, "controller_runtime_reconcile_total", "controller", "result")
	for k, v := range d(a.obs, b.obs, "controller_runtime_reconcile_total", "controller", "result") {
		rec[k] += v
	}
	means := map[string]benchenv.Mean{}
	for k, v := range benchenv.HistMeans(a.ctl, b.ctl, "convoy_release_reconcile_duration_seconds", "reason") {
		means["controller: reconcile "+k] = v
	}
	for k, v := range benchenv.HistMeans(a.ctl, b.ctl, "workqueue_queue_duration_seconds", "name") {
		means["controller: queue wait "+k] = v
	}
	for k, v := range benchenv.HistMeans(a.obs, b.obs, "workqueue_queue_duration_seconds", "name") {
		means["observer: queue wait "+k] = v
	}
	return requests{
		kube:       d(a.kube, b.kube, "apiserver_request_total", kk...),
		convoy:     d(a.convoy, b.convoy, "apiserver_request_total", kk...),
		ctl:        d(a.ctl, b.ctl, "rest_client_requests_total", "method", "code"),
		obs:        d(a.obs, b.obs, "rest_client_requests_total", "method", "code"),
		reconciles: rec,
		means:      means,
	}
}

// env is benchenv's control plane, convoy apiserver and chart repository, with convoy
// controller and observer started as convoy dev starts them.
type env struct {
	*benchenv.Env
	convoyProcs []convoyProc
	// shardLabel labels the manual Release of the /sync timings (shard 0 with -shards).
	shardLabel map[string]string
	author     *rest.RESTClient // convoy.kumodo.io as the author
	// sink receives the Alerts' notifications (-alerts); nil without.
	sink *sink
}

// startConvoy starts convoy controller and observer from bin as `convoy dev` does
// (internal/dev): each with its own identity and the rights dev grants it, the flags
// dev gives (plus a metrics address on loopback), every other flag at its default. The
// identity is a ServiceAccount's token, as in an installation (identity.go), where dev
// gives a user's client certificate.
// With shards > 0 it starts that many controller and observer pairs, the i-th with
// --shard=<i> (as the chart's shards do).
func (e *env) startConvoy(ctx context.Context, bin string, profile bool, shards int) error {
	host := e.Cluster.RestConfig()
	type one struct {
		name, command string
		grant         func(context.Context, *rest.Config, string) error
		extra         []string
	}
	var all []one
	for i := range max(shards, 1) {
		suffix, shard := "", []string(nil)
		if shards > 0 {
			suffix, shard = fmt.Sprintf("-%d", i), []string{fmt.Sprintf("--shard=%d", i)}
		}
		all = append(all,
			one{"convoy-controller" + suffix, "controller", dev.GrantController,
				append([]string{"--chart-cache-dir=" + filepath.Join(e.Cluster.Dir(), "charts"+suffix)}, shard...)},
			one{"convoy-observer" + suffix, "observer", dev.GrantObserver, shard})
	}
	for _, c := range all {
		p := convoyProc{name: c.name, controller: c.command == "controller"}
		if profile {
			port, err := benchenv.FreePort()
			if err != nil {
				return err
			}
			p.pprof = fmt.Sprintf("http://127.0.0.1:%d", port)
			c.extra = append(c.extra, fmt.Sprintf("--pprof-bind-address=127.0.0.1:%d", port))
		}
		kubeconfig, identity, err := e.serviceAccountKubeconfig(ctx, c.name)
		if err != nil {
			return err
		}
		if err := c.grant(ctx, host, identity); err != nil {
			return err
		}
		url, err := e.StartComponent(ctx, c.name, bin, c.command, append([]string{"--kubeconfig=" + kubeconfig}, c.extra...))
		if err != nil {
			return err
		}
		p.metrics = url
		e.convoyProcs = append(e.convoyProcs, p)
	}
	return nil
}

// grantAuthor lets the author create and read Releases in each of the namespaces, and
// sets its client.
func (e *env) grantAuthor(ctx context.Context, namespaces []string) error {
	for _, ns := range namespaces {
		if err := e.grantAuthorIn(ctx, ns); err != nil {
			return err
		}
	}
	cfg, err := e.Cluster.UserConfig(author)
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = 2000, 4000 // the bench's clients are not what it measures
	cfg.GroupVersion = &convoyv1alpha1.SchemeGroupVersion
	cfg.APIPath = "/apis"
	cfg.NegotiatedSerializer = serializer.WithoutConversionCodecFactory{CodecFactory: serializer.NewCodecFactory(benchenv.Scheme)}
	cfg.ContentType = runtime.ContentTypeJSON
	e.author, err = rest.RESTClientFor(cfg)
	return err
}

// grantAuthorIn gives the author its Role in namespace ns.
func (e *env) grantAuthorIn(ctx context.Context, ns string) error {
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: author},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{convoyv1alpha1.GroupName}, Resources: []string{convoyv1alpha1.ResourceReleases}, Verbs: []string{"create", "get", "list", "watch"}},
			{APIGroups: []string{convoyv1alpha1.GroupName}, Resources: []string{convoyv1alpha1.ResourceReleases + "/" + convoyv1alpha1.SubresourceSync}, Verbs: []string{"create"}},
		},
	}
	if _, err := e.Kube.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating the Role of %s in %s: %w", author, ns, err)
	}
	rb := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: author},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: author},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: author}},
	}
	if _, err := e.Kube.RbacV1().RoleBindings(ns).Create(ctx, rb, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("binding %s in %s: %w", author, ns, err)
	}
	return nil
}

// readyLog records, per Release, when the bench's watch first saw it Ready, and every
// watch event of a resource with its time.
type readyLog struct {
	resource string
	mu       sync.Mutex
	events   []time.Time
	ready    map[string]time.Time
	reopened atomic.Int64
}

func (w *readyLog) readyCount() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.ready)
}

func (w *readyLog) eventsSince(t time.Time) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, at := range w.events {
		if at.After(t) {
			n++
		}
	}
	return n
}

// watch follows the resource in every namespace from rv until ctx ends, reopening a
// closed watch from the last resourceVersion seen (at most 1,000 times).
func (e *env) watch(ctx context.Context, w *readyLog, rv string) {
	for i := 0; i < 1000 && ctx.Err() == nil; i++ {
		wi, err := e.Convoy.Get().Resource(w.resource).
			Param("watch", "true").Param("resourceVersion", rv).Timeout(30 * time.Minute).Watch(ctx)
		if err != nil {
			fmt.Fprintf(os.Stderr, "watch %s: %v\n", w.resource, err)
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
			continue
		}
		for ev := range wi.ResultChan() {
			if ev.Type == watch.Error {
				rv = ""
				break
			}
			now := time.Now()
			if a, err := meta.Accessor(ev.Object); err == nil {
				rv = a.GetResourceVersion()
			}
			w.mu.Lock()
			w.events = append(w.events, now)
			if r, ok := ev.Object.(*convoyv1alpha1.Release); ok && strings.HasPrefix(r.Name, "podinfo-") && meta.IsStatusConditionTrue(r.Status.Conditions, convoyv1alpha1.ConditionReady) {
				if _, seen := w.ready[r.Name]; !seen {
					w.ready[r.Name] = now
				}
			}
			w.mu.Unlock()
		}
		wi.Stop()
		w.reopened.Add(1)
	}
}

// result is the figures of one N.
type result struct {
	n              int
	shards         int // controller and observer pairs with --shard; 0: one pair without
	clients        int
	namespaces     int // of the Releases
	loadStart      string
	loadReady      string
	loadEnd        string
	createElapsed  time.Duration
	createFailures int64
	ready          int
	toReady        time.Duration // first create → last Ready
	p50, p99, max  time.Duration // create → Ready, per Release
	toReadyReq     requests      // first create → all Ready
	cpu            map[string]float64
	procs          map[string]benchenv.ProcStat // at the end
	steady         requests
	steadyDur      time.Duration
	steadyCPU      map[string]float64
	steadyEvents   map[string]int // resource → watch events in the steady window
	reopened       int64
	heapStart      map[string]heap // Go heap of the controller and the observer before the creates
	heapReady      map[string]heap // when all are Ready
	heapEnd        map[string]heap // at the end of the steady window
	sync           *syncResult     // idle, before the N Releases; nil with -syncs=0
	loadSync       *syncResult     // while the controller works through the N Releases; nil with -load-syncs=0
	alerts         *alertResult    // -alerts: the notifications of the N Releases; nil without
}

// printCalibration prints how long benchenv.Calibrate's fixed workload takes now.
func printCalibration(out io.Writer, when string) error {
	d, err := benchenv.Calibrate(5)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "machine speed %s: %.1f ms for benchenv.Calibrate's fixed JSON workload (fastest of 5; lower is faster)\n",
		when, float64(d.Microseconds())/1000)
	return nil
}

// runOne measures n Releases on a fresh environment, stopped before it returns.
func (cfg *config) runOne(ctx context.Context, bin string, n int) (_ *result, err error) {
	dir := ""
	if cfg.stateDir != "" {
		if dir, err = filepath.Abs(filepath.Join(cfg.stateDir, strconv.Itoa(n))); err != nil {
			return nil, err
		}
	}
	root, err := localcluster.RepoRoot()
	if err != nil {
		return nil, err
	}
	charts, err := chartsDir(root)
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(charts)
	// The machine's speed at this moment, before the environment starts and after it
	// stops: runs of other hours and days compare by it (benchenv.Calibrate).
	if err := printCalibration(os.Stdout, "before the environment starts"); err != nil {
		return nil, err
	}
	defer func() {
		if cerr := printCalibration(os.Stdout, "after it stopped"); err == nil {
			err = cerr
		}
	}()
	be, err := benchenv.Start(ctx, bin, benchenv.Options{Dir: dir, Workloads: true, Nodes: cfg.nodes, Charts: charts, Profiling: cfg.profileDir != ""})
	if err != nil {
		return nil, err
	}
	defer be.Stop()
	e := &env{Env: be}
	namespaces := cfg.namespaces(n)
	if cfg.floor {
		for _, ns := range namespaces {
			if err := e.EnsureNamespace(ctx, ns); err != nil {
				return nil, err
			}
		}
		var design *designFloor
		if cfg.floorDesign {
			if design, err = e.newDesignFloor(ctx, namespaces, cfg.floorDirect); err != nil {
				return nil, err
			}
		}
		fr, err := cfg.measureFloor(ctx, e, n, design)
		if fr != nil {
			fr.print(os.Stdout)
		}
		return nil, err
	}
	if cfg.shards > 0 {
		e.shardLabel = map[string]string{convoyv1alpha1.LabelShard: "0"}
	}
	if cfg.memoryLimit > 0 {
		e.ComponentEnv = []string{fmt.Sprintf("GOMEMLIMIT=%dMiB", cfg.memoryLimit)}
	}
	if err := e.startConvoy(ctx, bin, cfg.profileDir != "", cfg.shards); err != nil {
		return nil, err
	}
	for _, ns := range namespaces {
		if err := e.EnsureNamespace(ctx, ns); err != nil {
			return nil, err
		}
	}
	if err := e.grantAuthor(ctx, namespaces); err != nil {
		return nil, err
	}
	if cfg.alerts {
		if e.sink, err = startSink(); err != nil {
			return nil, err
		}
		defer e.sink.stop()
		if err := e.createAlerts(ctx, namespaces, e.sink.url); err != nil {
			return nil, err
		}
	}
	var sr *syncResult
	if cfg.syncs > 0 || cfg.loadSyncs > 0 {
		if err := e.createSyncRelease(ctx); err != nil {
			return nil, err
		}
	}
	if cfg.syncs > 0 {
		fmt.Fprintf(os.Stderr, "Timing %d /syncs of a manual 10-object Release, idle...\n", cfg.syncs)
		if sr, err = e.timeSyncs(ctx, cfg.syncs, time.Minute); err != nil {
			return nil, err
		}
	}
	res, err := cfg.measure(ctx, e, n)
	if res != nil {
		res.sync = sr
	}
	return res, err
}

func (cfg *config) measure(ctx context.Context, e *env, n int) (*result, error) {
	res := &result{n: n, shards: cfg.shards, clients: cfg.createConcurrency, namespaces: len(cfg.namespaces(n)), loadStart: benchenv.LoadAvg(), steadyEvents: map[string]int{}}
	wctx, wcancel := context.WithCancel(ctx)
	defer wcancel()
	logs := map[string]*readyLog{}
	for _, resource := range []string{"releases", "releaseinventories"} {
		rv, err := e.ListResourceVersion(ctx, metav1.NamespaceAll, resource)
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", resource, err)
		}
		logs[resource] = &readyLog{resource: resource, ready: map[string]time.Time{}}
		go e.watch(wctx, logs[resource], rv)
	}

	m0, p0 := e.metricsNow(ctx), e.Snapshot()
	res.heapStart = heaps(m0)
	fmt.Fprintf(os.Stderr, "Creating %d Releases from %d clients as %s...\n", n, cfg.createConcurrency, author)
	name := releaseName
	created := make([]time.Time, n)
	var failures atomic.Int64
	loadWait := e.cpuProfiles(ctx, cfg.profileDir, n, "load", time.Minute)
	start := time.Now()
	benchenv.ForEach(ctx, n, cfg.createConcurrency, func(i int) {
		for try := 0; try < 5 && ctx.Err() == nil; try++ {
			rctx, cancel := context.WithTimeout(ctx, time.Minute)
			created[i] = time.Now()
			ns := cfg.namespaceOf(i)
			rel := benchenv.PodinfoRelease(ns, name(i), e.Charts.URL)
			if cfg.shards > 0 {
				rel.Labels = map[string]string{convoyv1alpha1.LabelShard: strconv.Itoa(i % cfg.shards)}
			}
			err := e.author.Post().Namespace(ns).Resource("releases").Body(rel).Do(rctx).Error()
			cancel()
			if err == nil || strings.Contains(err.Error(), "already exists") {
				break
			}
			failures.Add(1)
			fmt.Fprintf(os.Stderr, "create %s: %v\n", name(i), err)
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
	})
	res.createElapsed, res.createFailures = time.Since(start), failures.Load()
	fmt.Fprintf(os.Stderr, "  created in %s\n", res.createElapsed.Round(time.Millisecond))
	// /sync → Applied while the controller works through the N Releases.
	loaded := make(chan error, 1)
	if cfg.loadSyncs > 0 {
		fmt.Fprintf(os.Stderr, "Timing %d /syncs of the manual 10-object Release under the load of the %d Releases...\n", cfg.loadSyncs, n)
		go func() {
			var err error
			res.loadSync, err = e.timeSyncs(ctx, cfg.loadSyncs, 5*time.Minute)
			loaded <- err
		}()
	} else {
		loaded <- nil
	}

	rl := logs["releases"]
	deadline := time.Now().Add(cfg.timeout)
	lastPrint := time.Now()
	for rl.readyCount() < n && time.Now().Before(deadline) && ctx.Err() == nil {
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
		if time.Since(lastPrint) > 10*time.Second {
			lastPrint = time.Now()
			fmt.Fprintf(os.Stderr, "  %s: %d/%d Ready\n", time.Since(start).Round(time.Second), rl.readyCount(), n)
		}
	}
	// Read the figures even when the run was interrupted (Ctrl-C, -timeout of the run).
	mctx, mcancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	m1, p1 := e.metricsNow(mctx), e.Snapshot()
	mcancel()
	if err := <-loaded; err != nil {
		fmt.Fprintf(os.Stderr, "/sync under load: %v\n", err)
	}
	res.loadReady = benchenv.LoadAvg()
	res.toReadyReq, res.cpu, res.procs = requestsBetween(m0, m1), benchenv.CPUDelta(p0, p1), p1
	res.heapReady = heaps(m1)
	rl.mu.Lock()
	var last time.Time
	var lats []time.Duration
	for nm, t := range rl.ready {
		last = maxTime(last, t)
		if i, err := strconv.Atoi(strings.TrimPrefix(nm, "podinfo-")); err == nil && i < n {
			lats = append(lats, t.Sub(created[i]))
		}
	}
	res.ready = len(rl.ready)
	readyAt := maps.Clone(rl.ready)
	rl.mu.Unlock()
	res.toReady = last.Sub(start)
	if len(lats) > 0 {
		slices.Sort(lats)
		res.p50, res.p99, res.max = lats[len(lats)/2], lats[min(len(lats)-1, len(lats)*99/100)], lats[len(lats)-1]
	}
	fmt.Fprintf(os.Stderr, "  %d/%d Ready after %s\n", res.ready, n, res.toReady.Round(time.Millisecond))
	if res.ready < n {
		res.loadEnd = benchenv.LoadAvg()
		return res, fmt.Errorf("only %d of %d Releases Ready within %s (logs: %s)", res.ready, n, cfg.timeout, e.Cluster.LogDir())
	}

	if e.sink != nil {
		fmt.Fprintf(os.Stderr, "Waiting for the notifications of the %d Releases...\n", n)
		res.alerts = e.sink.waitDelivered(ctx, n, readyAt, 2*time.Minute)
	}
	e.saveProfiles(ctx, cfg.profileDir, n, "ready")
	loadWait() // one CPU profile at a time

	// The steady window: nothing changes; the last writes of the rollout land first.
	fmt.Fprintf(os.Stderr, "Steady window of %s...\n", cfg.steady)
	select {
	case <-ctx.Done():
		return res, ctx.Err()
	case <-time.After(5 * time.Second):
	}
	t0 := time.Now()
	m2, p2 := e.metricsNow(ctx), e.Snapshot()
	cpuWait := e.cpuProfiles(ctx, cfg.profileDir, n, "steady", cfg.steady)
	select {
	case <-ctx.Done():
		return res, ctx.Err()
	case <-time.After(cfg.steady):
	}
	m3, p3 := e.metricsNow(ctx), e.Snapshot()
	res.steadyDur = time.Since(t0)
	res.steady, res.steadyCPU, res.procs = requestsBetween(m2, m3), benchenv.CPUDelta(p2, p3), p3
	res.heapEnd = heaps(m3)
	cpuWait()
	e.saveProfiles(ctx, cfg.profileDir, n, "steady")
	for r, w := range logs {
		res.steadyEvents[r] = w.eventsSince(t0)
		res.reopened += w.reopened.Load()
	}
	res.loadEnd = benchenv.LoadAvg()
	return res, nil
}

// namespaceOf is the namespace of the i-th Release of a run (benchenv.NamespaceOf).
func (cfg *config) namespaceOf(i int) string {
	return benchenv.NamespaceOf(namespace, cfg.perNamespace, i)
}

// namespaces are the namespaces of the n Releases of a run, in order.
func (cfg *config) namespaces(n int) []string {
	return benchenv.Namespaces(namespace, cfg.perNamespace, n)
}

// releaseName is the name of the i-th Release of a run.
func releaseName(i int) string { return fmt.Sprintf("podinfo-%05d", i) }

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
