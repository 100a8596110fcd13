package controller

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/testenv"
)

// missingNamespace makes the test chart render a second ConfigMap in a namespace
// that does not exist: the pre-apply dry run rejects the whole render (Unappliable)
// and, without the dry run, the apply of that one object fails (DeployFailed).
func missingNamespace(e *env) releaseOption {
	return values(fmt.Sprintf(`{"extraNamespace":%q}`, "missing-"+e.ns))
}

func TestSP01_SP03_AutomaticAppliesAtEachReconcileAndCorrectsDrift(t *testing.T) {
	// seed: "In automatic mode, convoy applies the full render at each reconcile, also
	// when nothing changed. This also corrects drift at each periodic reconcile."
	e := newEnv(t, envOptions{})
	e.createRelease("web", automatic(), interval(time.Second))
	rel := e.waitApplied("web", "True", v1.ReasonApplied)
	if rel.Status.LastSuccessful == nil || rel.Status.Render == nil || rel.Status.LastSuccessful.RenderRef != rel.Status.Render.Ref {
		t.Fatalf("lastSuccessful = %+v, render = %+v; want the current render applied", rel.Status.LastSuccessful, rel.Status.Render)
	}
	if c := apimeta.FindStatusCondition(rel.Status.Conditions, v1.ConditionHealthy); c == nil || c.Reason != v1.ReasonNotAssessed {
		t.Errorf("Healthy = %+v, want Unknown/NotAssessed until the observer reports", c)
	}

	cm := e.configMap("web-config")
	if cm == nil || cm.Data["greeting"] != "hello" {
		t.Fatalf("ConfigMap web-config = %+v, want it applied with greeting hello", cm)
	}
	if cm.Labels[v1.LabelReleaseName] != "web" || cm.Labels[v1.LabelReleaseNamespace] != e.ns {
		t.Errorf("labels = %v, want the convoy labels", cm.Labels)
	}

	// Drift by hand: nothing about the Release changes; the periodic reconcile applies
	// the full render again and puts it back.
	cm.Data["greeting"] = "edited by hand"
	if err := e.client.Update(e.ctx, cm); err != nil {
		t.Fatal(err)
	}
	e.eventually("the drift corrected", func() (bool, string) {
		cm := e.configMap("web-config")
		return cm != nil && cm.Data["greeting"] == "hello", fmt.Sprintf("ConfigMap %+v", cm)
	})

	// An object deleted by hand is applied again too.
	if err := e.client.Delete(e.ctx, e.configMap("web-config")); err != nil {
		t.Fatal(err)
	}
	e.eventually("the deleted object re-created", func() (bool, string) {
		cm := e.configMap("web-config")
		return cm != nil && cm.Data["greeting"] == "hello", fmt.Sprintf("ConfigMap %+v", cm)
	})
}

func TestSP04_SP05_SP06_ManualReportsWithoutApplying(t *testing.T) {
	e := newEnv(t, envOptions{})

	// SP-05, SP-06: no render applied yet: WaitingForSync, nothing applied, and no
	// dry run — this render's dry run would be rejected (Unappliable).
	e.createRelease("web", missingNamespace(e))
	rel := e.waitApplied("web", "False", v1.ReasonWaitingForSync)
	if rel.Status.Render == nil || rel.Status.Render.Ref == "" {
		t.Fatalf("status.render = %+v, want the render reported", rel.Status.Render)
	}
	if cm := e.configMap("web-config"); cm != nil {
		t.Fatalf("ConfigMap web-config exists in manual mode before any /sync")
	}
	if err := e.client.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: "web"}, &v1.ReleaseInventory{}); client.IgnoreNotFound(err) != nil || err == nil {
		t.Fatalf("a ReleaseInventory exists (err %v): nothing must be applied", err)
	}

	// A render that can be applied, then /sync: applied, lastHandledSyncAt = the annotation.
	e.update("web", values(`{"greeting":"hello"}`))
	e.eventually("the new render reported", func() (bool, string) {
		r := e.release("web")
		return r.Status.Render != nil && r.Status.Render.Ref != rel.Status.Render.Ref && r.Status.ObservedGeneration == 2,
			fmt.Sprintf("render %+v, observedGeneration %d", r.Status.Render, r.Status.ObservedGeneration)
	})
	e.waitApplied("web", "False", v1.ReasonWaitingForSync)

	synced := e.sync("web", false)
	requested := synced.Annotations[v1.AnnotationSyncRequestedAt]
	rel = e.waitApplied("web", "True", v1.ReasonApplied)
	if got := rel.Status.LastHandledSyncAt; got == nil || got.UTC().Format(time.RFC3339) != requested {
		t.Errorf("SP-10 lastHandledSyncAt = %v, want the annotation %s", got, requested)
	}
	if cm := e.configMap("web-config"); cm == nil || cm.Data["greeting"] != "hello" {
		t.Fatalf("ConfigMap web-config = %+v, want it applied after /sync", cm)
	}

	// SP-04: a later reconcile without a pending /sync, same render: Applied True,
	// reason Applied, "in sync; the apply waits for /sync". A spec change that does
	// not change the render starts it.
	n := e.settle("web")
	e.update("web", interval(time.Hour))
	e.waitReconciled("web", n)
	rel = e.waitApplied("web", "True", v1.ReasonApplied)
	applied := apimeta.FindStatusCondition(rel.Status.Conditions, v1.ConditionApplied)
	if !strings.Contains(applied.Message, "in sync") || !strings.Contains(applied.Message, "waits for /sync") {
		t.Errorf("SP-04 Applied message = %q, want it to say in sync and that the apply waits for /sync", applied.Message)
	}

	// SP-05, SP-06: a different render waits for /sync; the applied object stays.
	e.update("web", values(`{"greeting":"changed"}`))
	rel = e.waitApplied("web", "False", v1.ReasonWaitingForSync)
	if c := apimeta.FindStatusCondition(rel.Status.Conditions, v1.ConditionApplied); !strings.Contains(c.Message, "differs") {
		t.Errorf("SP-05 message = %q, want it to say the render differs", c.Message)
	}
	if cm := e.configMap("web-config"); cm == nil || cm.Data["greeting"] != "hello" {
		t.Errorf("SP-06 ConfigMap web-config = %+v, want it left as applied (greeting hello)", cm)
	}
}

func TestSP10_SP11_FailedApplyLeavesSyncPendingUntilASuccess(t *testing.T) {
	// seed: "convoy sets status.lastHandledSyncAt only after a successful apply. If the
	// apply fails or waits, the request stays pending. The next reconcile tries the
	// apply again."
	e := newEnv(t, envOptions{})
	e.createRelease("web", missingNamespace(e), interval(time.Second))
	e.waitApplied("web", "False", v1.ReasonWaitingForSync)

	requested := e.sync("web", false).Annotations[v1.AnnotationSyncRequestedAt]
	rel := e.waitApplied("web", "False", v1.ReasonUnappliable)
	if rel.Status.LastHandledSyncAt != nil {
		t.Fatalf("lastHandledSyncAt = %v after a failed apply, want unset", rel.Status.LastHandledSyncAt)
	}
	// The request stays pending: the next reconciles try again (and fail the same way).
	n := e.reconciles("web")
	e.waitReconciled("web", n+1)
	rel = e.waitApplied("web", "False", v1.ReasonUnappliable)
	if rel.Status.LastHandledSyncAt != nil {
		t.Fatalf("lastHandledSyncAt = %v after failed retries, want unset", rel.Status.LastHandledSyncAt)
	}

	// The cause goes away: a later reconcile applies and handles the request.
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "missing-" + e.ns}}
	if err := e.client.Create(e.ctx, ns); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.client.Delete(e.ctx, ns) })
	rel = e.waitApplied("web", "True", v1.ReasonApplied)
	if got := rel.Status.LastHandledSyncAt; got == nil || got.UTC().Format(time.RFC3339) != requested {
		t.Errorf("lastHandledSyncAt = %v, want the annotation %s", got, requested)
	}
	if cm := e.configMap("web-config"); cm == nil {
		t.Error("ConfigMap web-config was not applied")
	}
}

func TestSP19_SP21_SP22_ForceSkipsTheDryRunForOneReconcile(t *testing.T) {
	e := newEnv(t, envOptions{})
	// Automatic mode; the render's dry run is rejected, so nothing is applied.
	e.createRelease("web", automatic(), interval(time.Second), missingNamespace(e))
	e.waitApplied("web", "False", v1.ReasonUnappliable)
	if cm := e.configMap("web-config"); cm != nil {
		t.Fatal("ConfigMap web-config exists although the pre-apply dry run rejects the render")
	}

	// SP-19: a forced sync skips the pre-apply dry run: the apply goes ahead, applies
	// web-config, and fails on the object in the missing namespace (DeployFailed).
	forced := e.sync("web", true)
	forceAt := forced.Annotations[v1.AnnotationSyncForceRequestedAt]
	if forceAt == "" {
		t.Fatal("/sync?force=true wrote no sync-force-requested-at")
	}
	var rel *v1.Release
	e.eventually("lastHandledForceSyncAt", func() (bool, string) {
		rel = e.release("web")
		got := rel.Status.LastHandledForceSyncAt
		return got != nil && got.UTC().Format(time.RFC3339) == forceAt, fmt.Sprintf("lastHandledForceSyncAt %v", got)
	})
	if cm := e.configMap("web-config"); cm == nil {
		t.Fatal("SP-19 ConfigMap web-config was not applied: the forced reconcile did not skip the dry run")
	}
	// SP-22: written although that reconcile failed: its apply failed with DeployFailed.
	// The middleware records a reconcile's result after its status write: poll.
	e.eventually("SP-22 a reconcile ended with DeployFailed (the forced reconcile was expected to fail)", func() (bool, string) {
		return e.returned("web", v1.ReasonDeployFailed), "no reconcile returned DeployFailed"
	})
	if rel.Status.LastSuccessful != nil {
		t.Errorf("lastSuccessful = %+v after a failed forced apply, want unset", rel.Status.LastSuccessful)
	}

	// SP-21: one reconcile only: the next one runs the dry run again and is rejected.
	n := e.reconciles("web")
	e.waitReconciled("web", n+1)
	rel = e.waitApplied("web", "False", v1.ReasonUnappliable)
	if got := rel.Status.LastHandledForceSyncAt; got == nil || got.UTC().Format(time.RFC3339) != forceAt {
		t.Errorf("lastHandledForceSyncAt = %v, want it kept at %s", got, forceAt)
	}
}

// returned reports whether a reconcile of name returned an error of reason (a
// transient failure handed to the work queue).
func (e *env) returned(name, reason string) bool {
	e.calls.mu.Lock()
	defer e.calls.mu.Unlock()
	for _, r := range e.calls.results[client.ObjectKey{Namespace: e.ns, Name: name}] {
		if r.err != nil && strings.HasPrefix(r.err.Error(), reason+":") {
			return true
		}
	}
	return false
}

// SP-09 through the controller: after a handled /sync, a sync-requested-at later within
// the same second is not a new request (nothing is applied), one a second later is.
func TestSP09_PendingComparedToTheSecondEndToEnd(t *testing.T) {
	// seed: "In manual mode, a request is pending when the annotation time is later
	// than status.lastHandledSyncAt. convoy compares the times to the second."
	e := newEnv(t, envOptions{})
	e.createRelease("web", values(`{"greeting":"one"}`))
	e.waitApplied("web", "False", v1.ReasonWaitingForSync)
	e.sync("web", false)
	handled := e.waitApplied("web", "True", v1.ReasonApplied).Status.LastHandledSyncAt.UTC()
	// A new render waits for the next request.
	e.update("web", values(`{"greeting":"two"}`))
	e.waitApplied("web", "False", v1.ReasonWaitingForSync)
	n := e.settle("web")

	// Later within the same second: not later, to the second.
	sameSecond := handled.Truncate(time.Second).Add(900 * time.Millisecond).Format(time.RFC3339Nano)
	e.update("web", annotation(v1.AnnotationSyncRequestedAt, sameSecond))
	e.waitReconciled("web", n)
	n = e.settle("web")
	rel := e.waitApplied("web", "False", v1.ReasonWaitingForSync)
	if cm := e.configMap("web-config"); cm == nil || cm.Data["greeting"] != "one" {
		t.Errorf("ConfigMap %+v after a request in the second of the handled one (%s), want greeting one: nothing applied", cm, sameSecond)
	}
	if got := rel.Status.LastHandledSyncAt.UTC(); !got.Equal(handled) {
		t.Errorf("lastHandledSyncAt %s, want it unchanged at %s", got, handled)
	}

	// A second later: pending, applied and handled.
	next := handled.Truncate(time.Second).Add(time.Second).Format(time.RFC3339)
	e.update("web", annotation(v1.AnnotationSyncRequestedAt, next))
	e.waitReconciled("web", n)
	rel = e.waitApplied("web", "True", v1.ReasonApplied)
	e.waitGreeting("two")
	if got := rel.Status.LastHandledSyncAt.UTC().Format(time.RFC3339); got != next {
		t.Errorf("lastHandledSyncAt %s, want the request %s", got, next)
	}
}

func TestSP19_SP22_AFailedStatusWriteDoesNotUseUpAForce(t *testing.T) {
	// SP-22: "status.lastHandledForceSyncAt is set at the end of the first reconcile
	// after the request": a reconcile whose status write fails has not ended, so the
	// force stays pending and the next reconcile is forced too.
	fail := &testenv.FailWrites{Limit: 2}
	e := newEnv(t, envOptions{transport: fail.Wrap})
	fail.Path = "/namespaces/" + e.ns + "/releases/web/status"
	e.createRelease("web", automatic(), interval(time.Second), missingNamespace(e))
	e.waitApplied("web", "False", v1.ReasonUnappliable)

	fail.Armed.Store(true)
	forceAt := e.sync("web", true).Annotations[v1.AnnotationSyncForceRequestedAt]
	e.eventually("lastHandledForceSyncAt after the failed status writes", func() (bool, string) {
		got := e.release("web").Status.LastHandledForceSyncAt
		return got != nil && got.UTC().Format(time.RFC3339) == forceAt, fmt.Sprintf("lastHandledForceSyncAt %v", got)
	})
	if got := fail.Failed.Load(); got < fail.Limit {
		t.Fatalf("%d status writes failed, want %d: the test injected nothing", got, fail.Limit)
	}
	// The reconcile that wrote it was forced: it skipped the dry run (SP-19) and failed
	// the apply with DeployFailed; one that found the force used up would have been
	// rejected by the dry run (Unappliable) and written no lastHandledForceSyncAt.
	e.eventually("a forced reconcile returned DeployFailed", func() (bool, string) {
		return e.returned("web", v1.ReasonDeployFailed), "no reconcile returned DeployFailed"
	})
}
