package observer

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	eventsv1 "k8s.io/api/events/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/policy"
)

// Progressive rollout end to end (docs/rollouts.md): the release controller starts a rollout for
// each new render and judges it by the observer's health of that render, on the local
// control plane with kwok's nodes, where a Deployment really becomes Available, or
// never does when no node matches its nodeSelector.

// Values of the chart app.
const (
	// valuesAvailable: the Deployment becomes Available on kwok's nodes.
	valuesAvailable = `{"image":"registry.example/app:1"}`
	// valuesNeverAvailable: no node matches the nodeSelector; the new pods stay Pending.
	valuesNeverAvailable = `{"image":"registry.example/app:1","nodeSelector":{"convoy.kumodo.io/test":"no-such-node"}}`
	// valuesDegraded: as valuesNeverAvailable, and past its 2 s progress deadline the
	// Deployment is Failed for kstatus: Degraded for the observer.
	valuesDegraded = `{"image":"registry.example/app:1","nodeSelector":{"convoy.kumodo.io/test":"no-such-node"},"progressDeadlineSeconds":2}`
	// valuesFixed: a new render (another image) that becomes Available.
	valuesFixed = `{"image":"registry.example/app:2"}`
)

// SP-20 and the rollout of docs/rollouts.md with action Rollback (the
// default): a render whose Deployment never becomes Available fails at its deadline;
// the previous render's objects are back, the phase is RolledBack and the periodic
// reconciles keep it so; a forced /sync starts a new Progressing rollout of the failed
// render; a fixed render rolls out to Succeeded.
func TestRolloutRollbackAtDeadline(t *testing.T) {
	e := newEnv(t)
	tl := e.watchTimeline("app")
	reconciles := &reconcileCounter{}
	e.startControllerWith(controllerOptions{middleware: reconciles.middleware})
	e.startObserver(observerOptions{})
	rel := appRelease(e.ns, "app", valuesAvailable)
	rel.Spec.SyncPolicy.Interval = &metav1.Duration{Duration: time.Second}
	rel.Spec.FailurePolicy = &v1.FailurePolicy{HealthTimeout: &metav1.Duration{Duration: 5 * time.Second}}
	e.create(rel)

	good := e.waitRender("app", "")
	e.waitRollout("app", good, v1.RolloutSucceeded, time.Time{})
	e.waitCondition("app", v1.ConditionReady, metav1.ConditionTrue, policy.ReasonReady)

	// A render whose Deployment never becomes Available: a new rollout.
	e.setValues("app", valuesNeverAvailable)
	bad := e.waitRender("app", good)
	ro := e.waitRollout("app", bad, v1.RolloutProgressing, time.Time{}).Status.Rollout
	if ro.PreviousRenderRef != good {
		t.Errorf("rollout of %s: previousRenderRef %q, want the last succeeded render %s", bad, ro.PreviousRenderRef, good)
	}
	if got := ro.Deadline.Sub(ro.StartedAt.Time); got != 5*time.Second {
		t.Errorf("rollout deadline %s after its start, want the healthTimeout 5s", got)
	}
	if sel := e.nodeSelector(e.ns, "app"); len(sel) == 0 {
		t.Error("the Deployment has no nodeSelector while the new render is Progressing: the render was not applied")
	}

	// At the deadline it fails, and the previous render is applied again.
	rolledBack := e.waitRollout("app", bad, v1.RolloutRolledBack, time.Time{})
	seen := time.Now()
	ro = rolledBack.Status.Rollout
	if deadline := ro.Deadline.Time; seen.Before(deadline) || seen.Sub(deadline) > 5*time.Second {
		t.Errorf("rolled back at %s, want at the deadline %s (and a little)", seen.UTC().Format(time.RFC3339Nano), deadline)
	}
	if !strings.Contains(ro.Message, "deadline") {
		t.Errorf("rollout message %q does not say the deadline passed", ro.Message)
	}
	wantApplied(t, rolledBack, metav1.ConditionFalse, v1.ReasonRolledBack)
	if ls := rolledBack.Status.LastSuccessful; ls == nil || ls.RenderRef != good {
		t.Errorf("lastSuccessful %+v, want the previous render %s", ls, good)
	}
	if sel := e.nodeSelector(e.ns, "app"); len(sel) != 0 {
		t.Errorf("the Deployment keeps the failed render's nodeSelector %v after the rollback", sel)
	}
	e.waitCondition("app", v1.ConditionHealthy, metav1.ConditionTrue, v1.ReasonHealthy)

	// The periodic reconciles (every second) keep the previous render applied.
	before := reconciles.count("app")
	e.consistently("the periodic reconciles keep the previous render", 4*time.Second, func() (bool, string) {
		rel := e.release("app")
		sel := e.nodeSelector(e.ns, "app")
		applied := apimeta.FindStatusCondition(rel.Status.Conditions, v1.ConditionApplied)
		ok := len(sel) == 0 && rel.Status.LastSuccessful != nil && rel.Status.LastSuccessful.RenderRef == good &&
			rel.Status.Rollout != nil && rel.Status.Rollout.Phase == v1.RolloutRolledBack &&
			applied != nil && applied.Reason == v1.ReasonRolledBack
		return ok, fmt.Sprintf("nodeSelector %v, lastSuccessful %+v, rollout %+v, Applied %+v", sel, rel.Status.LastSuccessful, rel.Status.Rollout, applied)
	})
	if n := reconciles.count("app") - before; n < 3 {
		t.Errorf("%d reconciles in 4s with an interval of 1s, want at least 3", n)
	}

	// A forced /sync starts a new Progressing rollout of the failed render.
	e.forceSync("app")
	// A new rollout: it starts at least 5 s (the deadline) after the one rolled back.
	forced := e.waitRollout("app", bad, v1.RolloutProgressing, ro.StartedAt.Add(time.Second)).Status.Rollout
	if forced.PreviousRenderRef != good {
		t.Errorf("forced rollout of %s: previousRenderRef %q, want %s", bad, forced.PreviousRenderRef, good)
	}
	if sel := e.nodeSelector(e.ns, "app"); len(sel) == 0 {
		t.Error("the forced rollout did not apply the failed render again")
	}
	// It fails again.
	e.waitRollout("app", bad, v1.RolloutRolledBack, forced.StartedAt.Time)

	// Fixed values: a new render rolls out to Succeeded.
	e.setValues("app", valuesFixed)
	fixed := e.waitRender("app", bad)
	done := e.waitRollout("app", fixed, v1.RolloutSucceeded, time.Time{})
	if got := done.Status.Rollout.PreviousRenderRef; got != good {
		t.Errorf("rollout of the fixed render: previousRenderRef %q, want %s", got, good)
	}
	rel = e.waitCondition("app", v1.ConditionApplied, metav1.ConditionTrue, v1.ReasonApplied)
	if ls := rel.Status.LastSuccessful; ls == nil || ls.RenderRef != fixed {
		t.Errorf("lastSuccessful %+v, want the fixed render %s", ls, fixed)
	}
	d := e.deployment(e.ns, "app")
	if img := d.Spec.Template.Spec.Containers[0].Image; img != "registry.example/app:2" || len(d.Spec.Template.Spec.NodeSelector) != 0 {
		t.Errorf("Deployment image %s, nodeSelector %v: want the fixed render's", img, d.Spec.Template.Spec.NodeSelector)
	}
	e.waitCondition("app", v1.ConditionReady, metav1.ConditionTrue, policy.ReasonReady)

	// An event at each phase change.
	for _, reason := range []string{"RolloutProgressing", "RolloutSucceeded", "RolloutFailed", "RolloutRolledBack"} {
		e.waitEvent("app", reason)
	}
	tl.neverHealthy(t, bad)
}

// With action Halt a failed rollout stays Failed and its render stays applied; Healthy
// says why (the rollout failed at its deadline).
func TestRolloutHaltKeepsTheFailedRender(t *testing.T) {
	e := newEnv(t)
	tl := e.watchTimeline("app")
	e.startController()
	e.startObserver(observerOptions{})
	rel := appRelease(e.ns, "app", valuesAvailable)
	rel.Spec.SyncPolicy.Interval = &metav1.Duration{Duration: time.Second}
	rel.Spec.FailurePolicy = &v1.FailurePolicy{HealthTimeout: &metav1.Duration{Duration: 5 * time.Second}, Action: v1.FailureActionHalt}
	e.create(rel)
	good := e.waitRender("app", "")
	e.waitRollout("app", good, v1.RolloutSucceeded, time.Time{})

	e.setValues("app", valuesNeverAvailable)
	bad := e.waitRender("app", good)
	e.waitRollout("app", bad, v1.RolloutProgressing, time.Time{})
	failed := e.waitRollout("app", bad, v1.RolloutFailed, time.Time{})
	if msg := failed.Status.Rollout.Message; !strings.Contains(msg, "deadline") {
		t.Errorf("rollout message %q does not say the deadline passed", msg)
	}
	e.consistently("the failed render stays applied", 3*time.Second, func() (bool, string) {
		rel := e.release("app")
		sel := e.nodeSelector(e.ns, "app")
		healthy := apimeta.FindStatusCondition(rel.Status.Conditions, v1.ConditionHealthy)
		ok := len(sel) != 0 && rel.Status.LastSuccessful != nil && rel.Status.LastSuccessful.RenderRef == bad &&
			rel.Status.Rollout != nil && rel.Status.Rollout.Phase == v1.RolloutFailed &&
			healthy != nil && healthy.Status != metav1.ConditionTrue &&
			strings.Contains(healthy.Message, "rollout of render "+bad+" failed") && strings.Contains(healthy.Message, "deadline")
		return ok, fmt.Sprintf("nodeSelector %v, lastSuccessful %+v, rollout %+v, Healthy %+v", sel, rel.Status.LastSuccessful, rel.Status.Rollout, healthy)
	})
	e.waitEvent("app", "RolloutFailed")
	tl.neverHealthy(t, bad)
}

// A render that becomes Degraded (its Deployment passes its progress deadline) fails
// its rollout at once, long before the 5-minute healthTimeout, and is rolled back.
// With no interval, the observer's health write alone starts the reconcile that judges
// it.
func TestRolloutDegradedFailsBeforeTheDeadline(t *testing.T) {
	e := newEnv(t)
	tl := e.watchTimeline("app")
	e.startController()
	e.startObserver(observerOptions{})
	rel := appRelease(e.ns, "app", valuesAvailable)
	rel.Spec.FailurePolicy = &v1.FailurePolicy{HealthTimeout: &metav1.Duration{Duration: 5 * time.Minute}}
	e.create(rel)
	good := e.waitRender("app", "")
	e.waitRollout("app", good, v1.RolloutSucceeded, time.Time{})

	e.setValues("app", valuesDegraded)
	bad := e.waitRender("app", good)
	e.waitRollout("app", bad, v1.RolloutProgressing, time.Time{})
	rolledBack := e.waitRollout("app", bad, v1.RolloutRolledBack, time.Time{})
	ro := rolledBack.Status.Rollout
	if took := time.Since(ro.StartedAt.Time); took > time.Minute {
		t.Errorf("rolled back %s after the start, want on Degraded, long before the 5m deadline", took)
	}
	if !strings.Contains(ro.Message, "Degraded") {
		t.Errorf("rollout message %q does not say the render became Degraded", ro.Message)
	}
	wantApplied(t, rolledBack, metav1.ConditionFalse, v1.ReasonRolledBack)
	if sel := e.nodeSelector(e.ns, "app"); len(sel) != 0 {
		t.Errorf("the Deployment keeps the failed render's nodeSelector %v after the rollback", sel)
	}
	tl.neverHealthy(t, bad)
}

// reconcileCounter counts the release controller's reconciles by Release name.
type reconcileCounter struct {
	mu sync.Mutex
	n  map[string]int
}

// middleware is controller.Options.Middleware.
func (c *reconcileCounter) middleware(next reconcile.Reconciler) reconcile.Reconciler {
	return reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		res, err := next.Reconcile(ctx, req)
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.n == nil {
			c.n = map[string]int{}
		}
		c.n[req.Name]++
		return res, err
	})
}

func (c *reconcileCounter) count(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[name]
}

// waitRender waits until the current render of the Release name is set and is not
// other, and returns it.
func (e *env) waitRender(name, other string) string {
	e.t.Helper()
	var ref string
	e.eventually(fmt.Sprintf("Release %s rendered (a render other than %q)", name, other), func() (bool, string) {
		r := e.release(name).Status.Render
		if r == nil {
			return false, "no render"
		}
		ref = r.Ref
		return ref != other, "render " + ref
	})
	return ref
}

// waitRollout waits until status.rollout of the Release name is phase for renderRef,
// in a rollout started at since or later (the zero time: any), and returns the
// Release.
func (e *env) waitRollout(name, renderRef string, phase v1.RolloutPhase, since time.Time) *v1.Release {
	e.t.Helper()
	var rel *v1.Release
	e.eventually(fmt.Sprintf("Release %s rollout %s of %s", name, phase, renderRef), func() (bool, string) {
		rel = e.release(name)
		ro := rel.Status.Rollout
		if ro == nil {
			return false, "no rollout"
		}
		started := ro.StartedAt != nil && !ro.StartedAt.Time.Before(since)
		if started && ro.RenderRef == renderRef && ro.Phase == v1.RolloutSucceeded && phase != v1.RolloutSucceeded {
			// Final for this rollout: waiting longer cannot help.
			e.t.Fatalf("waiting for Release %s rollout %s of %s: it Succeeded: %s", name, phase, renderRef, ro.Message)
		}
		return ro.RenderRef == renderRef && ro.Phase == phase && started,
			fmt.Sprintf("rollout %s of %s started %v: %s", ro.Phase, ro.RenderRef, ro.StartedAt, ro.Message)
	})
	return rel
}

// setValues sets spec.values of the Release name (a spec change: a new render).
func (e *env) setValues(name, values string) {
	e.t.Helper()
	e.setValuesIn(e.ns, name, values)
}

// setValuesIn is setValues for the Release name of the namespace ns.
func (e *env) setValuesIn(ns, name, values string) {
	e.t.Helper()
	e.editIn(ns, name, func(rel *v1.Release) { rel.Spec.Values = &runtime.RawExtension{Raw: []byte(values)} })
}

// edit changes the Release name as a person would with kubectl edit: read, change,
// update, and again on a conflict (the controller's and the observer's writes race
// with it). It returns the Release as updated.
func (e *env) edit(name string, change func(*v1.Release)) *v1.Release {
	e.t.Helper()
	return e.editIn(e.ns, name, change)
}

// editIn is edit for the Release name of the namespace ns.
func (e *env) editIn(ns, name string, change func(*v1.Release)) *v1.Release {
	e.t.Helper()
	rel := &v1.Release{}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := e.client.Get(e.ctx, client.ObjectKey{Namespace: ns, Name: name}, rel); err != nil {
			return err
		}
		change(rel)
		return e.client.Update(e.ctx, rel)
	})
	if err != nil {
		e.t.Fatalf("update Release %s/%s: %v", ns, name, err)
	}
	return rel
}

// deployment reads the Deployment name of the namespace ns.
func (e *env) deployment(ns, name string) *appsv1.Deployment {
	e.t.Helper()
	d := &appsv1.Deployment{}
	if err := e.client.Get(e.ctx, client.ObjectKey{Namespace: ns, Name: name}, d); err != nil {
		e.t.Fatalf("get Deployment %s/%s: %v", ns, name, err)
	}
	return d
}

// nodeSelector is the pods' nodeSelector of the Deployment name of the namespace ns.
func (e *env) nodeSelector(ns, name string) map[string]string {
	e.t.Helper()
	return e.deployment(ns, name).Spec.Template.Spec.NodeSelector
}

// waitEvent waits for an event with reason about the Release name.
func (e *env) waitEvent(name, reason string) {
	e.t.Helper()
	e.eventually(fmt.Sprintf("a %s event about Release %s", reason, name), func() (bool, string) {
		var list eventsv1.EventList
		if err := e.client.List(e.ctx, &list, client.InNamespace(e.ns)); err != nil {
			return false, err.Error()
		}
		var seen []string
		for _, ev := range list.Items {
			if ev.Regarding.Kind != "Release" || ev.Regarding.Name != name {
				continue
			}
			if ev.Reason == reason {
				return true, ""
			}
			seen = append(seen, ev.Reason)
		}
		return false, fmt.Sprintf("events %v", seen)
	})
}

// wantApplied checks the Applied condition of rel.
func wantApplied(t *testing.T, rel *v1.Release, status metav1.ConditionStatus, reason string) {
	t.Helper()
	c := apimeta.FindStatusCondition(rel.Status.Conditions, v1.ConditionApplied)
	if c == nil || c.Status != status || c.Reason != reason {
		t.Errorf("Applied %+v, want %s/%s", c, status, reason)
	}
}

// timeline records, as this process sees them, the ReleaseInventory name's render
// and health, the Release's rollout and the Deployment name's generations and
// nodeSelector; when the test fails, it logs them in order.
type timeline struct {
	mu    sync.Mutex
	lines []string
	// health lists the health the observer reported for each render.
	health map[string][]v1.HealthStatus
}

func (e *env) watchTimeline(name string) *timeline {
	e.t.Helper()
	tl := &timeline{health: map[string][]v1.HealthStatus{}}
	var watches []watch.Interface
	for _, list := range []client.ObjectList{&v1.ReleaseInventoryList{}, &v1.ReleaseList{}, &appsv1.DeploymentList{}} {
		w, err := e.client.Watch(e.ctx, list, client.InNamespace(e.ns))
		if err != nil {
			e.t.Fatal(err)
		}
		watches = append(watches, w)
	}
	var wg sync.WaitGroup
	for _, w := range watches {
		wg.Go(func() {
			for ev := range w.ResultChan() {
				tl.record(name, ev.Object)
			}
		})
	}
	e.t.Cleanup(func() {
		for _, w := range watches {
			w.Stop()
		}
		wg.Wait()
		if e.t.Failed() {
			tl.mu.Lock()
			defer tl.mu.Unlock()
			e.t.Logf("timeline:\n%s", strings.Join(tl.lines, "\n"))
		}
	})
	return tl
}

func (tl *timeline) record(name string, obj runtime.Object) {
	now := time.Now().Format("15:04:05.000")
	tl.mu.Lock()
	defer tl.mu.Unlock()
	add := func(format string, args ...any) {
		tl.lines = append(tl.lines, now+" "+fmt.Sprintf(format, args...))
	}
	switch o := obj.(type) {
	case *v1.ReleaseInventory:
		if o.Name != name {
			return
		}
		add("inventory renderRef %.19s, status renderRef %.19s %s", o.RenderRef, o.Status.RenderRef, o.Status.Health)
		if ref := o.Status.RenderRef; ref != "" {
			tl.health[ref] = append(tl.health[ref], o.Status.Health)
		}
	case *v1.Release:
		if ro := o.Status.Rollout; o.Name == name && ro != nil {
			add("Release rollout %s of %.19s: %s", ro.Phase, ro.RenderRef, ro.Message)
		}
	case *appsv1.Deployment:
		if o.Name == name {
			add("Deployment generation %d observed %d, nodeSelector %v, updated %d available %d",
				o.Generation, o.Status.ObservedGeneration, o.Spec.Template.Spec.NodeSelector, o.Status.UpdatedReplicas, o.Status.AvailableReplicas)
		}
	}
}

// reported says whether the observer ever reported the render renderRef with health.
func (tl *timeline) reported(renderRef string, health v1.HealthStatus) bool {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	return slices.Contains(tl.health[renderRef], health)
}

// neverHealthy fails the test when the observer reported the render ref, whose pods can
// never run, Healthy.
func (tl *timeline) neverHealthy(t *testing.T, ref string) {
	t.Helper()
	if tl.reported(ref, v1.HealthHealthy) {
		t.Errorf("the observer reported render %s Healthy, but its pods can never run: it assessed the objects "+
			"of the previous render, before the new render's apply reached its informers (see the timeline)", ref)
	}
}
