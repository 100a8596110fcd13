package integration_test

import (
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
)

// SP-25: only a change to spec changes the generation.
func TestSP25_SpecChangeBumpsGeneration(t *testing.T) {
	ns := testNamespace(t)
	r := create(t, release(ns, "podinfo"))
	if r.Generation != 1 {
		t.Fatalf("generation after create = %d, want 1", r.Generation)
	}
	r.Spec.Chart.Version = "6.7.2"
	got := update(t, r, "")
	if got.Generation != 2 {
		t.Errorf("generation after a spec change = %d, want 2", got.Generation)
	}

	// The same values in another key order are the same spec.
	got.Spec.Values = &runtime.RawExtension{Raw: []byte(`{"a":1,"b":{"c":2}}`)}
	got = update(t, got, "")
	got.Spec.Values = &runtime.RawExtension{Raw: []byte(`{ "b": {"c": 2}, "a": 1 }`)}
	got = update(t, got, "")
	if got.Generation != 3 {
		t.Errorf("generation after re-sending equal values = %d, want 3", got.Generation)
	}
}

// SP-25, SP-32: labels, annotations (also the sync annotations), mutations and
// lifecycle change through the main resource without changing the generation.
func TestSP32_MainResourceWritesOutsideSpecKeepGeneration(t *testing.T) {
	ns := testNamespace(t)
	r := create(t, release(ns, "podinfo"))

	r.Labels = map[string]string{"team": "a"}
	r.Annotations = map[string]string{"note": "x", convoyv1alpha1.AnnotationSyncRequestedAt: "2026-12-02T10:04:05Z"}
	r.Mutations = []convoyv1alpha1.Mutation{{
		Target: convoyv1alpha1.MutationTarget{Group: "apps", Kind: "Deployment", Name: "podinfo"},
		Patch:  "spec: {replicas: 5}",
	}}
	r.Lifecycle = &convoyv1alpha1.Lifecycle{Hooks: []convoyv1alpha1.Hook{hook("migrate")}}
	got := update(t, r, "")

	if got.Generation != 1 {
		t.Errorf("generation = %d, want 1", got.Generation)
	}
	if len(got.Mutations) != 1 || got.Lifecycle == nil || len(got.Lifecycle.Hooks) != 1 {
		t.Errorf("mutations and lifecycle not stored: %+v %+v", got.Mutations, got.Lifecycle)
	}
	if got.Labels["team"] != "a" || got.Annotations[convoyv1alpha1.AnnotationSyncRequestedAt] != "2026-12-02T10:04:05Z" {
		t.Errorf("labels/annotations not stored: %v %v", got.Labels, got.Annotations)
	}
	if h := got.Lifecycle.Hooks[0]; h.Timeout == nil || h.Timeout.Duration != 10*time.Minute {
		t.Errorf("hook timeout = %v, want the default 10m", h.Timeout)
	}
}

// The main resource keeps status and pin from storage: a pin cannot be set, nor a
// status changed, through it.
func TestMainResourceKeepsStatusAndPin(t *testing.T) {
	ns := testNamespace(t)
	r := create(t, release(ns, "podinfo", func(r *convoyv1alpha1.Release) {
		r.Pin = &convoyv1alpha1.Pin{RenderRef: refA}
		r.Status.ObservedGeneration = 7
	}))
	if r.Pin != nil || r.Status.ObservedGeneration != 0 {
		t.Fatalf("create stored pin %+v and status %+v, want neither", r.Pin, r.Status)
	}

	r.Status.ObservedGeneration = 1
	r = update(t, r, "status")
	r.Pin = &convoyv1alpha1.Pin{RenderRef: refB}
	r.Status.ObservedGeneration = 9
	got := update(t, r, "")
	if got.Pin != nil {
		t.Errorf("pin set through the main resource: %+v", got.Pin)
	}
	if got.Status.ObservedGeneration != 1 {
		t.Errorf("status.observedGeneration = %d, want 1 (kept from storage)", got.Status.ObservedGeneration)
	}

	// A merge patch too.
	patched, err := mergePatch(admin(t), ctx(t), ns, "podinfo", "", map[string]interface{}{"pin": map[string]string{"renderRef": refA}})
	if err != nil {
		t.Fatal(err)
	}
	if patched.Pin != nil {
		t.Errorf("pin set by a merge patch of the main resource: %+v", patched.Pin)
	}
}

// Defaults are set at create; automatic and interval have none (SP-02, SP-37).
func TestSP02_DefaultsAndNoDefaultForAutomaticAndInterval(t *testing.T) {
	ns := testNamespace(t)
	got := create(t, release(ns, "podinfo", func(r *convoyv1alpha1.Release) {
		r.Spec.FailurePolicy = &convoyv1alpha1.FailurePolicy{}
	}))
	if got.Spec.SyncPolicy.Automatic != nil {
		t.Errorf("syncPolicy.automatic = %v, want unset", *got.Spec.SyncPolicy.Automatic)
	}
	if got.Spec.SyncPolicy.Interval != nil {
		t.Errorf("syncPolicy.interval = %v, want unset", got.Spec.SyncPolicy.Interval)
	}
	if got.Spec.Prune == nil || !*got.Spec.Prune {
		t.Errorf("prune = %v, want true", got.Spec.Prune)
	}
	if got.Spec.DeletionPolicy != convoyv1alpha1.DeletionPolicyDelete {
		t.Errorf("deletionPolicy = %q, want Delete", got.Spec.DeletionPolicy)
	}
	fp := got.Spec.FailurePolicy
	if fp.Action != convoyv1alpha1.FailureActionRollback || fp.HealthTimeout == nil || fp.HealthTimeout.Duration != 5*time.Minute {
		t.Errorf("failurePolicy = %+v, want Rollback and 5m", fp)
	}
}

func hook(name string) convoyv1alpha1.Hook {
	return convoyv1alpha1.Hook{
		Name:  name,
		Phase: convoyv1alpha1.HookPreApply,
		Job:   jobSpec(),
	}
}

// Every Release is stored with convoy's finalizer, so that deleting it lets the
// controller delete what it applied; finalizers the user sets are kept.
func TestCreateAddsTheFinalizer(t *testing.T) {
	ns := testNamespace(t)
	got := create(t, release(ns, "podinfo", func(r *convoyv1alpha1.Release) {
		r.Finalizers = []string{"example.com/keep"}
	}))
	if want := []string{"example.com/keep", convoyv1alpha1.Finalizer}; !slices.Equal(got.Finalizers, want) {
		t.Errorf("finalizers = %v, want %v", got.Finalizers, want)
	}
	got = create(t, release(ns, "again", func(r *convoyv1alpha1.Release) {
		r.Finalizers = []string{convoyv1alpha1.Finalizer}
	}))
	if want := []string{convoyv1alpha1.Finalizer}; !slices.Equal(got.Finalizers, want) {
		t.Errorf("finalizers = %v, want %v (not twice)", got.Finalizers, want)
	}
}

// SP-25: a deletion does not change the generation either (decision 0161). The generic
// registry raises it when it marks an object with finalizers as being deleted; the
// Release keeps its generation, so that the Releases of higher cluster waves, which
// compare it with the observedGeneration of its conditions, see no new spec. A spec
// change of the Release being deleted still raises it, and an object gone stays gone.
func TestSP25_DeletionKeepsGeneration(t *testing.T) {
	ns := testNamespace(t)
	r := create(t, release(ns, "podinfo"))
	r.Spec.Chart.Version = "6.7.2"
	r = update(t, r, "")
	if r.Generation != 2 || len(r.Finalizers) == 0 {
		t.Fatalf("before the deletion: generation %d, finalizers %v; want 2 and convoy's", r.Generation, r.Finalizers)
	}
	for range 2 { // a second DELETE of a Release being deleted changes nothing either
		if err := admin(t).Delete().Namespace(ns).Resource("releases").Name("podinfo").Do(ctx(t)).Error(); err != nil {
			t.Fatalf("deleting the Release: %v", err)
		}
		got := get(t, ns, "podinfo")
		if got.DeletionTimestamp == nil {
			t.Fatalf("deletionTimestamp not set: the finalizer should hold the Release")
		}
		if got.Generation != 2 {
			t.Errorf("generation after the deletion = %d, want 2: only a change to spec changes it", got.Generation)
		}
	}
	got := get(t, ns, "podinfo")
	got.Spec.Chart.Version = "6.7.3"
	if got = update(t, got, ""); got.Generation != 3 {
		t.Errorf("generation after a spec change of the Release being deleted = %d, want 3", got.Generation)
	}
	got.Finalizers = nil
	update(t, got, "")
	if err := admin(t).Get().Namespace(ns).Resource("releases").Name("podinfo").Do(ctx(t)).Error(); statusCode(err) != 404 {
		t.Errorf("after its finalizer went: %v, want 404", err)
	}
}
