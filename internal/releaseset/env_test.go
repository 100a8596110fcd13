package releaseset_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/controller"
	"kumodo.io/convoy/internal/dev/inprocess"
	"kumodo.io/convoy/internal/hostmanager"
	"kumodo.io/convoy/internal/observer"
	"kumodo.io/convoy/internal/releaseset"
	"kumodo.io/convoy/internal/testenv"
	"kumodo.io/convoy/internal/testenv/convoytest"
)

// resync is the informer resync period of the tests' processes: short, so that a test
// of the steady state spans several.
const resync = 2 * time.Second

// fleet is what an end-to-end test works with: a namespace of its own, Clusters of its
// own (all pointing at the local control plane, labelled fleet=<id>), an admin client,
// and the controller and the observer limited to the namespace.
type fleet struct {
	t      *testing.T
	ctx    context.Context
	ns, id string
	c      client.WithWatch
	// metrics is the controller's registry.
	metrics *prometheus.Registry
}

// newFleet makes the test's namespace, a kubeconfig Secret and one Cluster per entry
// of clusters (name → labels besides fleet=<id>), named "<name>-<id>", and starts the
// controller and the observer.
func newFleet(t *testing.T, clusters map[string]map[string]string, opts ...func(*hostmanager.Options)) *fleet {
	t.Helper()
	f, start := newStoppedFleet(t, clusters, opts...)
	start()
	return f
}

// newStoppedFleet is newFleet without the controller and the observer: start starts them.
func newStoppedFleet(t *testing.T, clusters map[string]map[string]string, opts ...func(*hostmanager.Options)) (*fleet, func()) {
	t.Helper()
	testenv.Integration(t)
	ctx := testenv.Context(t, 5*time.Minute)
	c := convoytest.Client(t, host.RestConfig())
	f := &fleet{t: t, ctx: ctx, c: c, ns: testenv.Namespace(t, ctx, c, "rs", nil), id: testenv.RandomSuffix()}
	kubeconfig, err := os.ReadFile(host.KubeconfigPath())
	if err != nil {
		t.Fatal(err)
	}
	testenv.Create(t, ctx, c, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "kubeconfig"}, Data: map[string][]byte{"value": kubeconfig}})
	for name, labels := range clusters {
		all := map[string]string{"fleet": f.id}
		for k, v := range labels {
			all[k] = v
		}
		testenv.RegisterCluster(t, ctx, c, f.cluster(name), all, f.ns, "kubeconfig", nil)
	}
	mo := hostmanager.Options{Resync: resync, Namespaces: []string{f.ns}}
	for _, o := range opts {
		o(&mo)
	}
	f.metrics = prometheus.NewRegistry()
	return f, func() {
		t.Helper()
		startConvoy(t, ctx, inprocess.Options{
			Manager: mo, ChartCacheDir: t.TempDir(),
			Controller: controller.Options{Metrics: f.metrics, AssessmentOverdueAfter: -1},
			Observer:   observer.Options{Metrics: prometheus.NewRegistry()},
		})
	}
}

// inShard runs the test's controller and observer as the shard name (--shard).
func inShard(name string) func(*hostmanager.Options) {
	return func(o *hostmanager.Options) { o.Shard = name }
}

// startConvoy runs the controller and the observer in this process (inprocess.Start)
// until the end of the test.
func startConvoy(t *testing.T, ctx context.Context, o inprocess.Options) {
	t.Helper()
	convoytest.Start(t, ctx, host.RestConfig(), o)
}

// cluster is the name of the test's Cluster name.
func (f *fleet) cluster(name string) string { return name + "-" + f.id }

// release is the name of the Release of set for the test's Cluster name.
func (f *fleet) release(set, name string) string { return releaseset.ReleaseName(set, f.cluster(name)) }

// stagedSet is a ReleaseSet of the fleet chart over the test's Clusters with values,
// automatic sync, and the stages given.
func (f *fleet) stagedSet(name, values string, stages ...v1.Stage) *v1.ReleaseSet {
	return &v1.ReleaseSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name},
		Spec: v1.ReleaseSetSpec{
			ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"fleet": f.id}},
			Template: v1.ReleaseTemplate{Spec: v1.ReleaseSpec{
				Chart:      v1.ChartSource{Repository: charts, Name: "fleet", Version: "0.1.0"},
				Values:     rawJSON(values),
				SyncPolicy: v1.SyncPolicy{Automatic: ptrTo(true)},
			}},
			Strategy: v1.ReleaseSetStrategy{Stages: stages},
		},
	}
}

func (f *fleet) create(obj client.Object) {
	f.t.Helper()
	testenv.Create(f.t, f.ctx, f.c, obj)
}

// set reads the ReleaseSet name.
func (f *fleet) set(name string) *v1.ReleaseSet {
	f.t.Helper()
	return testenv.ReleaseSet(f.t, f.ctx, f.c, f.ns, name)
}

// releases are the Releases of set, by name.
func (f *fleet) releases(set string) map[string]v1.Release {
	f.t.Helper()
	return testenv.SetReleases(f.t, f.ctx, f.c, f.ns, set)
}

// updateTemplate changes the template of set name.
func (f *fleet) updateTemplate(name string, change func(*v1.ReleaseTemplate)) {
	f.t.Helper()
	testenv.UpdateTemplate(f.t, f.ctx, f.c, f.ns, name, change)
}

// phases says where the rollout of set stands: "rev canary Complete, rest Waiting".
func phases(s *v1.ReleaseSet) string {
	return testenv.Phases(s)
}

// waitPhases waits until the status of set name describes its generation, at another
// revision than not, with the stage phases want ("canary Complete, rest Waiting"), and
// returns the set.
func (f *fleet) waitPhases(name, not, want string) *v1.ReleaseSet {
	f.t.Helper()
	return testenv.WaitPhases(f.t, f.ctx, f.c, f.ns, name, not, want, 2*time.Minute)
}

func conditions(cs []metav1.Condition) string {
	return testenv.Conditions(cs)
}

// readyAt says whether rel is Ready at revision rev, as the contract defines it.
func readyAt(rel *v1.Release, rev string) bool {
	return testenv.ReadyAt(rel, rev)
}

// promote POSTs releasesets/<name>/promote as the admin and returns the HTTP status
// and body.
func (f *fleet) promote(name string) (int, string) {
	f.t.Helper()
	return testenv.Post(f.t, f.ctx, host.RestConfig(), f.ns, v1.ResourceReleaseSets+"/"+name+"/"+v1.SubresourcePromote)
}

// mustPromote promotes name and fails the test unless the answer is 200.
func (f *fleet) mustPromote(name string) {
	f.t.Helper()
	if code, body := f.promote(name); code != http.StatusOK {
		f.t.Fatalf("promote %s: %d %s", name, code, body)
	}
}

// stageOrder watches the Releases of a set and records every violation of the
// rollout's order: a Release of a later stage that gets a revision (is created with it,
// or updated to it) while a Release of an earlier stage is not Ready at it, as the
// watch has shown them so far (one resource's watch is in resourceVersion order).
type stageOrder struct {
	mu         sync.Mutex
	violations []string
	events     int
}

// watchStageOrder starts a stageOrder on the Releases of set, whose stages hold the
// Release names of stages, in order.
func (f *fleet) watchStageOrder(set string, stages ...[]string) *stageOrder {
	f.t.Helper()
	stageOf := map[string]int{}
	for i, names := range stages {
		for _, n := range names {
			stageOf[n] = i
		}
	}
	o := &stageOrder{}
	testenv.WatchRevisions(f.t, f.ctx, f.c, f.ns, set, func(rel *v1.Release, latest map[string]*v1.Release, changed bool) {
		o.mu.Lock()
		defer o.mu.Unlock()
		o.events++
		if !changed {
			return
		}
		rev := rel.Annotations[v1.AnnotationReleaseSetRevision]
		for name, i := range stageOf {
			if i >= stageOf[rel.Name] {
				continue
			}
			if earlier := latest[name]; earlier == nil || !readyAt(earlier, rev) {
				o.violations = append(o.violations, fmt.Sprintf("Release %s got revision %s while Release %s of an earlier stage was not Ready at it",
					rel.Name, rev, name))
			}
		}
	})
	return o
}

// check fails the test with the violations seen so far.
func (o *stageOrder) check(t *testing.T) {
	t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.events == 0 {
		t.Error("the watch of the Releases saw no event")
	}
	sort.Strings(o.violations)
	for _, v := range o.violations {
		t.Error(v)
	}
}

// warning says whether a Warning event of reason about the ReleaseSet set, whose note
// contains text, was recorded.
func (f *fleet) warning(set, reason, text string) bool {
	f.t.Helper()
	list := &eventsv1.EventList{}
	if err := f.c.List(f.ctx, list, client.InNamespace(f.ns)); err != nil {
		f.t.Fatal(err)
	}
	for _, e := range list.Items {
		if e.Regarding.Kind == "ReleaseSet" && e.Regarding.Name == set && e.Type == corev1.EventTypeWarning &&
			e.Reason == reason && strings.Contains(e.Note, text) {
			return true
		}
	}
	return false
}

// writes is the controller's convoy_releaseset_release_writes_total of action.
func (f *fleet) writes(action string) float64 {
	f.t.Helper()
	return testenv.Counter(f.t, f.metrics, "convoy_releaseset_release_writes_total", map[string]string{"action": action})
}

// configMap reads a ConfigMap of the test's namespace; nil when there is none.
func (f *fleet) configMap(name string) *corev1.ConfigMap {
	f.t.Helper()
	return testenv.ConfigMap(f.t, f.ctx, f.c, f.ns, name)
}

// resourceVersions are the resourceVersions of set name and of its Releases.
func (f *fleet) resourceVersions(name string) map[string]string {
	f.t.Helper()
	out := map[string]string{"ReleaseSet " + name: f.set(name).ResourceVersion}
	for n, r := range f.releases(name) {
		out["Release "+n] = r.ResourceVersion
	}
	return out
}

func ptrTo[T any](v T) *T { return testenv.Ptr(v) }

func rawJSON(s string) *runtime.RawExtension { return testenv.RawJSON(s) }
