package integration_test

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
)

// namespaceUID reads the UID of namespace ns from kube-apiserver.
func namespaceUID(t *testing.T, ns string) string {
	t.Helper()
	got, err := kubernetes.NewForConfigOrDie(env.admin).CoreV1().Namespaces().Get(ctx(t), ns, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("reading namespace %s: %v", ns, err)
	}
	return string(got.UID)
}

func forged(annotations map[string]string) map[string]string {
	out := map[string]string{"note": "kept"}
	for k, v := range annotations {
		out[k] = v
	}
	out[convoyv1alpha1.AnnotationNamespaceUID] = "0b7f1a52-0000-4000-8000-00000000f0f0"
	return out
}

// A Release records the UID of the namespace it is created in
// (convoy.kumodo.io/namespace-uid), whatever the request says, and no write changes
// or removes it: the main resource keeps the stored value (PUT, merge patch,
// server-side apply), as the subresources keep all metadata.
func TestAReleaseRecordsItsNamespaceUID(t *testing.T) {
	ns := testNamespace(t)
	want := namespaceUID(t, ns)
	recorded := func(what string, r *convoyv1alpha1.Release) {
		t.Helper()
		if got := r.Annotations[convoyv1alpha1.AnnotationNamespaceUID]; got != want {
			t.Errorf("%s: %s = %q, want namespace %s's UID %q", what, convoyv1alpha1.AnnotationNamespaceUID, got, ns, want)
		}
	}

	r := create(t, release(ns, "plain"))
	recorded("created without it", r)
	recorded("read back", get(t, ns, "plain"))

	// A forged value, or one copied from another namespace (a restore), is replaced.
	r = create(t, release(ns, "podinfo", func(r *convoyv1alpha1.Release) { r.Annotations = forged(nil) }))
	recorded("created with a forged value", r)
	if r.Annotations["note"] != "kept" {
		t.Errorf("the other annotations were not kept: %v", r.Annotations)
	}

	r.Annotations = forged(r.Annotations)
	r = update(t, r, "")
	recorded("PUT with a forged value", r)
	delete(r.Annotations, convoyv1alpha1.AnnotationNamespaceUID)
	r = update(t, r, "")
	recorded("PUT without it", r)

	got, err := mergePatch(admin(t), ctx(t), ns, "podinfo", "", map[string]any{"metadata": map[string]any{
		"annotations": map[string]any{convoyv1alpha1.AnnotationNamespaceUID: "forged"}}})
	if err != nil {
		t.Fatalf("merge patch: %v", err)
	}
	recorded("merge patch with a forged value", got)
	got, err = mergePatch(admin(t), ctx(t), ns, "podinfo", "", map[string]any{"metadata": map[string]any{
		"annotations": map[string]any{convoyv1alpha1.AnnotationNamespaceUID: nil}}})
	if err != nil {
		t.Fatalf("merge patch: %v", err)
	}
	recorded("merge patch removing it", got)

	manifest := `{"apiVersion":"convoy.kumodo.io/v1alpha1","kind":"Release","metadata":{"name":"podinfo","namespace":"` + ns +
		`","annotations":{"` + convoyv1alpha1.AnnotationNamespaceUID + `":"forged"}},` +
		`"spec":{"chart":{"repository":"https://charts.example.com","name":"podinfo","version":"6.7.1"}}}`
	got = &convoyv1alpha1.Release{}
	if err := admin(t).Patch(types.ApplyPatchType).Namespace(ns).Resource("releases").Name("podinfo").
		Param("fieldManager", "alice").Param("force", "true").Body([]byte(manifest)).Do(ctx(t)).Into(got); err != nil {
		t.Fatalf("server-side apply: %v", err)
	}
	recorded("server-side apply with a forged value", got)

	got.Annotations = forged(got.Annotations)
	got = update(t, got, "status")
	recorded("status write with a forged value", got)
}

// A ReleaseSet records its namespace's UID in the same way.
func TestAReleaseSetRecordsItsNamespaceUID(t *testing.T) {
	ns := testNamespace(t)
	want := namespaceUID(t, ns)
	s := mustCreateSet(t, releaseSet(ns, "web", func(s *convoyv1alpha1.ReleaseSet) { s.Annotations = forged(nil) }))
	if got := s.Annotations[convoyv1alpha1.AnnotationNamespaceUID]; got != want {
		t.Errorf("created with a forged value: %q, want namespace %s's UID %q", got, ns, want)
	}
	delete(s.Annotations, convoyv1alpha1.AnnotationNamespaceUID)
	s = updateSet(t, s, "")
	if got := s.Annotations[convoyv1alpha1.AnnotationNamespaceUID]; got != want {
		t.Errorf("PUT without it: %q, want %q", got, want)
	}
}
