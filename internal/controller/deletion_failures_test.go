package controller

import (
	"fmt"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/policy"
	"kumodo.io/convoy/internal/testenv"
)

// backoffOf is a retryBackoff of initial and factor.
func backoffOf(initial time.Duration, factor float64) releaseOption {
	return func(r *v1.Release) {
		r.Spec.SyncPolicy.RetryBackoff = &v1.RetryBackoff{Initial: &metav1.Duration{Duration: initial}, Factor: v1.NewFactor(factor)}
	}
}

// waitReady waits until the Ready condition of name has status and reason, and
// returns the Release.
func (e *env) waitReady(name, status, reason string) *v1.Release {
	e.t.Helper()
	var rel *v1.Release
	e.eventually(fmt.Sprintf("Release %s Ready=%s/%s", name, status, reason), func() (bool, string) {
		rel = e.release(name)
		c := apimeta.FindStatusCondition(rel.Status.Conditions, v1.ConditionReady)
		if c == nil {
			return false, "no Ready condition"
		}
		return string(c.Status) == status && c.Reason == reason, fmt.Sprintf("Ready=%s/%s: %s", c.Status, c.Reason, c.Message)
	})
	return rel
}

// waitGone waits until the Release name is gone.
func (e *env) waitGone(name string) {
	e.t.Helper()
	e.eventually("the Release "+name+" gone", func() (bool, string) {
		err := e.client.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: name}, &v1.Release{})
		return apierrors.IsNotFound(err), fmt.Sprintf("get: %v", err)
	})
}

// failedDelays are the RequeueAfter of the reconciles of name from the from-th on, up
// to the first that returned an error or no requeue.
func (e *env) failedDelays(name string, from int) []time.Duration {
	var out []time.Duration
	for _, r := range e.results(name)[from:] {
		if r.err != nil || r.res.RequeueAfter == 0 {
			break
		}
		out = append(out, r.res.RequeueAfter)
	}
	return out
}

// A Release on a remote Cluster is deleted while the Cluster does not answer (a Link
// in front of its API server holds every connection): the deletion reports
// Ready=False and Applied=False/ClusterNotReady with a message that says what waits
// and the ways on, its retries follow the Release's retryBackoff (1 s, 2 s, 4 s: one
// count per failure, none in the work queue), and once the Cluster answers again the
// deletion completes.
func TestDeletionWithTheClusterAwayIsReported(t *testing.T) {
	e := newEnv(t, envOptions{})
	link, err := testenv.LinkTo(controlPlane)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = link.Close() })
	kubeconfig, err := testenv.Kubeconfig(controlPlane, link.URL())
	if err != nil {
		t.Fatal(err)
	}
	e.createSecret("away-kubeconfig", kubeconfig)
	target := e.createCluster("away-"+e.ns, "away-kubeconfig")
	e.createRelease("web", automatic(), cluster(target), backoffOf(time.Second, 2))
	e.waitApplied("web", "True", v1.ReasonApplied)
	if e.configMap("web-config") == nil {
		t.Fatal("web-config not applied")
	}

	link.Hang()
	from := len(e.results("web"))
	if err := e.client.Delete(e.ctx, e.release("web")); err != nil {
		t.Fatal(err)
	}
	rel := e.waitApplied("web", "False", v1.ReasonClusterNotReady)
	msg := appliedMessage(rel)
	for _, want := range []string{"deletion waits", fmt.Sprintf("Cluster %q", target), "retries", "Orphan"} {
		if !strings.Contains(msg, want) {
			t.Errorf("Applied message %q does not say %q", msg, want)
		}
	}
	if c := apimeta.FindStatusCondition(rel.Status.Conditions, v1.ConditionReady); c == nil || c.Status != metav1.ConditionFalse || c.Reason != v1.ReasonClusterNotReady {
		t.Errorf("Ready = %+v, want False/ClusterNotReady", c)
	}

	e.eventually("three retries of the deletion", func() (bool, string) {
		d := e.failedDelays("web", from)
		var all []string
		for _, r := range e.results("web")[from:] {
			all = append(all, fmt.Sprintf("%v/%v", r.res.RequeueAfter, r.err))
		}
		return len(d) >= 3, fmt.Sprintf("delays %v (all %v; %s)", d, all, appliedMessage(e.release("web")))
	})
	if d := e.failedDelays("web", from); d[0] != time.Second || d[1] != 2*time.Second || d[2] != 4*time.Second {
		t.Errorf("delays %v, want 1s, 2s, 4s (retryBackoff, one count per failure)", d)
	}
	for i, r := range e.results("web")[from:] {
		if r.err != nil {
			t.Errorf("deletion reconcile %d returned %v to the work queue, want the Release's backoff", i, r.err)
		}
	}
	req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: e.ns, Name: "web"}}
	if n := e.reconciler.retries.NumRequeues(req); n != 0 {
		t.Errorf("the work queue counts %d retries, want none: the Release's backoff counts them", n)
	}
	if e.configMap("web-config") == nil {
		t.Fatal("web-config is gone although the Cluster does not answer")
	}

	link.Pass()
	e.waitGone("web")
	if cm := e.configMap("web-config"); cm != nil && cm.DeletionTimestamp == nil {
		t.Errorf("web-config %+v left behind by the deletion", cm.ObjectMeta)
	}
	if n := e.reconciler.failures.Get(policy.Key{Namespace: e.ns, Name: "web"}); n != 0 {
		t.Errorf("the controller still counts %d failures of the deleted Release", n)
	}
}

// A deletion whose delete the target refuses (the Release's user may not delete
// ConfigMaps: 403) reports Applied=False/DeleteFailed naming the object and the
// refusal, and is retried with the Release's retryBackoff; once the permission is
// granted, the deletion completes.
func TestDeleteFailedIsReported(t *testing.T) {
	e := newEnv(t, envOptions{})
	jobs := rbacv1.PolicyRule{APIGroups: []string{"batch"}, Resources: []string{"jobs"}, Verbs: allVerbs}
	target, role := e.restrictedTarget(rule("configmaps", allButDelete...), jobs)
	e.createRelease("web", automatic(), cluster(target), oneSecondRetries())
	e.waitApplied("web", "True", v1.ReasonApplied)

	from := len(e.results("web"))
	if err := e.client.Delete(e.ctx, e.release("web")); err != nil {
		t.Fatal(err)
	}
	rel := e.waitApplied("web", "False", v1.ReasonDeleteFailed)
	msg := appliedMessage(rel)
	for _, want := range []string{"deletion waits", "web-config", `cannot delete resource "configmaps"`, "Orphan"} {
		if !strings.Contains(msg, want) {
			t.Errorf("Applied message %q does not say %q", msg, want)
		}
	}
	if c := apimeta.FindStatusCondition(rel.Status.Conditions, v1.ConditionReady); c == nil || c.Status != metav1.ConditionFalse || c.Reason != v1.ReasonDeleteFailed {
		t.Errorf("Ready = %+v, want False/DeleteFailed", c)
	}
	e.eventually("two retries of the deletion", func() (bool, string) {
		d := e.failedDelays("web", from)
		return len(d) >= 2, fmt.Sprintf("delays %v", d)
	})
	if d := e.failedDelays("web", from); d[0] != time.Second || d[1] != time.Second {
		t.Errorf("delays %v, want 1s, 1s (retryBackoff, factor 1)", d)
	}
	if e.configMap("web-config") == nil {
		t.Fatal("web-config is gone although its delete is refused")
	}

	e.grant(role, rule("configmaps", allVerbs...), jobs)
	e.waitGone("web")
	if cm := e.configMap("web-config"); cm != nil && cm.DeletionTimestamp == nil {
		t.Errorf("web-config %+v left behind by the deletion", cm.ObjectMeta)
	}
}

// TestFailedStatusWriteCountedOnce: every write of the Release's status fails while
// the Release fails transiently (its Cluster does not exist). Each reconcile is one
// failure: counted once in the controller's FailureCounter, not also in the work
// queue's limiter, and retried after the Release's retryBackoff (1 s, 2 s, 4 s), not
// handed to the work queue. Once the write goes through, the failure is reported.
func TestFailedStatusWriteCountedOnce(t *testing.T) {
	fail := &testenv.FailWrites{}
	e := newEnv(t, envOptions{transport: fail.Wrap})
	fail.Path = "/namespaces/" + e.ns + "/releases/web/status"
	fail.Armed.Store(true)
	e.createRelease("web", automatic(), cluster("nowhere-"+e.ns), backoffOf(time.Second, 2))

	e.eventually("three failed reconciles", func() (bool, string) {
		return len(e.results("web")) >= 3, fmt.Sprintf("%d reconciles, %d failed writes", len(e.results("web")), fail.Failed.Load())
	})
	fail.Armed.Store(false)
	if got := fail.Failed.Load(); got < 3 {
		t.Fatalf("%d status writes failed, want at least 3: the test injected nothing", got)
	}
	results := e.results("web")[:3]
	for i, want := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second} {
		if r := results[i]; r.err != nil || r.res.RequeueAfter != want {
			t.Errorf("reconcile %d returned %+v, %v; want a retry after %s (retryBackoff, the failure counted once)", i, r.res, r.err, want)
		}
	}
	req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: e.ns, Name: "web"}}
	if n := e.reconciler.retries.NumRequeues(req); n != 0 {
		t.Errorf("the work queue counts %d retries, want none: the failures are counted once, by the controller", n)
	}

	rel := e.waitApplied("web", "False", v1.ReasonClusterNotReady)
	if c := apimeta.FindStatusCondition(rel.Status.Conditions, v1.ConditionReady); c == nil || c.Status != metav1.ConditionFalse {
		t.Errorf("Ready = %+v, want False", c)
	}
	if n, r := e.reconciler.failures.Get(policy.Key{Namespace: e.ns, Name: "web"}), len(e.results("web")); n < 3 || n > r+1 {
		t.Errorf("the controller counts %d failures after %d failed reconciles, want one each", n, r)
	}
}
