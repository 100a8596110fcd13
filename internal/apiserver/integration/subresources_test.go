package integration_test

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
)

const (
	refA = "sha256:4f1c000000000000000000000000000000000000000000000000000000000000"
	refB = "sha256:9a2b0c1d2e000000000000000000000000000000000000000000000000000000"
)

// onlyChanged checks that after differs from before only in the named top-level field
// and in sync-requested-at, which must be set, and that the generation is the same.
func onlyChanged(t *testing.T, before, after *convoyv1alpha1.Release, field string) {
	t.Helper()
	if after.Generation != before.Generation {
		t.Errorf("generation changed from %d to %d", before.Generation, after.Generation)
	}
	if !syncTimeFormat.MatchString(after.Annotations[convoyv1alpha1.AnnotationSyncRequestedAt]) {
		t.Errorf("sync-requested-at = %q, want a UTC time", after.Annotations[convoyv1alpha1.AnnotationSyncRequestedAt])
	}
	a, b := after.DeepCopy(), before.DeepCopy()
	delete(a.Annotations, convoyv1alpha1.AnnotationSyncRequestedAt)
	if len(a.Annotations) == 0 {
		a.Annotations = nil
	}
	for _, r := range []*convoyv1alpha1.Release{a, b} {
		r.ResourceVersion, r.ManagedFields = "", nil
		switch field {
		case "pin":
			r.Pin = nil
		case "mutations":
			r.Mutations = nil
		case "lifecycle":
			r.Lifecycle = nil
		}
	}
	if diff := cmp.Diff(b, a); diff != "" {
		t.Errorf("/%s changed more than %s and sync-requested-at (-before +after):\n%s", field, field, diff)
	}
}

// SP-13: /pin writes pin and sync-requested-at, nothing else; a pin without renderRef
// pins status.lastSuccessful.renderRef; pin: null unpins.
func TestSP13_PinWritesPinAndSyncRequestedAt(t *testing.T) {
	ns := testNamespace(t)
	r := create(t, release(ns, "podinfo"))
	r.Status.LastSuccessful = &convoyv1alpha1.LastSuccessful{RenderRef: refA}
	r = update(t, r, "status")

	// PUT with a render.
	in := r.DeepCopy()
	in.Pin = &convoyv1alpha1.Pin{RenderRef: refB, Reason: "incident 4711"}
	in.Spec.Chart.Version = "ignored"
	got := update(t, in, "pin")
	onlyChanged(t, r, got, "pin")
	if got.Pin == nil || got.Pin.RenderRef != refB || got.Pin.Reason != "incident 4711" || got.Pin.PinnedAt == nil {
		t.Fatalf("pin = %+v, want %s with reason and pinnedAt", got.Pin, refB)
	}

	// PATCH without a render: the last successful one.
	patched, err := mergePatch(admin(t), ctx(t), ns, "podinfo", "pin",
		map[string]interface{}{"pin": map[string]interface{}{"renderRef": nil, "reason": "freeze"}})
	if err != nil {
		t.Fatalf("PATCH /pin: %v", err)
	}
	if patched.Pin == nil || patched.Pin.RenderRef != refA || patched.Pin.Reason != "freeze" {
		t.Errorf("pin = %+v, want status.lastSuccessful.renderRef %s", patched.Pin, refA)
	}

	// GET.
	fetched := &convoyv1alpha1.Release{}
	if err := admin(t).Get().Namespace(ns).Resource("releases").Name("podinfo").SubResource("pin").Do(ctx(t)).Into(fetched); err != nil {
		t.Fatalf("GET /pin: %v", err)
	}
	if fetched.Pin == nil || fetched.Pin.RenderRef != refA {
		t.Errorf("GET /pin: pin = %+v", fetched.Pin)
	}

	// PUT pin: null unpins.
	fetched.Pin = nil
	unpinned := update(t, fetched, "pin")
	if unpinned.Pin != nil {
		t.Errorf("pin = %+v after PUT pin: null", unpinned.Pin)
	}
	if !parseSync(t, unpinned.Annotations[convoyv1alpha1.AnnotationSyncRequestedAt]).After(
		parseSync(t, patched.Annotations[convoyv1alpha1.AnnotationSyncRequestedAt])) {
		t.Errorf("unpin did not write a later sync-requested-at")
	}
}

// A pin without renderRef before any successful apply names nothing: 422, nothing stored.
func TestPinWithoutRenderAndNothingAppliedIsInvalid(t *testing.T) {
	ns := testNamespace(t)
	created := create(t, release(ns, "podinfo"))
	_, err := mergePatch(admin(t), ctx(t), ns, "podinfo", "pin", map[string]interface{}{"pin": map[string]string{"reason": "x"}})
	if statusCode(err) != http.StatusUnprocessableEntity {
		t.Fatalf("PATCH /pin: %v, want 422", err)
	}
	if got := get(t, ns, "podinfo"); got.Pin != nil || got.ResourceVersion != created.ResourceVersion {
		t.Errorf("stored pin %+v, annotations %v (resourceVersion %s, %s at create) after a rejected /pin",
			got.Pin, got.Annotations, got.ResourceVersion, created.ResourceVersion)
	}
}

// SP-13, SP-33: /mutations writes mutations and sync-requested-at, nothing else.
func TestSP13_MutationsWritesMutationsAndSyncRequestedAt(t *testing.T) {
	ns := testNamespace(t)
	r := create(t, release(ns, "podinfo"))
	in := r.DeepCopy()
	in.Mutations = []convoyv1alpha1.Mutation{{
		Target:    convoyv1alpha1.MutationTarget{Kind: "Service", Name: "podinfo"},
		JSONPatch: []convoyv1alpha1.JSONPatchOperation{{Op: "remove", Path: "/metadata/labels/tier"}},
	}}
	in.Labels = map[string]string{"ignored": "yes"}
	got := update(t, in, "mutations")
	onlyChanged(t, r, got, "mutations")
	if len(got.Mutations) != 1 || got.Mutations[0].Target.Kind != "Service" {
		t.Errorf("mutations = %+v", got.Mutations)
	}
}

// SP-13, SP-33: /lifecycle writes lifecycle and sync-requested-at, nothing else.
func TestSP13_LifecycleWritesLifecycleAndSyncRequestedAt(t *testing.T) {
	ns := testNamespace(t)
	r := create(t, release(ns, "podinfo"))
	patch := map[string]interface{}{"lifecycle": map[string]interface{}{"hooks": []interface{}{
		map[string]interface{}{"name": "migrate", "phase": "PreApply", "job": jobSpec()},
	}}}
	got, err := mergePatch(admin(t), ctx(t), ns, "podinfo", "lifecycle", patch)
	if err != nil {
		t.Fatalf("PATCH /lifecycle: %v", err)
	}
	onlyChanged(t, r, got, "lifecycle")
	if got.Lifecycle == nil || len(got.Lifecycle.Hooks) != 1 || got.Lifecycle.Hooks[0].Name != "migrate" {
		t.Errorf("lifecycle = %+v", got.Lifecycle)
	}
}

func jobSpec() *batchv1.JobSpec {
	return &batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever,
		Containers:    []corev1.Container{{Name: "migrate", Image: "busybox"}},
	}}}
}
