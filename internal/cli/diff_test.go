package cli

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/diff"
)

func TestUnifiedDiff(t *testing.T) {
	live := []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: podinfo\nspec:\n  replicas: 2\n")
	want := []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: podinfo\nspec:\n  replicas: 5\n")
	var b strings.Builder
	b.WriteString(diff.UnifiedText("Deployment podinfo/podinfo", live, want))
	b.WriteString(diff.UnifiedText("Service podinfo/podinfo", nil, []byte("kind: Service\n")))
	b.WriteString(diff.UnifiedText("ConfigMap podinfo/old (pruned)", []byte("kind: ConfigMap\n"), nil))
	b.WriteString(diff.UnifiedText("unchanged", live, live))
	golden(t, "diff", b.String())
}

// release diff against the host cluster of the local control plane (golden file):
// a changed object, an unchanged one (no output), a new one, and of the inventory's
// objects that the render no longer has, one that a prune would delete, one whose
// prune is disabled and one already gone (no output for either).
func TestDiffAgainstCluster(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	createRelease(t, ns, "podinfo")
	kube := kubernetes.NewForConfigOrDie(env.admin)
	for _, cm := range []*corev1.ConfigMap{
		{ObjectMeta: metav1.ObjectMeta{Name: "podinfo", Labels: map[string]string{"app": "podinfo"}}, Data: map[string]string{"a": "b", "keep": "x"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "same"}, Data: map[string]string{"a": "b"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "old"}, Data: map[string]string{"a": "b"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "kept", Annotations: map[string]string{v1.AnnotationPrune: v1.PruneDisabled}}},
	} {
		if _, err := kube.CoreV1().ConfigMaps(ns).Create(testCtx(t), cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	manifests := `apiVersion: v1
kind: ConfigMap
metadata:
  name: podinfo
  namespace: ` + ns + `
  labels: {app: podinfo}
data: {a: c, keep: x}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: same, namespace: ` + ns + `}
data: {a: b}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: new, namespace: ` + ns + `}
data: {a: b}
`
	rd := &v1.Render{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: v1.RenderRef(refB).RenderName("podinfo"), Labels: map[string]string{v1.LabelRelease: "podinfo"}},
		RenderRef:  refB, Release: "podinfo", Chart: v1.RenderChart{Name: "podinfo", Version: "6.7.1"}, ObjectCount: 3,
		Manifests: gz(t, manifests),
	}
	if err := admin(t).rest.Post().Namespace(ns).Resource("renders").Body(rd).Do(testCtx(t)).Error(); err != nil {
		t.Fatalf("creating the Render: %v", err)
	}
	cm := func(name string) v1.InventoryObject {
		return v1.InventoryObject{ObjectReference: v1.ObjectReference{Version: "v1", Kind: "ConfigMap", Namespace: ns, Name: name}}
	}
	inv := &v1.ReleaseInventory{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "podinfo"},
		RenderRef:  refA,
		Objects:    []v1.InventoryObject{cm("podinfo"), cm("same"), cm("old"), cm("kept"), cm("gone")},
	}
	if err := admin(t).rest.Post().Namespace(ns).Resource("releaseinventories").Body(inv).Do(testCtx(t)).Error(); err != nil {
		t.Fatalf("creating the ReleaseInventory: %v", err)
	}
	writeStatus(t, ns, "podinfo", func(r *v1.Release) {
		r.Status.Render = &v1.RenderStatus{Ref: refB, ChartVersion: "6.7.1"}
	})

	res := plugin(t, nil, "release", "diff", "podinfo", "-n", ns)
	if res.code != 0 {
		t.Fatalf("diff: exit %d, stderr %s", res.code, res.stderr)
	}
	golden(t, "diff_cluster", strings.ReplaceAll(res.stdout, ns, "NAMESPACE"))

	res = plugin(t, nil, "release", "diff", "podinfo", "--ref", refA, "-n", ns)
	if res.code != ExitFailure || !strings.Contains(res.stderr, "has no Render "+refA) {
		t.Errorf("diff --ref of a render without a Render: exit %d, stderr %q", res.code, res.stderr)
	}
}
