package cli

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/apply"
	"kumodo.io/convoy/internal/diff"
	convoyhooks "kumodo.io/convoy/internal/hooks"
	"kumodo.io/convoy/internal/manifest"
	"kumodo.io/convoy/internal/observer/drift"
)

// The pre-apply dry run (internal/apply), the observer's drift check
// (internal/observer/drift) and `kubectl convoy release diff` agree on what an
// apply of the same render would change on the same cluster: after convoy
// applied a first render, one object is deleted by hand, one has a field convoy
// manages edited by another manager, one only gets a label from another manager
// (not a change), and the second render changes one object's data and a
// pre-upgrade chart hook that is a ConfigMap (applied, so diffed) beside a hook
// Job (run, not applied, so not diffed).
func TestApplyDriftAndReleaseDiffAgree(t *testing.T) {
	needCluster(t)
	ctx := testCtx(t)
	ns := namespace(t)
	createRelease(t, ns, "podinfo")
	target, err := client.New(env.admin, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cm := func(name string, data map[string]string, annotations map[string]string) string {
		u := map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": name, "namespace": ns, "annotations": annotations}, "data": data}
		b, err := yaml.Marshal(u)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	hook := map[string]string{convoyhooks.Annotation: "pre-upgrade"}
	hookJob := `apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
  namespace: ` + ns + `
  annotations: {helm.sh/hook: pre-upgrade}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: migrate, image: busybox}]
`
	first := strings.Join([]string{
		cm("changed", map[string]string{"a": "b"}, nil),
		cm("same", map[string]string{"a": "b"}, nil),
		cm("deleted", map[string]string{"a": "b"}, nil),
		cm("edited", map[string]string{"x": "1"}, nil),
		cm("hook-config", map[string]string{"h": "1"}, hook),
		hookJob,
	}, "---\n")
	second := strings.Join([]string{
		cm("changed", map[string]string{"a": "c"}, nil),
		cm("same", map[string]string{"a": "b"}, nil),
		cm("deleted", map[string]string{"a": "b"}, nil),
		cm("edited", map[string]string{"x": "1"}, nil),
		cm("hook-config", map[string]string{"h": "2"}, hook),
		hookJob,
	}, "---\n")
	owner := convoyhooks.Owner{Name: "podinfo", Namespace: ns}
	applied := func(manifests string) []*unstructured.Unstructured {
		decoded, err := manifest.DecodeStream([]byte(manifests))
		if err != nil {
			t.Fatal(err)
		}
		objs, err := diff.Applied(decoded, owner, v1.HookRunUpgrade)
		if err != nil {
			t.Fatal(err)
		}
		return objs
	}
	asApply := func(objs []*unstructured.Unstructured) []apply.Object {
		var out []apply.Object
		for _, o := range objs {
			out = append(out, apply.Object{Object: o})
		}
		return out
	}

	// convoy applies the first render.
	applier := apply.New(target, apply.Options{})
	plan, err := applier.DryRun(ctx, asApply(applied(first)), nil)
	if err != nil {
		t.Fatalf("dry run of the first render: %v", err)
	}
	if _, err := applier.ApplyWave(ctx, plan, 0); err != nil {
		t.Fatalf("apply of the first render: %v", err)
	}
	// Then others change the cluster.
	kube := target
	if err := kube.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "deleted"}}); err != nil {
		t.Fatal(err)
	}
	edit := func(name, manager string, change func(*corev1.ConfigMap)) {
		c := &corev1.ConfigMap{}
		if err := kube.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, c); err != nil {
			t.Fatal(err)
		}
		change(c)
		if err := kube.Update(ctx, c, client.FieldOwner(manager)); err != nil {
			t.Fatal(err)
		}
	}
	edit("edited", "kubectl-edit", func(c *corev1.ConfigMap) { c.Data["x"] = "2" })
	edit("same", "someone-else", func(c *corev1.ConfigMap) { c.Labels = map[string]string{"team": "web"} })

	// The second render, stored as the Release's current render.
	objs := applied(second)
	var entries []v1.InventoryObject
	for _, o := range objs {
		entries = append(entries, v1.InventoryObject{ObjectReference: diff.Reference(o)})
	}
	rd := &v1.Render{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: v1.RenderRef(refB).RenderName("podinfo"), Labels: map[string]string{v1.LabelRelease: "podinfo"}},
		RenderRef:  refB, Release: "podinfo", Chart: v1.RenderChart{Name: "podinfo", Version: "6.7.1"}, ObjectCount: int32(len(objs)),
		Manifests: gz(t, second),
	}
	if err := admin(t).rest.Post().Namespace(ns).Resource("renders").Body(rd).Do(ctx).Error(); err != nil {
		t.Fatalf("creating the Render: %v", err)
	}
	writeStatus(t, ns, "podinfo", func(r *v1.Release) {
		r.Status.Render = &v1.RenderStatus{Ref: refB, ChartVersion: "6.7.1"}
		r.Status.LastSuccessful = &v1.LastSuccessful{RenderRef: refA, ChartVersion: "6.7.1"}
	})

	want := []string{"ConfigMap NS/changed", "ConfigMap NS/deleted", "ConfigMap NS/edited", "ConfigMap NS/hook-config"}
	named := func(ref v1.ObjectReference) string { return strings.ReplaceAll(diff.Describe(ref), ns, "NS") }

	// 1. The pre-apply dry run.
	plan, err = applier.DryRun(ctx, asApply(objs), nil, entries...)
	if err != nil {
		t.Fatalf("dry run of the second render: %v", err)
	}
	var byApply []string
	for _, c := range plan.Checked() {
		if c.Action != apply.Unchanged {
			byApply = append(byApply, named(c.Object))
		}
	}
	// 2. The drift check.
	drifted, err := drift.New(drift.Options{}).Check(ctx, target, objs)
	if err != nil {
		t.Fatalf("drift check: %v", err)
	}
	var byDrift []string
	fields := map[string][]string{}
	for _, d := range drifted {
		byDrift = append(byDrift, named(d.ObjectReference))
		fields[d.Name] = d.Fields
	}
	// 3. kubectl convoy release diff.
	res := plugin(t, nil, "release", "diff", "podinfo", "-n", ns)
	if res.code != 0 {
		t.Fatalf("release diff: exit %d, stderr %s", res.code, res.stderr)
	}
	var byCLI []string
	for _, m := range regexp.MustCompile(`(?m)^\+\+\+ (?:render/)?(.*)$`).FindAllStringSubmatch(res.stdout, -1) {
		byCLI = append(byCLI, strings.ReplaceAll(m[1], ns, "NS"))
	}
	for name, got := range map[string][]string{"the pre-apply dry run": byApply, "the drift check": byDrift, "kubectl convoy release diff": byCLI} {
		slices.Sort(got)
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s finds other changes (-want +got):\n%s\nrelease diff printed:\n%s", name, d, res.stdout)
		}
	}
	wantFields := map[string][]string{"changed": {"data.a"}, "deleted": {drift.Missing}, "edited": {"data.x"}, "hook-config": {"data.h"}}
	if d := cmp.Diff(wantFields, fields); d != "" {
		t.Errorf("drifted fields (-want +got):\n%s", d)
	}
	for _, line := range []string{"-  x: \"2\"\n+  x: \"1\"\n", "-  a: b\n+  a: c\n", "-  h: \"1\"\n+  h: \"2\"\n"} {
		if !strings.Contains(res.stdout, line) {
			t.Errorf("release diff does not show the change %q:\n%s", line, res.stdout)
		}
	}
	if strings.Contains(res.stdout, "Job") {
		t.Errorf("release diff shows the hook Job, which convoy runs rather than applies:\n%s", res.stdout)
	}
}
