package shards_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/controller"
	"kumodo.io/convoy/internal/hostmanager"
	"kumodo.io/convoy/internal/observer"
	"kumodo.io/convoy/internal/testenv"
	"kumodo.io/convoy/internal/testenv/convoytest"
	"kumodo.io/convoy/internal/wiring"
)

// shard is one shard's release controller and observer, each a manager of its own
// (as `convoy controller --shard` and `convoy observer --shard` are processes of their
// own), with their metrics in registries of their own.
type shard struct {
	name                 string
	controller, observer *prometheus.Registry
	// ctlCache and obsCache are the controller's and the observer's caches.
	ctlCache, obsCache client.Reader
}

// startShard runs the controller and the observer of shard name on namespace ns until
// the end of the test, or until ctx ends.
func startShard(t *testing.T, ctx context.Context, ns, name string) *shard {
	t.Helper()
	s := startController(t, ctx, ns, name)
	s.startObserver(t, ctx, ns)
	return s
}

// managerOptions are the options of the managers of shard name on namespace ns.
func managerOptions(ns, name string) hostmanager.Options {
	return hostmanager.Options{
		// Only the events under test reconcile: no resync within the test.
		Resync:                 10 * time.Minute,
		Shard:                  name,
		MetricsBindAddress:     "0",
		HealthProbeBindAddress: "0",
		Namespaces:             []string{ns},
	}
}

// startController runs the controller of shard name on namespace ns, without its
// observer (startObserver), until the end of the test, or until ctx ends.
func startController(t *testing.T, ctx context.Context, ns, name string) *shard {
	t.Helper()
	s := &shard{name: name, controller: prometheus.NewRegistry(), observer: prometheus.NewRegistry()}
	ctlMgr, err := controller.NewManager(host.RestConfig(), managerOptions(ns, name))
	if err != nil {
		t.Fatal(err)
	}
	fetcher := testenv.Fetcher(t)
	if _, err := wiring.Setup(ctx, ctlMgr, wiring.Options{Release: controller.Options{
		Source: fetcher, Metrics: s.controller, SkipNameValidation: true,
	}}); err != nil {
		t.Fatal(err)
	}
	run(t, ctx, ctlMgr)
	s.ctlCache = ctlMgr.GetCache()
	return s
}

// startObserver runs the observer of shard s on namespace ns until the end of the
// test, or until ctx ends.
func (s *shard) startObserver(t *testing.T, ctx context.Context, ns string) {
	t.Helper()
	obsMgr, err := observer.NewManager(host.RestConfig(), managerOptions(ns, s.name))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := observer.Setup(obsMgr, observer.Options{Metrics: s.observer, SkipNameValidation: true}); err != nil {
		t.Fatal(err)
	}
	run(t, ctx, obsMgr)
	s.obsCache = obsMgr.GetCache()
}

// run starts mgr and stops it at the end of the test.
func run(t *testing.T, ctx context.Context, mgr manager.Manager) {
	t.Helper()
	testenv.StartManager(t, ctx, "manager", mgr)
	testenv.WaitForCacheSync(t, ctx, "a manager", mgr)
}

// counts are what a shard did so far: the Release reconciles of its controller
// (convoy_release_reconcile_duration_seconds: reconciles of a Release the controller
// found, not those that found it gone), the assessments of its observer
// (convoy_observer_assessment_duration_seconds), and whether its controller reports the
// Release in convoy_release_ready (one series per Release of the shard).
type counts struct {
	reconciles, assessments uint64
	reportsReady            bool
}

func (s *shard) counts(t *testing.T, key types.NamespacedName) counts {
	t.Helper()
	var c counts
	for _, g := range []struct {
		reg  *prometheus.Registry
		name string
		into *uint64
	}{
		{s.controller, "convoy_release_reconcile_duration_seconds", &c.reconciles},
		{s.observer, "convoy_observer_assessment_duration_seconds", &c.assessments},
	} {
		mfs, err := g.reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range mfs {
			if mf.GetName() != g.name {
				continue
			}
			for _, m := range mf.GetMetric() {
				*g.into += m.GetHistogram().GetSampleCount()
			}
		}
	}
	mfs, err := s.controller.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "convoy_release_ready" {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["namespace"] == key.Namespace && labels["name"] == key.Name {
				c.reportsReady = true
			}
		}
	}
	return c
}

func (c counts) String() string {
	return fmt.Sprintf("%d reconciles, %d assessments, reports Ready: %t", c.reconciles, c.assessments, c.reportsReady)
}

// A Release is reconciled by the controller and assessed by the observer of the shard
// its convoy.kumodo.io/shard label names, and by no other; when the label moves it to
// another shard, the new shard's controller and observer take it over and the old
// shard's let it go: its later changes are reconciled and assessed by the new shard
// only (docs/operations/scaling.md, "Sharding").
func TestAReleaseMovedBetweenShardsIsReconciledByExactlyOne(t *testing.T) {
	ctx, c, ns := setUp(t, 4*time.Minute, "shards")
	a, b := startShard(t, ctx, ns, "a"), startShard(t, ctx, ns, "b")
	key := types.NamespacedName{Namespace: ns, Name: "moved"}

	rel := &v1.Release{
		ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name, Labels: map[string]string{v1.LabelShard: "a"}},
		Spec: v1.ReleaseSpec{
			Chart:      v1.ChartSource{Repository: charts, Name: "configmap", Version: "0.1.0"},
			Values:     &runtime.RawExtension{Raw: []byte(`{"value":"first"}`)},
			SyncPolicy: v1.SyncPolicy{Automatic: ptr.To(true)},
		},
	}
	if err := c.Create(ctx, rel); err != nil {
		t.Fatal(err)
	}
	waitReady(t, ctx, c, key, "first")
	ca, cb := a.counts(t, key), b.counts(t, key)
	if ca.reconciles == 0 || ca.assessments == 0 || !ca.reportsReady {
		t.Errorf("shard a, whose label the Release carries, did not take it: %s", ca)
	}
	if cb != (counts{}) {
		t.Errorf("shard b took a Release of shard a: %s", cb)
	}

	// Move it: only the label changes (no generation, no /sync).
	patch := fmt.Appendf(nil, `{"metadata":{"labels":{%q:"b"}}}`, v1.LabelShard)
	if err := c.Patch(ctx, rel, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, ctx, "shard b to take the Release and shard a to let it go", time.Minute, func() (bool, string) {
		ca, cb := a.counts(t, key), b.counts(t, key)
		return cb.reconciles > 0 && cb.assessments > 0 && cb.reportsReady && !ca.reportsReady,
			fmt.Sprintf("shard a: %s; shard b: %s", ca, cb)
	})
	before := a.counts(t, key)

	// A change of the moved Release is applied by shard b and assessed by its
	// observer; shard a does nothing with it (its caches no longer hold the Release
	// nor its inventory, which carries shard b's label now).
	// A merge patch without a resourceVersion: shard b writes the Release's status at
	// any moment, and an update could conflict with it.
	values := []byte(`{"spec":{"values":{"value":"second"}}}`)
	if err := c.Patch(ctx, rel, client.RawPatch(types.MergePatchType, values)); err != nil {
		t.Fatal(err)
	}
	movedB := b.counts(t, key)
	waitReady(t, ctx, c, key, "second")
	if after := b.counts(t, key); after.reconciles <= movedB.reconciles || after.assessments <= movedB.assessments {
		t.Errorf("shard b did not reconcile and assess the change: before %s; after %s", movedB, after)
	}
	testenv.Consistently(t, ctx, "shard a leaves the moved Release alone", 3*time.Second, func() (bool, string) {
		now := a.counts(t, key)
		return now == before, fmt.Sprintf("shard a: %s after the move, %s now", before, now)
	})
}

// waitReady waits until the Release is Ready for its current generation, its
// ConfigMap holds value and its inventory's health assesses the render applied last.
func waitReady(t *testing.T, ctx context.Context, c client.Client, key types.NamespacedName, value string) {
	t.Helper()
	testenv.Eventually(t, ctx, fmt.Sprintf("Release %s Ready with %q", key, value), 2*time.Minute, func() (bool, string) {
		rel, inv, cm := &v1.Release{}, &v1.ReleaseInventory{}, &corev1.ConfigMap{}
		if err := c.Get(ctx, key, rel); err != nil {
			return false, err.Error()
		}
		if err := c.Get(ctx, key, inv); err != nil {
			return false, err.Error()
		}
		if err := c.Get(ctx, key, cm); err != nil {
			return false, err.Error()
		}
		ready := apimeta.FindStatusCondition(rel.Status.Conditions, v1.ConditionReady)
		last := ""
		if rel.Status.LastSuccessful != nil {
			last = rel.Status.LastSuccessful.RenderRef
		}
		ok := ready != nil && ready.Status == "True" && rel.Status.ObservedGeneration == rel.Generation &&
			cm.Data["value"] == value && last != "" && inv.Status.RenderRef == last
		return ok, fmt.Sprintf("Ready %v, generation %d observed %d, ConfigMap value %q, last applied %q, assessed %q",
			ready, rel.Generation, rel.Status.ObservedGeneration, cm.Data["value"], last, inv.Status.RenderRef)
	})
}

// setUp starts a test: a context of timeout, the admin's client and a new namespace
// named after prefix.
func setUp(t *testing.T, timeout time.Duration, prefix string) (context.Context, client.Client, string) {
	t.Helper()
	return convoytest.SetUp(t, host.RestConfig(), timeout, prefix)
}
