package integration_test

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
)

// SP-31: a status write changes neither the generation nor the annotations, and
// cannot change spec.
func TestSP31_StatusWriteChangesOnlyStatus(t *testing.T) {
	ns := testNamespace(t)
	r := create(t, release(ns, "podinfo", func(r *convoyv1alpha1.Release) {
		r.Annotations = map[string]string{convoyv1alpha1.AnnotationSyncRequestedAt: "2026-12-02T10:04:05Z"}
	}))

	r.Status.ObservedGeneration = 1
	r.Status.Conditions = []metav1.Condition{{
		Type: convoyv1alpha1.ConditionApplied, Status: metav1.ConditionFalse, Reason: convoyv1alpha1.ReasonWaitingForSync,
		Message: "waiting", LastTransitionTime: metav1.Now(),
	}}
	r.Status.LastSuccessful = &convoyv1alpha1.LastSuccessful{RenderRef: refA}
	r.Spec.Chart.Version = "9.9.9"
	r.Annotations[convoyv1alpha1.AnnotationSyncRequestedAt] = "2030-01-01T00:00:00Z"
	r.Labels = map[string]string{"x": "y"}
	r.Mutations = []convoyv1alpha1.Mutation{{Target: convoyv1alpha1.MutationTarget{Kind: "Service"}, Patch: "a: b"}}
	got := update(t, r, "status")

	if got.Generation != 1 {
		t.Errorf("generation = %d, want 1", got.Generation)
	}
	if got.Spec.Chart.Version != "6.7.1" {
		t.Errorf("spec.chart.version = %q, want 6.7.1: /status changed spec", got.Spec.Chart.Version)
	}
	if v := got.Annotations[convoyv1alpha1.AnnotationSyncRequestedAt]; v != "2026-12-02T10:04:05Z" {
		t.Errorf("sync-requested-at = %q: /status changed an annotation", v)
	}
	if len(got.Labels) != 0 || len(got.Mutations) != 0 {
		t.Errorf("/status changed labels %v or mutations %v", got.Labels, got.Mutations)
	}
	if got.Status.ObservedGeneration != 1 || got.Status.LastSuccessful == nil || len(got.Status.Conditions) != 1 {
		t.Errorf("status not stored: %+v", got.Status)
	}
}
