package observer

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/controller"
	"kumodo.io/convoy/internal/observer/drift"
	"kumodo.io/convoy/internal/policy"
	"kumodo.io/convoy/internal/testenv"
	"kumodo.io/convoy/internal/wiring"
)

// End to end with the release controller: the observer's /syncs carry a sync that a
// person started through the sync waves of a render.

// controllerOptions configure a test's release controller.
type controllerOptions struct {
	// namespaces are more namespaces it reconciles, besides the test's.
	namespaces []string
	// middleware, when set, wraps its Reconciler (to count reconciles).
	middleware func(reconcile.Reconciler) reconcile.Reconciler
	// transport, when set, wraps its client's transport (to make requests fail).
	transport func(http.RoundTripper) http.RoundTripper
}

// startController runs the release controller in this process, limited to the test's
// namespace, as the local control plane's admin. Cleanup stops it.
func (e *env) startController() {
	e.t.Helper()
	e.startControllerWith(controllerOptions{})
}

// startControllerWith runs the release controller as startController does, with o.
// Its informer resync is 10 minutes: no test waits for it.
func (e *env) startControllerWith(o controllerOptions) {
	e.t.Helper()
	cfg := rest.CopyConfig(controlPlane.RestConfig())
	cfg.WrapTransport = o.transport
	mgr, err := controller.NewManager(cfg, controller.ManagerOptions{
		Resync: 10 * time.Minute, MetricsBindAddress: "0", HealthProbeBindAddress: "0",
		Namespaces: append([]string{e.ns}, o.namespaces...),
	})
	if err != nil {
		e.t.Fatal(err)
	}
	fetcher := testenv.Fetcher(e.t)
	if _, err := wiring.Setup(e.ctx, mgr, wiring.Options{Release: controller.Options{
		Source: fetcher, Metrics: prometheus.NewRegistry(), SkipNameValidation: true, Middleware: o.middleware,
	}}); err != nil {
		e.t.Fatal(err)
	}
	testenv.StartManager(e.t, e.ctx, "controller manager", mgr)
}

// sync POSTs releases/<name>/sync as the admin (a person) and returns the time written.
func (e *env) sync(name string) string {
	e.t.Helper()
	testenv.PostSync(e.t, e.ctx, controlPlane.RestConfig(), e.ns, name, false)
	return e.release(name).Annotations[v1.AnnotationSyncRequestedAt]
}

// forceSync POSTs releases/<name>/sync?force=true as the admin and returns the time
// written.
func (e *env) forceSync(name string) string {
	e.t.Helper()
	testenv.PostSync(e.t, e.ctx, controlPlane.RestConfig(), e.ns, name, true)
	return e.release(name).Annotations[v1.AnnotationSyncRequestedAt]
}

// waitCondition waits until the condition typ of the Release name has status and
// reason, and returns the Release.
func (e *env) waitCondition(name, typ string, status metav1.ConditionStatus, reason string) *v1.Release {
	e.t.Helper()
	return e.waitConditionIn(e.ns, name, typ, status, reason)
}

// waitConditionIn is waitCondition for the Release name of the namespace ns.
func (e *env) waitConditionIn(ns, name, typ string, status metav1.ConditionStatus, reason string) *v1.Release {
	e.t.Helper()
	var rel *v1.Release
	e.eventually(fmt.Sprintf("Release %s/%s %s=%s/%s", ns, name, typ, status, reason), func() (bool, string) {
		rel = e.releaseIn(ns, name)
		c := apimeta.FindStatusCondition(rel.Status.Conditions, typ)
		if c == nil {
			return false, "no " + typ + " condition"
		}
		return c.Status == status && c.Reason == reason, fmt.Sprintf("%s=%s/%s: %s", typ, c.Status, c.Reason, c.Message)
	})
	return rel
}

// deploymentEvents records, in the order the API server made them, when each
// Deployment of the namespace appeared and when it first became Available.
type deploymentEvents struct {
	mu  sync.Mutex
	log []string
}

func (e *env) watchDeployments() *deploymentEvents {
	e.t.Helper()
	w, err := e.client.Watch(e.ctx, &appsv1.DeploymentList{}, client.InNamespace(e.ns))
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(w.Stop)
	d := &deploymentEvents{}
	go func() {
		for ev := range w.ResultChan() {
			dep, ok := ev.Object.(*appsv1.Deployment)
			if !ok || ev.Type == watch.Deleted {
				continue
			}
			d.add("applied " + dep.Name)
			for _, c := range dep.Status.Conditions {
				if c.Type == appsv1.DeploymentAvailable && c.Status == corev1.ConditionTrue {
					d.add("available " + dep.Name)
				}
			}
		}
	}()
	return d
}

// add appends what unless it was recorded before.
func (d *deploymentEvents) add(what string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !slices.Contains(d.log, what) {
		d.log = append(d.log, what)
	}
}

// index is the position of what in the log; -1 when it did not happen.
func (d *deploymentEvents) index(what string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Index(d.log, what)
}

func (d *deploymentEvents) String() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return strings.Join(d.log, ", ")
}

// releaseHistory records every status of a Release that the API server stored.
type releaseHistory struct {
	mu     sync.Mutex
	states []v1.ReleaseStatus
}

func (e *env) watchRelease(name string) *releaseHistory {
	e.t.Helper()
	w, err := e.client.Watch(e.ctx, &v1.ReleaseList{}, client.InNamespace(e.ns))
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(w.Stop)
	h := &releaseHistory{}
	go func() {
		for ev := range w.ResultChan() {
			if rel, ok := ev.Object.(*v1.Release); ok && rel.Name == name {
				h.mu.Lock()
				h.states = append(h.states, *rel.Status.DeepCopy())
				h.mu.Unlock()
			}
		}
	}()
	return h
}

// SP-14: in manual mode one /sync by a person applies a 3-wave render wave by wave:
// wave 1 only after wave 0's Deployment is Available, wave 2 only after wave 1's. The
// observer's /syncs (a wave completes while the Release is WaitingForSyncWave) carry
// it through without another request from the person; lastHandledSyncAt is set only
// after the last wave; the Release ends Applied and Healthy.
func TestSP14_ManualSyncCarriesThroughThreeWaves(t *testing.T) {
	e := newEnv(t)
	deployments := e.watchDeployments()
	history := e.watchRelease("app")
	syncs := e.watchSyncs()
	e.startController()
	obs := e.startObserver(observerOptions{})
	e.create(testRelease(e.ns, "app"))
	e.waitCondition("app", v1.ConditionApplied, metav1.ConditionFalse, v1.ReasonWaitingForSync)

	person := e.sync("app")
	rel := e.waitCondition("app", v1.ConditionApplied, metav1.ConditionTrue, v1.ReasonApplied)
	e.waitCondition("app", v1.ConditionHealthy, metav1.ConditionTrue, v1.ReasonHealthy)
	e.waitCondition("app", v1.ConditionReady, metav1.ConditionTrue, policy.ReasonReady)

	for _, step := range [][2]string{{"available wave-0", "applied wave-1"}, {"available wave-1", "applied wave-2"}} {
		before, after := deployments.index(step[0]), deployments.index(step[1])
		if before < 0 || after < 0 || before > after {
			t.Errorf("%q must come before %q; events: %s", step[0], step[1], deployments)
		}
	}
	t.Logf("Deployments: %s; /sync: the person's at %s, %d by the observer", deployments, person, obs.syncs())
	if rel.Status.LastHandledSyncAt == nil {
		t.Fatal("lastHandledSyncAt is not set after the last wave")
	}
	// The person sent one /sync; every other one is the observer's (the test's watch
	// may lag the status).
	e.eventually("every /sync the person's or the observer's", func() (bool, string) {
		return syncs.count("app") == 1+obs.syncs(),
			fmt.Sprintf("%d /sync reached the Release, want the person's 1 + the observer's %d", syncs.count("app"), obs.syncs())
	})
	if obs.syncs() < 2 {
		t.Errorf("the observer sent %d /sync, want at least one per completed wave (2)", obs.syncs())
	}
	if got := rel.Annotations[v1.AnnotationSyncRequestedAt]; got == person {
		t.Errorf("sync-requested-at is still the person's %s: the observer's /syncs did not carry the waves", person)
	}

	// lastHandledSyncAt stays unset while a wave waits.
	history.mu.Lock()
	defer history.mu.Unlock()
	waited := false
	for _, st := range history.states {
		applied := apimeta.FindStatusCondition(st.Conditions, v1.ConditionApplied)
		if applied == nil || applied.Reason != v1.ReasonWaitingForSyncWave {
			continue
		}
		waited = true
		if st.LastHandledSyncAt != nil {
			t.Errorf("lastHandledSyncAt %s set while waiting for a sync wave (%v)", st.LastHandledSyncAt, st.SyncWave)
		}
	}
	if !waited {
		t.Error("the Release never reported WaitingForSyncWave")
	}
}

// SP-36: the observer checks drift every spec.syncPolicy.interval: a Deployment scaled
// by hand shows in status.drift with the field path within an interval; in manual
// mode it stays as edited until a /sync, which puts it back.
func TestSP36_DriftReportedWithinIntervalManualWaitsForSync(t *testing.T) {
	e := newEnv(t)
	e.startController()
	checker := &countingChecker{next: drift.New(drift.Options{})}
	e.startObserver(observerOptions{drift: checker})
	rel := testRelease(e.ns, "app")
	rel.Spec.SyncPolicy.Interval = &metav1.Duration{Duration: 3 * time.Second}
	e.create(rel)
	e.waitCondition("app", v1.ConditionApplied, metav1.ConditionFalse, v1.ReasonWaitingForSync)
	e.sync("app")
	e.waitCondition("app", v1.ConditionReady, metav1.ConditionTrue, policy.ReasonReady)
	e.eventually("a drift check without drift", func() (bool, string) {
		d := e.inventory("app").Status.Drift
		return d != nil && d.Since != nil && len(d.Drifted) == 0, fmt.Sprintf("drift %+v", d)
	})

	e.scale("wave-0", 3)
	edited := time.Now()
	e.eventually("drift at spec.replicas of wave-0", func() (bool, string) {
		d := e.inventory("app").Status.Drift
		if d == nil || len(d.Drifted) != 1 {
			return false, fmt.Sprintf("drift %+v", d)
		}
		got := d.Drifted[0]
		return got.Name == "wave-0" && slices.Equal(got.Fields, []string{"spec.replicas"}), fmt.Sprintf("drift %+v", d)
	})
	if took := time.Since(edited); took > 3*time.Second+3*time.Second {
		t.Errorf("drift showed %s after the edit, want within the 3s interval (and a little)", took)
	}
	checks := checker.calls.Load()
	e.consistently("manual mode leaves the edit until /sync", 7*time.Second, func() (bool, string) {
		r := e.replicas("wave-0")
		return r == 3, fmt.Sprintf("replicas %d", r)
	})
	// Every 3 s: two or three checks in 7 s, whatever else happens (no check per event).
	if n := checker.calls.Load() - checks; n < 1 || n > 3 {
		t.Errorf("%d drift checks in 7s, want one every 3s interval", n)
	}
	e.sync("app")
	e.eventually("the /sync puts replicas back and the drift goes", func() (bool, string) {
		d := e.inventory("app").Status.Drift
		r := e.replicas("wave-0")
		return r == 1 && d != nil && len(d.Drifted) == 0, fmt.Sprintf("replicas %d, drift %+v", r, d)
	})
}

// SP-36: in automatic mode convoy puts a hand edit back at the next reconcile (the
// periodic one every interval, or the one that the observer's health write starts).
func TestSP36_DriftAutomaticModePutsItBack(t *testing.T) {
	e := newEnv(t)
	e.startController()
	e.startObserver(observerOptions{drift: drift.New(drift.Options{})})
	rel := testRelease(e.ns, "app")
	rel.Spec.SyncPolicy.Automatic = ptr.To(true)
	rel.Spec.SyncPolicy.Interval = &metav1.Duration{Duration: 3 * time.Second}
	e.create(rel)
	e.waitCondition("app", v1.ConditionReady, metav1.ConditionTrue, policy.ReasonReady)

	e.scale("wave-0", 3)
	e.eventually("the periodic reconcile puts replicas back", func() (bool, string) {
		r := e.replicas("wave-0")
		return r == 1, fmt.Sprintf("replicas %d", r)
	})
}

// scale sets a Deployment's replicas by hand (an update by another field manager).
func (e *env) scale(name string, replicas int32) {
	e.t.Helper()
	// kube-controller-manager writes the Deployment's status at any moment: an
	// update that conflicts with it is retried on the latest version, as kubectl does.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		d := &appsv1.Deployment{}
		if err := e.client.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: name}, d); err != nil {
			return err
		}
		d.Spec.Replicas = ptr.To(replicas)
		return e.client.Update(e.ctx, d, client.FieldOwner("kubectl-edit"))
	})
	if err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) replicas(name string) int32 {
	e.t.Helper()
	d := &appsv1.Deployment{}
	if err := e.client.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: name}, d); err != nil {
		e.t.Fatal(err)
	}
	return ptr.Deref(d.Spec.Replicas, 1)
}

// countingChecker counts the drift checks.
type countingChecker struct {
	calls atomic.Int32
	next  DriftChecker
}

func (c *countingChecker) Check(ctx context.Context, target client.Client, objects []*unstructured.Unstructured) ([]v1.DriftedObject, error) {
	c.calls.Add(1)
	return c.next.Check(ctx, target, objects)
}
