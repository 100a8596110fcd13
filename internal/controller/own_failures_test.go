package controller

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/testenv"
)

// Decision 0166, end to end: a failure of convoy's own writes (storing the Render
// fails) is reported like any transient failure: Applied=False/DeployFailed naming
// it, no status.render for a Render that is not stored, and the retries follow the
// Release's retryBackoff (1 s, 2 s), not the work queue's limiter; the Release
// recovers once the write goes through.
func TestAFailedRenderStoreIsATransientFailureWithTheReleasesBackoff(t *testing.T) {
	fail := &testenv.FailWrites{} // every write to the path fails while armed
	e := newEnv(t, envOptions{transport: fail.Wrap})
	fail.Path = "/namespaces/" + e.ns + "/renders"
	fail.Armed.Store(true)
	e.createRelease("web", automatic(), func(r *v1.Release) {
		r.Spec.SyncPolicy.RetryBackoff = &v1.RetryBackoff{Initial: &metav1.Duration{Duration: time.Second}, Factor: v1.NewFactor(2)}
	})
	rel := e.waitApplied("web", "False", v1.ReasonDeployFailed)
	msg := appliedMessage(rel)
	for _, want := range []string{"its own objects", "store Render", "injected failure"} {
		if !strings.Contains(msg, want) {
			t.Errorf("Applied message %q does not say %q", msg, want)
		}
	}
	if rel.Status.Render != nil {
		t.Errorf("status.render = %+v, want none: its Render is not stored", rel.Status.Render)
	}
	if c := apimeta.FindStatusCondition(rel.Status.Conditions, v1.ConditionReady); c == nil || c.Status != metav1.ConditionFalse {
		t.Errorf("Ready = %+v, want False", c)
	}
	e.eventually("two retries", func() (bool, string) {
		return len(e.requeueDelays("web")) >= 3, fmt.Sprintf("delays %v", e.requeueDelays("web"))
	})
	// The first reconcile adds the finalizer and fails; then the retries after 1 s, 2 s.
	if d := e.requeueDelays("web"); d[0] != time.Second || d[1] != 2*time.Second {
		t.Errorf("delays %v, want 1s then 2s (retryBackoff)", d)
	}
	if r, _ := e.lastResult("web"); r.err != nil {
		t.Errorf("a reconcile returned %v to the work queue, want the Release's backoff", r.err)
	}

	fail.Armed.Store(false)
	rel = e.waitApplied("web", "True", v1.ReasonApplied)
	if rel.Status.Render == nil || len(e.renders("web")) != 1 {
		t.Errorf("status.render %+v, %d Renders; want the render stored and named", rel.Status.Render, len(e.renders("web")))
	}
}

// Decision 0167, end to end: a pre-delete hook object that the API server refuses
// (a ClusterRoleBinding whose subject name renders empty: 422) holds the deletion as
// a failed hook: Applied=False/HookFailed and Ready=False naming the object, the API
// server's message and the ways on, a Warning event, the failure recorded in
// status.hooks (later reconciles do not apply it again). deletionPolicy Orphan lets
// the deletion finish and leaves the objects.
func TestARefusedPreDeleteHookObjectHoldsTheDeletionAsHookFailed(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.createRelease("web", automatic(), testdataChart(t, "refused-delete-hook"))
	rel := e.waitApplied("web", "True", v1.ReasonApplied)
	if err := e.client.Delete(e.ctx, rel); err != nil {
		t.Fatal(err)
	}
	rel = e.waitApplied("web", "False", v1.ReasonHookFailed)
	binding := e.ns + "-web-cleanup"
	msg := appliedMessage(rel)
	for _, want := range []string{"deletion waits", "ClusterRoleBinding", binding, "subjects[0].name: Required value", "--force", "Orphan"} {
		if !strings.Contains(msg, want) {
			t.Errorf("HookFailed message %q does not say %q", msg, want)
		}
	}
	if c := apimeta.FindStatusCondition(rel.Status.Conditions, v1.ConditionReady); c == nil || c.Status != metav1.ConditionFalse || c.Reason != v1.ReasonHookFailed {
		t.Errorf("Ready = %+v, want False/HookFailed", c)
	}
	if hs := rel.Status.Hooks; len(hs) != 1 || hs[0].Phase != v1.HookJobFailed || hs[0].Run != v1.HookRunDelete {
		t.Errorf("status.hooks = %+v, want the refused delete hook recorded as Failed", hs)
	}
	e.waitEvent(v1.ReasonHookFailed, binding)
	if e.configMap("web-config") == nil {
		t.Fatal("the objects were deleted although the pre-delete hook was refused")
	}

	// The deletion stays held, with the same status: a later reconcile (a /sync starts
	// one) neither applies the hook again nor writes anything new.
	n := e.reconciles("web")
	e.sync("web", false)
	e.waitReconciled("web", n)
	if got := e.release("web"); !equality.Semantic.DeepEqual(got.Status, rel.Status) || e.configMap("web-config") == nil {
		t.Errorf("after another reconcile: status %+v (was %+v), web-config exists %v; want the deletion held unchanged",
			got.Status, rel.Status, e.configMap("web-config") != nil)
	}

	// A forced /sync applies the hook again: refused again, the deletion still waits,
	// and the force is handled.
	forceAt := e.sync("web", true).Annotations[v1.AnnotationSyncForceRequestedAt]
	rel = e.waitForceHandled("web", forceAt)
	if c := apimeta.FindStatusCondition(rel.Status.Conditions, v1.ConditionApplied); c == nil || c.Reason != v1.ReasonHookFailed || e.configMap("web-config") == nil {
		t.Errorf("after a forced /sync: Applied %+v, web-config exists %v; want HookFailed and the objects kept", c, e.configMap("web-config") != nil)
	}

	e.update("web", func(r *v1.Release) { r.Spec.DeletionPolicy = v1.DeletionPolicyOrphan })
	e.eventually("the Release deleted", func() (bool, string) {
		err := e.client.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: "web"}, &v1.Release{})
		return apierrors.IsNotFound(err), fmt.Sprintf("get: %v", err)
	})
	if e.configMap("web-config") == nil {
		t.Error("deletionPolicy Orphan deleted web-config")
	}
}
