package observer

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/policy"
)

// SP-30 and the cluster waves of docs/waves.md end to end: three
// automatic Releases on the host cluster in cluster waves 0, 1 and 2, in two
// namespaces, with no interval (no periodic reconcile) and a 10-minute informer resync.
// Each applies only once the Release of the wave below is Applied and Healthy, and
// then at once: the change of that Release's Healthy condition reconciles it.
func TestClusterWavesApplyInOrder(t *testing.T) {
	e := newEnv(t)
	other := e.newNamespace()
	seen := e.watchClusterWaves(e.ns, other)
	e.startControllerWith(controllerOptions{namespaces: []string{other}})
	e.startObserver(observerOptions{namespaces: []string{other}})

	// Wave 0 first, with pods that cannot run yet: Applied, but not Healthy.
	e.create(appRelease(e.ns, "wave-0", valuesNeverAvailable))
	w1 := appRelease(other, "wave-1", valuesAvailable)
	w1.Spec.ClusterWave = 1
	e.create(w1)
	w2 := appRelease(e.ns, "wave-2", valuesAvailable)
	w2.Spec.ClusterWave = 2
	e.create(w2)

	wave0, wave1 := e.ns+"/wave-0", other+"/wave-1"
	e.waitConditionIn(e.ns, "wave-0", v1.ConditionApplied, metav1.ConditionTrue, v1.ReasonApplied)
	rel := e.waitConditionIn(other, "wave-1", v1.ConditionApplied, metav1.ConditionFalse, v1.ReasonWaitingForClusterWave)
	if msg := apimeta.FindStatusCondition(rel.Status.Conditions, v1.ConditionApplied).Message; !strings.Contains(msg, wave0) {
		t.Errorf("wave 1 waits with %q, want it to name %s", msg, wave0)
	}
	rel = e.waitConditionIn(e.ns, "wave-2", v1.ConditionApplied, metav1.ConditionFalse, v1.ReasonWaitingForClusterWave)
	if msg := apimeta.FindStatusCondition(rel.Status.Conditions, v1.ConditionApplied).Message; !strings.Contains(msg, wave0) && !strings.Contains(msg, wave1) {
		t.Errorf("wave 2 waits with %q, want it to name %s or %s", msg, wave0, wave1)
	}
	e.consistently("waves 1 and 2 apply nothing while wave 0 is not Healthy", 3*time.Second, func() (bool, string) {
		d1, d2 := e.deploymentExists(other, "wave-1"), e.deploymentExists(e.ns, "wave-2")
		return !d1 && !d2, fmt.Sprintf("Deployment wave-1 exists: %t, wave-2 exists: %t", d1, d2)
	})

	// Wave 0's pods can run: it turns Healthy, which releases wave 1, whose Healthy
	// releases wave 2.
	e.setValuesIn(e.ns, "wave-0", valuesAvailable)
	e.waitConditionIn(e.ns, "wave-2", v1.ConditionApplied, metav1.ConditionTrue, v1.ReasonApplied)
	e.waitConditionIn(e.ns, "wave-2", v1.ConditionHealthy, metav1.ConditionTrue, v1.ReasonHealthy)
	t.Logf("seen: %s", seen)

	for _, step := range []struct{ lower, higher string }{{wave0, wave1}, {wave1, e.ns + "/wave-2"}} {
		healthy, created := seen.healthyAt(step.lower), seen.createdAt(step.higher)
		switch {
		case healthy.IsZero() || created.IsZero():
			t.Errorf("%s Healthy at %v, Deployment of %s created at %v: want both", step.lower, healthy, step.higher, created)
		case created.Before(healthy):
			t.Errorf("the Deployment of %s was created %s before %s was Healthy", step.higher, healthy.Sub(created), step.lower)
		case created.Sub(healthy) > 5*time.Second:
			t.Errorf("the Deployment of %s was created %s after %s was Healthy, want at once (no periodic reconcile, resync 10m)",
				step.higher, created.Sub(healthy), step.lower)
		}
	}
	// The API's own times agree, to the second.
	lower := e.releaseIn(e.ns, "wave-0")
	higher := e.deployment(other, "wave-1")
	if h := apimeta.FindStatusCondition(lower.Status.Conditions, v1.ConditionHealthy); h == nil || higher.CreationTimestamp.Before(&h.LastTransitionTime) {
		t.Errorf("Deployment wave-1 created at %s, before wave 0's Healthy %+v", higher.CreationTimestamp, h)
	}
	// Once wave 0 was Healthy, wave 2 waited for wave 1 and named it.
	if !seen.waitedFor(e.ns+"/wave-2", wave1) {
		t.Errorf("wave 2 never reported WaitingForClusterWave naming %s; seen: %s", wave1, seen)
	}
}

// clusterWaves records what this process saw, and when: the first time each
// Deployment of the namespaces existed, the first time each Release had Healthy=True,
// and the messages of WaitingForClusterWave of each Release; keys are namespace/name.
type clusterWaves struct {
	mu      sync.Mutex
	created map[string]time.Time
	healthy map[string]time.Time
	waiting map[string][]string
}

func (e *env) watchClusterWaves(namespaces ...string) *clusterWaves {
	e.t.Helper()
	s := &clusterWaves{created: map[string]time.Time{}, healthy: map[string]time.Time{}, waiting: map[string][]string{}}
	for _, ns := range namespaces {
		deps, err := e.client.Watch(e.ctx, &appsv1.DeploymentList{}, client.InNamespace(ns))
		if err != nil {
			e.t.Fatal(err)
		}
		e.t.Cleanup(deps.Stop)
		rels, err := e.client.Watch(e.ctx, &v1.ReleaseList{}, client.InNamespace(ns))
		if err != nil {
			e.t.Fatal(err)
		}
		e.t.Cleanup(rels.Stop)
		go s.record(deps, rels)
	}
	return s
}

func (s *clusterWaves) record(deps, rels watch.Interface) {
	for {
		select {
		case ev, ok := <-deps.ResultChan():
			if !ok {
				return
			}
			if d, ok := ev.Object.(*appsv1.Deployment); ok && ev.Type != watch.Deleted {
				s.first(s.created, d.Namespace+"/"+d.Name)
			}
		case ev, ok := <-rels.ResultChan():
			if !ok {
				return
			}
			rel, ok := ev.Object.(*v1.Release)
			if !ok || ev.Type == watch.Deleted {
				continue
			}
			key := rel.Namespace + "/" + rel.Name
			if apimeta.IsStatusConditionTrue(rel.Status.Conditions, v1.ConditionHealthy) {
				s.first(s.healthy, key)
			}
			if c := apimeta.FindStatusCondition(rel.Status.Conditions, v1.ConditionApplied); c != nil && c.Reason == v1.ReasonWaitingForClusterWave {
				s.mu.Lock()
				s.waiting[key] = append(s.waiting[key], c.Message)
				s.mu.Unlock()
			}
		}
	}
}

// first records now under key unless a time is recorded.
func (s *clusterWaves) first(times map[string]time.Time, key string) {
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := times[key]; !ok {
		times[key] = now
	}
}

func (s *clusterWaves) healthyAt(key string) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.healthy[key]
}

func (s *clusterWaves) createdAt(key string) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.created[key]
}

// waitedFor says whether the Release key reported WaitingForClusterWave naming
// blocker.
func (s *clusterWaves) waitedFor(key, blocker string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, msg := range s.waiting[key] {
		if strings.Contains(msg, blocker) {
			return true
		}
	}
	return false
}

func (s *clusterWaves) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return fmt.Sprintf("Deployments created %v, Releases Healthy %v, waiting %v", s.created, s.healthy, s.waiting)
}

// deploymentExists says whether the Deployment name of the namespace ns exists.
func (e *env) deploymentExists(ns, name string) bool {
	e.t.Helper()
	err := e.client.Get(e.ctx, client.ObjectKey{Namespace: ns, Name: name}, &appsv1.Deployment{})
	if err != nil && !apierrors.IsNotFound(err) {
		e.t.Fatalf("get Deployment %s/%s: %v", ns, name, err)
	}
	return err == nil
}

// SP-04 — seed: "Equal. The Applied condition is True with reason Applied. The message
// says that the Release is in sync and that the apply waits for /sync." Decision
// 0088: the sentence has no exception for cluster waves. A manual Release of cluster wave 1
// in sync stays Applied=True/Applied while a Release of wave 0 is not ready; the wave
// gates only an apply, so a /sync of it waits with WaitingForClusterWave.
func TestSP04_ManualReleaseInSyncInAHigherClusterWaveReportsApplied(t *testing.T) {
	e := newEnv(t)
	e.startController()
	e.startObserver(observerOptions{})

	upper := appRelease(e.ns, "upper", valuesAvailable)
	upper.Spec.SyncPolicy.Automatic = nil
	upper.Spec.ClusterWave = 1
	e.create(upper)
	e.waitCondition("upper", v1.ConditionApplied, metav1.ConditionFalse, v1.ReasonWaitingForSync)
	e.sync("upper")
	e.waitCondition("upper", v1.ConditionReady, metav1.ConditionTrue, "Ready")

	lower := appRelease(e.ns, "lower", valuesAvailable)
	lower.Spec.SyncPolicy.Automatic = nil // never synced: Applied=False/WaitingForSync
	e.create(lower)
	e.waitCondition("lower", v1.ConditionApplied, metav1.ConditionFalse, v1.ReasonWaitingForSync)

	// A spec change reconciles the upper Release; its render stays the same.
	rel := e.edit("upper", func(rel *v1.Release) { rel.Spec.SyncPolicy.Interval = &metav1.Duration{Duration: time.Hour} })
	e.eventually("the upper Release reconciled after its spec change, Applied=True/Applied", func() (bool, string) {
		r := e.release("upper")
		c := apimeta.FindStatusCondition(r.Status.Conditions, v1.ConditionApplied)
		return r.Status.ObservedGeneration == rel.Generation && c != nil && c.Status == metav1.ConditionTrue && c.Reason == v1.ReasonApplied,
			fmt.Sprintf("observedGeneration %d (want %d), Applied %+v", r.Status.ObservedGeneration, rel.Generation, c)
	})

	// A /sync asks for an apply: that waits for the lower wave.
	e.sync("upper")
	e.waitCondition("upper", v1.ConditionApplied, metav1.ConditionFalse, v1.ReasonWaitingForClusterWave)
}

// SP-30 — seed: "The status of the Applied or Healthy condition changes on a Release of
// a lower cluster wave on the same Cluster." Decision 0091: a lower-wave Release
// that moves to a higher cluster wave no longer holds the Release above it, which goes
// on at once (no interval, informer resync 10 minutes), not at the next resync.
func TestSP30_ALowerWaveReleaseMovingAwayReleasesTheOnesItHeld(t *testing.T) {
	e := newEnv(t)
	e.startController()
	e.startObserver(observerOptions{})

	e.create(appRelease(e.ns, "lower", valuesNeverAvailable)) // Applied, never Healthy
	upper := appRelease(e.ns, "upper", valuesAvailable)
	upper.Spec.ClusterWave = 1
	e.create(upper)
	e.waitCondition("upper", v1.ConditionApplied, metav1.ConditionFalse, v1.ReasonWaitingForClusterWave)

	e.edit("lower", func(rel *v1.Release) { rel.Spec.ClusterWave = 2 })
	e.waitCondition("upper", v1.ConditionApplied, metav1.ConditionTrue, v1.ReasonApplied)
}

// SP-30 — seed: "The status of the Applied or Healthy condition changes on a Release of
// a lower cluster wave on the same Cluster." — and step 2 of the reconcile (docs/architecture.md: while a
// Release of a lower clusterWave on the same Cluster is not Applied=True and
// Healthy=True, WaitingForClusterWave), on an upgrade of both waves: the chaos harness (decision 0122) saw a higher wave apply its new
// render while the lower one, edited just before, still showed the Applied and Healthy
// of its previous spec. A condition observed at an older generation does not count: the
// higher wave waits from the lower one's edit on, then while the lower one's new render
// is applied but not Healthy, and applies once it is.
func TestSP30_AHigherWaveWaitsForTheEditOfALowerWaveToBeAppliedAndHealthy(t *testing.T) {
	e := newEnv(t)
	lowerReconciles := &pausable{}
	e.startControllerWith(controllerOptions{middleware: lowerReconciles.middleware})
	e.startObserver(observerOptions{})

	e.create(appRelease(e.ns, "lower", valuesAvailable))
	upper := appRelease(e.ns, "upper", valuesAvailable)
	upper.Spec.ClusterWave = 1
	e.create(upper)
	e.waitCondition("upper", v1.ConditionReady, metav1.ConditionTrue, policy.ReasonReady)
	image := func(name string) string { return e.deployment(e.ns, name).Spec.Template.Spec.Containers[0].Image }
	before := image("upper")

	// The lower wave is edited and its controller has not reconciled the edit yet (its
	// reconciles are held back): Applied and Healthy are still True, of generation 1.
	lowerReconciles.pause("lower")
	e.setValues("lower", valuesNeverAvailable)
	e.setValues("upper", valuesFixed)
	rel := e.waitCondition("upper", v1.ConditionApplied, metav1.ConditionFalse, v1.ReasonWaitingForClusterWave)
	if msg := apimeta.FindStatusCondition(rel.Status.Conditions, v1.ConditionApplied).Message; !strings.Contains(msg, e.ns+"/lower") {
		t.Errorf("upper waits with %q, want it to name %s/lower", msg, e.ns)
	}
	e.consistently("the upper wave keeps its render while the lower one's edit is not reconciled", 3*time.Second, func() (bool, string) {
		got := image("upper")
		return got == before, "upper's image " + got
	})

	// The lower wave's new render is applied and never becomes Healthy.
	lowerReconciles.resume("lower")
	e.eventually("the lower wave's new render applied", func() (bool, string) {
		sel := e.nodeSelector(e.ns, "lower")
		return len(sel) > 0, fmt.Sprintf("nodeSelector %v", sel)
	})
	e.consistently("the upper wave keeps its render while the lower one's new render is not Healthy", 3*time.Second, func() (bool, string) {
		got := image("upper")
		return got == before, "upper's image " + got
	})

	// Fixed, the lower wave turns Healthy and the upper one applies.
	e.setValues("lower", valuesFixed)
	e.waitCondition("upper", v1.ConditionReady, metav1.ConditionTrue, policy.ReasonReady)
	if got := image("upper"); got == before {
		t.Errorf("upper's image %s, want its new render's", got)
	}
}

// pausable holds back the reconciles of the Releases it pauses (each is requeued until
// resumed), as a busy controller or one behind on its queue would.
type pausable struct {
	mu     sync.Mutex
	paused map[string]bool
}

func (p *pausable) pause(name string)  { p.set(name, true) }
func (p *pausable) resume(name string) { p.set(name, false) }

func (p *pausable) set(name string, paused bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.paused == nil {
		p.paused = map[string]bool{}
	}
	p.paused[name] = paused
}

// middleware is controller.Options.Middleware.
func (p *pausable) middleware(next reconcile.Reconciler) reconcile.Reconciler {
	return reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		p.mu.Lock()
		paused := p.paused[req.Name]
		p.mu.Unlock()
		if paused {
			return reconcile.Result{RequeueAfter: 100 * time.Millisecond}, nil
		}
		return next.Reconcile(ctx, req)
	})
}
