package controller

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sigstore/sigstore-go/pkg/root"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/testenv"
)

// env is what an integration test works with: a namespace of its own, an admin
// client, and a release controller limited to that namespace.
type env struct {
	t      *testing.T
	ctx    context.Context
	ns     string
	client client.WithWatch
	calls  *calls
	// reconciler is the controller's Reconciler, for tests that call it directly.
	reconciler *Reconciler
	// opts are the options the controller was started with.
	opts envOptions
	// stopController stops the controller; stopped is closed once its manager stopped.
	stopController context.CancelFunc
	stopped        <-chan struct{}
}

// envOptions configure the controller of a test.
type envOptions struct {
	// resync is the informer resync period; default 10 minutes, so that only the
	// events under test start reconciles.
	resync time.Duration
	// requests, when set, counts the controller's API requests.
	requests *requestCounter
	// transport, when set, wraps the controller's transport (after requests), e.g. to
	// make some of its requests fail.
	transport func(http.RoundTripper) http.RoundTripper
	// concurrency is the controller's number of workers (default: Setup's).
	concurrency int
	// middleware, when set, wraps the reconciler (outside the record of calls).
	middleware func(reconcile.Reconciler) reconcile.Reconciler
	// healthDataDelay is Options.HealthDataDelay (default: Setup's).
	healthDataDelay time.Duration
	// assessmentOverdueAfter is Options.AssessmentOverdueAfter. Default: off, since no
	// observer runs in these tests and every applied render's assessment would
	// become overdue (the tests of overdue_test.go set it).
	assessmentOverdueAfter time.Duration
	// requireVerifiedCharts is Options.RequireVerifiedCharts.
	requireVerifiedCharts bool
	// sigstoreRoot is Options.SigstoreTrustedRoot (keyless cosign signatures).
	sigstoreRoot root.TrustedMaterial
}

// requestCounter counts the controller's HTTP requests, as testenv.RequestCounter
// counts internal/apply's.
type requestCounter struct{ testenv.RequestCounter }

// snapshot is the count of requests so far and each as "METHOD path?query".
func (c *requestCounter) snapshot() (int, []string) { return c.Log() }

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// newEnv makes the test's namespace and starts a controller on it.
func newEnv(t *testing.T, o envOptions) *env {
	t.Helper()
	testenv.Integration(t)
	if o.resync == 0 {
		o.resync = 10 * time.Minute
	}
	if o.assessmentOverdueAfter == 0 {
		o.assessmentOverdueAfter = -1
	}
	ctx := testenv.Context(t, 4*time.Minute)
	scheme, err := Scheme()
	if err != nil {
		t.Fatal(err)
	}
	c := testenv.WatchClient(t, hostConfig(), scheme)
	ns := testenv.Namespace(t, ctx, c, "ctrl", nil)
	e := &env{t: t, ctx: ctx, ns: ns, client: c, calls: &calls{}, opts: o}
	e.startController()
	return e
}

// startController starts a release controller on the test's namespace with the
// test's options, as convoy controller builds it: a new manager and Setup.
func (e *env) startController() {
	t, ctx, o := e.t, e.ctx, e.opts
	t.Helper()
	ctx, stop := context.WithCancel(ctx)
	e.stopController = stop
	mgrConfig := hostConfig()
	if o.requests != nil {
		mgrConfig.WrapTransport = o.requests.Wrap
	}
	if o.transport != nil {
		counted := mgrConfig.WrapTransport
		mgrConfig.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
			if counted != nil {
				rt = counted(rt)
			}
			return o.transport(rt)
		}
	}
	mgr, err := NewManager(mgrConfig, ManagerOptions{
		Resync:                 o.resync,
		MetricsBindAddress:     "0",
		HealthProbeBindAddress: "0",
		Namespaces:             []string{e.ns},
	})
	if err != nil {
		t.Fatal(err)
	}
	fetcher := testenv.Fetcher(t)
	middleware := e.calls.wrap
	if o.middleware != nil {
		middleware = func(r reconcile.Reconciler) reconcile.Reconciler { return o.middleware(e.calls.wrap(r)) }
	}
	e.reconciler, err = Setup(ctx, mgr, Options{
		Source:                 fetcher,
		Metrics:                prometheus.NewRegistry(),
		SkipNameValidation:     true,
		Middleware:             middleware,
		Concurrency:            o.concurrency,
		HealthDataDelay:        o.healthDataDelay,
		AssessmentOverdueAfter: o.assessmentOverdueAfter,
		RequireVerifiedCharts:  o.requireVerifiedCharts,
		SigstoreTrustedRoot:    o.sigstoreRoot,
	})
	if err != nil {
		t.Fatal(err)
	}
	e.stopped = startManager(t, ctx, mgr)
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		t.Fatal("the controller's cache did not sync")
	}
}

// restartController stops the test's controller, waits until its manager has
// stopped, and starts a new one: what survives in the controller's memory (failure
// counts, the work queue's retry counts) is gone, as after a restart of the process.
func (e *env) restartController() {
	e.t.Helper()
	e.stopController()
	<-e.stopped
	e.startController()
}

// startManager runs mgr until ctx ends or the test does; the channel it returns is
// closed once mgr has stopped.
func startManager(t *testing.T, ctx context.Context, mgr manager.Manager) <-chan struct{} {
	t.Helper()
	return testenv.StartManager(t, ctx, "manager", mgr)
}

// calls records the reconciles the controller makes and what they returned.
type calls struct {
	mu      sync.Mutex
	count   map[types.NamespacedName]int
	results map[types.NamespacedName][]result
}

type result struct {
	res reconcile.Result
	err error
	// at is when the reconcile returned.
	at time.Time
}

func (c *calls) wrap(r reconcile.Reconciler) reconcile.Reconciler {
	return reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		res, err := r.Reconcile(ctx, req)
		at := time.Now()
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.count == nil {
			c.count = map[types.NamespacedName]int{}
			c.results = map[types.NamespacedName][]result{}
		}
		c.count[req.NamespacedName]++
		c.results[req.NamespacedName] = append(c.results[req.NamespacedName], result{res: res, err: err, at: at})
		return res, err
	})
}

// reconciles is how many reconciles of name have finished.
func (e *env) reconciles(name string) int {
	e.calls.mu.Lock()
	defer e.calls.mu.Unlock()
	return e.calls.count[types.NamespacedName{Namespace: e.ns, Name: name}]
}

// results are what the reconciles of name returned so far, in order.
func (e *env) results(name string) []result {
	e.calls.mu.Lock()
	defer e.calls.mu.Unlock()
	return append([]result(nil), e.calls.results[types.NamespacedName{Namespace: e.ns, Name: name}]...)
}

// lastResult is what the last reconcile of name returned.
func (e *env) lastResult(name string) (result, bool) {
	e.calls.mu.Lock()
	defer e.calls.mu.Unlock()
	rs := e.calls.results[types.NamespacedName{Namespace: e.ns, Name: name}]
	if len(rs) == 0 {
		return result{}, false
	}
	return rs[len(rs)-1], true
}

// createRelease creates a Release of the test chart in the test's namespace.
func (e *env) createRelease(name string, opts ...releaseOption) *v1.Release {
	e.t.Helper()
	testChart := func(r *v1.Release) { r.Spec.Chart = v1.ChartSource{Repository: charts.url(), Name: "app"} }
	rel := testRelease(name, append([]releaseOption{inNamespace(e.ns), testChart}, opts...)...)
	rel.ResourceVersion, rel.Generation = "", 0
	if err := e.client.Create(e.ctx, rel); err != nil {
		e.t.Fatalf("create Release %s: %v", name, err)
	}
	return rel
}

// release reads the Release name.
func (e *env) release(name string) *v1.Release {
	e.t.Helper()
	return testenv.Release(e.t, e.ctx, e.client, e.ns, name)
}

// update changes the Release name through the main resource (a merge patch).
func (e *env) update(name string, opts ...releaseOption) *v1.Release {
	e.t.Helper()
	rel := e.release(name)
	changed := with(rel, opts...)
	if err := e.client.Patch(e.ctx, changed, client.MergeFrom(rel)); err != nil {
		e.t.Fatalf("patch Release %s: %v", name, err)
	}
	return changed
}

// eventually polls cond until it holds; it fails the test with what cond last said.
func (e *env) eventually(what string, cond func() (bool, string)) {
	e.t.Helper()
	testenv.Eventually(e.t, e.ctx, what, 90*time.Second, cond)
}

// consistently checks that cond holds for the whole of d, polling; it fails the test
// as soon as it does not. It proves that something does not happen.
func (e *env) consistently(what string, d time.Duration, cond func() (bool, string)) {
	e.t.Helper()
	testenv.Consistently(e.t, e.ctx, what, d, cond)
}

// waitApplied waits until the Applied condition of name has status and reason, and
// returns the Release.
func (e *env) waitApplied(name, status, reason string) *v1.Release {
	e.t.Helper()
	return testenv.WaitApplied(e.t, e.ctx, e.client, e.ns, name, status, reason, 90*time.Second)
}

// waitReconciled waits until name has been reconciled more than n times.
func (e *env) waitReconciled(name string, n int) {
	e.t.Helper()
	e.eventually(fmt.Sprintf("a reconcile of %s after %d", name, n), func() (bool, string) {
		got := e.reconciles(name)
		return got > n, fmt.Sprintf("%d reconciles", got)
	})
}

// settle waits until the controller has stopped reconciling name (no reconcile for
// 1.5 s) and returns the count of reconciles.
func (e *env) settle(name string) int {
	e.t.Helper()
	last, since := e.reconciles(name), time.Now()
	e.eventually("the controller to settle", func() (bool, string) {
		if n := e.reconciles(name); n != last {
			last, since = n, time.Now()
		}
		return time.Since(since) > 1500*time.Millisecond, fmt.Sprintf("%d reconciles", last)
	})
	return last
}

// requestsSettled waits until counter has counted no request for 1.5 s and returns
// its total.
func (e *env) requestsSettled(counter *requestCounter) int {
	e.t.Helper()
	last, _ := counter.snapshot()
	since := time.Now()
	e.eventually("the controller's requests to settle", func() (bool, string) {
		if n, _ := counter.snapshot(); n != last {
			last, since = n, time.Now()
		}
		return time.Since(since) > 1500*time.Millisecond, fmt.Sprintf("%d requests", last)
	})
	return last
}

// sync POSTs releases/<name>/sync (with ?force=true when force) and returns the
// Release as the server answered.
func (e *env) sync(name string, force bool) *v1.Release {
	e.t.Helper()
	testenv.PostSync(e.t, e.ctx, hostConfig(), e.ns, name, force)
	return e.release(name)
}

// configMap reads a ConfigMap of the test's namespace; nil when it does not exist.
func (e *env) configMap(name string) *corev1.ConfigMap {
	e.t.Helper()
	return testenv.ConfigMap(e.t, e.ctx, e.client, e.ns, name)
}

// writeHealthy writes what the observer writes when every object of renderRef is
// Healthy to the status of name's ReleaseInventory (SP-29's trigger).
func (e *env) writeHealthy(name, renderRef string) {
	e.t.Helper()
	inv := &v1.ReleaseInventory{}
	if err := e.client.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: name}, inv); err != nil {
		e.t.Fatal(err)
	}
	observed := inv.DeepCopy()
	now := metav1.Now()
	observed.Status = v1.ReleaseInventoryStatus{
		RenderRef: renderRef, AssessedAt: &now, Health: v1.HealthHealthy,
		Waves: []v1.WaveHealth{{Wave: 0, Health: v1.HealthHealthy}},
	}
	if err := e.client.Status().Patch(e.ctx, observed, client.MergeFrom(inv)); err != nil {
		e.t.Fatal(err)
	}
}

// outlivedGone says whether the Release old is gone: no Release of its name, or one of
// another UID (a Release created since).
func (e *env) outlivedGone(old *v1.Release) (bool, string) {
	rel := &v1.Release{}
	err := e.client.Get(e.ctx, client.ObjectKeyFromObject(old), rel)
	switch {
	case err == nil && rel.UID == old.UID:
		return false, fmt.Sprintf("the Release is there, deletionTimestamp %v", rel.DeletionTimestamp)
	case err != nil && !apierrors.IsNotFound(err):
		return false, fmt.Sprintf("get the Release: %v", err)
	}
	return true, ""
}

// recreateNamespace removes the test's namespace ns at once, its content left in
// storage (the namespace finalized without emptying it, as the namespace controller
// does on a discovery without convoy's API), and creates it again with its labels.
func (e *env) recreateNamespace(kube kubernetes.Interface, ns *corev1.Namespace) *corev1.Namespace {
	e.t.Helper()
	ns.Spec.Finalizers = nil
	if _, err := kube.CoreV1().Namespaces().Finalize(e.ctx, ns, metav1.UpdateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	// The first delete makes the namespace Terminating; the namespace controller does
	// nothing with a namespace already finalized, and the next delete removes it.
	e.eventually("namespace "+e.ns+" gone", func() (bool, string) {
		err := kube.CoreV1().Namespaces().Delete(e.ctx, e.ns, metav1.DeleteOptions{})
		return apierrors.IsNotFound(err), fmt.Sprintf("delete: %v", err)
	})
	again := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: e.ns, Labels: ns.Labels}}
	if err := e.client.Create(e.ctx, again); err != nil {
		e.t.Fatal(err)
	}
	return again
}
