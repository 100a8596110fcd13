package observer

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/dev"
	"kumodo.io/convoy/internal/observer/health"
	"kumodo.io/convoy/internal/targets"
	"kumodo.io/convoy/internal/testenv"
)

// identity is the user the tests' observers run as, with the rules convoy dev grants.
const identity = "convoy-observer"

// env is what an integration test works with: a namespace of its own and an admin
// client.
type env struct {
	t      *testing.T
	ctx    context.Context
	ns     string
	client client.WithWatch
}

func newEnv(t *testing.T) *env {
	t.Helper()
	testenv.Integration(t)
	ctx := testenv.Context(t, 5*time.Minute)
	scheme, err := Scheme()
	if err != nil {
		t.Fatal(err)
	}
	c := testenv.WatchClient(t, controlPlane.RestConfig(), scheme)
	ns := testenv.Namespace(t, ctx, c, "obs", nil)
	return &env{t: t, ctx: ctx, ns: ns, client: c}
}

// observerOptions configure a test's observer.
type observerOptions struct {
	// resync is the host informers' resync period; default 10 minutes.
	resync time.Duration
	// drift is the drift checker; nil: none.
	drift DriftChecker
	// syncer sends /sync; nil: the real one, as the observer's identity.
	syncer Syncer
	// namespaces are more namespaces it observes, besides the test's.
	namespaces []string
	// idleWatchTimeout is Options.IdleWatchTimeout; 0: the default.
	idleWatchTimeout time.Duration
	// settle is Options.Settle; 0: the default.
	settle time.Duration
	// targetTransport wraps the transport of the observer's connections to its target
	// clusters (its informers and reads there), not of its host manager; nil: none.
	targetTransport func(http.RoundTripper) http.RoundTripper
}

// running is an observer started by a test.
type running struct {
	obs  *Observer
	stop func()
}

// syncs is the number of /sync requests it sent.
func (r *running) syncs() int { return int(testutil.ToFloat64(r.obs.metrics.syncRequests)) }

// triggers is the number of occurrences of kind it signalled.
func (r *running) triggers(kind health.TriggerKind) int {
	return int(testutil.ToFloat64(r.obs.metrics.syncTriggers.WithLabelValues(string(kind))))
}

// writes is the number of status writes it made.
func (r *running) writes() int { return int(testutil.ToFloat64(r.obs.metrics.statusWrites)) }

var grantOnce sync.Once
var grantErr error

// startObserver runs an observer limited to the test's namespace, as the user
// convoy-observer with the rules of convoy dev (dev.ObserverRules, and read and patch
// on the host, its target). Cleanup stops it.
func (e *env) startObserver(o observerOptions) *running {
	e.t.Helper()
	grantOnce.Do(func() { grantErr = grantObserver(context.Background(), controlPlane.RestConfig()) })
	if grantErr != nil {
		e.t.Fatal(grantErr)
	}
	cfg, err := controlPlane.UserConfig(identity)
	if err != nil {
		e.t.Fatal(err)
	}
	if o.resync == 0 {
		o.resync = 10 * time.Minute
	}
	mgr, err := NewManager(cfg, ManagerOptions{
		Resync: o.resync, MetricsBindAddress: "0", HealthProbeBindAddress: "0",
		Namespaces: append([]string{e.ns}, o.namespaces...),
	})
	if err != nil {
		e.t.Fatal(err)
	}
	var resolver targets.Resolver
	if o.targetTransport != nil {
		host := rest.CopyConfig(cfg)
		host.WrapTransport = o.targetTransport
		if resolver, err = targets.New(targets.Options{Host: host, Reader: mgr.GetClient()}); err != nil {
			e.t.Fatal(err)
		}
	}
	obs, err := Setup(mgr, Options{
		Clusters: resolver,
		Drift:    o.drift, Syncer: o.syncer, Metrics: prometheus.NewRegistry(), SkipNameValidation: true,
		IdleWatchTimeout: o.idleWatchTimeout, Settle: o.settle,
	})
	if err != nil {
		e.t.Fatal(err)
	}
	stop := testenv.RunManager(e.t, e.ctx, "observer manager", mgr)
	return &running{obs: obs, stop: stop}
}

// grantObserver gives the user identity what convoy dev gives it.
func grantObserver(ctx context.Context, cfg *rest.Config) error {
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		return err
	}
	roles := map[string][]rbacv1.PolicyRule{
		identity:           dev.ObserverRules(),
		identity + ":test": dev.ObserverTargetRules(),
	}
	for name, rules := range roles {
		if err := c.Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}); err != nil {
			return err
		}
		b := &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: identity}},
		}
		if err := c.Create(ctx, b); err != nil {
			return err
		}
	}
	return nil
}

// create creates obj in the test's namespace (when it has none).
func (e *env) create(obj client.Object) {
	e.t.Helper()
	if obj.GetNamespace() == "" {
		obj.SetNamespace(e.ns)
	}
	if err := e.client.Create(e.ctx, obj); err != nil {
		e.t.Fatalf("create %T %s: %v", obj, obj.GetName(), err)
	}
}

// inventory reads the ReleaseInventory name.
func (e *env) inventory(name string) *v1.ReleaseInventory {
	e.t.Helper()
	inv := &v1.ReleaseInventory{}
	if err := e.client.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: name}, inv); err != nil {
		e.t.Fatalf("get ReleaseInventory %s: %v", name, err)
	}
	return inv
}

// release reads the Release name.
func (e *env) release(name string) *v1.Release {
	e.t.Helper()
	return e.releaseIn(e.ns, name)
}

// releaseIn reads the Release name of the namespace ns.
func (e *env) releaseIn(ns, name string) *v1.Release {
	e.t.Helper()
	rel := &v1.Release{}
	if err := e.client.Get(e.ctx, client.ObjectKey{Namespace: ns, Name: name}, rel); err != nil {
		e.t.Fatalf("get Release %s/%s: %v", ns, name, err)
	}
	return rel
}

// rendered writes ref to the Release name's status.render, as the controller does
// when it renders: the observer binds its /syncs to the render they concern, and the
// API server accepts one only while that render is the Release's current (or pinned)
// one.
func (e *env) rendered(name, ref string) {
	e.t.Helper()
	rel := e.release(name)
	rel.Status.Render = &v1.RenderStatus{Ref: ref}
	if err := e.client.Status().Update(e.ctx, rel); err != nil {
		e.t.Fatalf("write the render of Release %s: %v", name, err)
	}
}

// newNamespace creates another namespace for the test, beside its own.
func (e *env) newNamespace() string {
	e.t.Helper()
	return testenv.Namespace(e.t, e.ctx, e.client, "obs", nil)
}

// waitHealth waits until the inventory name's status says health for renderRef and
// returns the inventory.
func (e *env) waitHealth(name, renderRef string, want v1.HealthStatus) *v1.ReleaseInventory {
	e.t.Helper()
	var inv *v1.ReleaseInventory
	e.eventually(fmt.Sprintf("ReleaseInventory %s %s for %s", name, want, renderRef), func() (bool, string) {
		inv = e.inventory(name)
		st := inv.Status
		return st.RenderRef == renderRef && st.Health == want,
			fmt.Sprintf("renderRef %q, health %q, objects %v", st.RenderRef, st.Health, st.Objects)
	})
	return inv
}

// eventually polls cond until it holds; it fails the test with what cond last said.
func (e *env) eventually(what string, cond func() (bool, string)) {
	e.t.Helper()
	testenv.Eventually(e.t, e.ctx, what, 2*time.Minute, cond)
}

// consistently checks that cond holds for the whole of d; it proves that something
// does not happen.
func (e *env) consistently(what string, d time.Duration, cond func() (bool, string)) {
	e.t.Helper()
	testenv.Consistently(e.t, e.ctx, what, d, cond)
}

// syncWatch counts the /sync requests that reach the Releases of the test's namespace:
// the changes of their sync-requested-at annotation, seen through a watch.
type syncWatch struct {
	mu     sync.Mutex
	values map[string][]string // by Release name
}

// watchSyncs starts counting. Cleanup stops it.
func (e *env) watchSyncs() *syncWatch {
	e.t.Helper()
	w, err := e.client.Watch(e.ctx, &v1.ReleaseList{}, client.InNamespace(e.ns))
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(w.Stop)
	s := &syncWatch{values: map[string][]string{}}
	go func() {
		for ev := range w.ResultChan() {
			rel, ok := ev.Object.(*v1.Release)
			if !ok || ev.Type == watch.Deleted {
				continue
			}
			v := rel.Annotations[v1.AnnotationSyncRequestedAt]
			s.mu.Lock()
			vs := s.values[rel.Name]
			if v != "" && (len(vs) == 0 || vs[len(vs)-1] != v) {
				s.values[rel.Name] = append(vs, v)
			}
			s.mu.Unlock()
		}
	}()
	return s
}

// count is the number of /sync requests seen for the Release name.
func (s *syncWatch) count(name string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.values[name])
}
