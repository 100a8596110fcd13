package render

import (
	"encoding/json"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/hooks"
	"kumodo.io/convoy/internal/reasons"
)

// Whatever the names of the Release and of the chart's objects, everything the render
// and the hook planner produce carries only valid labels (Kubernetes refuses the
// apply of anything else with 422), the labels name the Release and the hook as the
// selectors of the controller and the observer compute them, and the objects keep
// their names. An object the render refuses is refused as Unappliable.
func FuzzLabelValues(f *testing.F) {
	for _, s := range []struct{ release, name string }{
		{"web", "web"},
		{"web", "web:create-cert"},
		{"cert-manager", "cert-manager:leaderelection"},
		{"web", "system:controller:web"},
		{"web.team-a", "web.team-a:create-cert"},
		{strings.Repeat("r", 253), "create-cert"},
		{"web", strings.Repeat("n", 253)},
		{"web", "Upper:Case"},
		{"web", "-:."},
		{"web", "a/b"},
		{"web", ""},
	} {
		f.Add(s.release, s.name)
	}
	f.Fuzz(func(t *testing.T, release, name string) {
		if len(validation.IsDNS1123Subdomain(release)) > 0 {
			return // the API server refuses such a Release
		}
		rel := testRelease(release, "", "labels")
		rel.Namespace = "team-a"
		files := []renderedFile{{name: "templates/all.yaml", content: manifests(t, name)}}
		res, err := assemble(rel, defaultCaps, files)
		if err != nil {
			if reasons.Of(err, "") != v1alpha1.ReasonUnappliable {
				t.Fatalf("object name %q: %v, want an Unappliable error", name, err)
			}
			return
		}
		check := func(what string, u *unstructured.Unstructured) {
			labels, annotations := u.GetLabels(), u.GetAnnotations()
			if errs := metav1validation.ValidateLabels(labels, field.NewPath("metadata", "labels")); len(errs) > 0 {
				t.Errorf("%s %q: %v", what, u.GetName(), errs.ToAggregate())
			}
			if !v1alpha1.HasReleaseLabels(labels, annotations, rel.Name, rel.Namespace) {
				t.Errorf("%s %q: labels %v and annotations %v do not name Release %s/%s", what, u.GetName(), labels, annotations, rel.Namespace, rel.Name)
			}
		}
		for _, o := range res.Objects {
			check("object", o.Unstructured)
			if o.GetName() != name {
				t.Errorf("object %q: renamed, want %q", o.GetName(), name)
			}
		}
		obj, err := NewRenderObject(rel, res)
		if err != nil {
			t.Fatal(err)
		}
		if errs := metav1validation.ValidateLabels(obj.Labels, field.NewPath("metadata", "labels")); len(errs) > 0 {
			t.Errorf("Render: %v", errs.ToAggregate())
		}
		if obj.Labels[v1alpha1.LabelRelease] != v1alpha1.LabelValue(rel.Name) {
			t.Errorf("Render label %q, want LabelValue(%q)", obj.Labels[v1alpha1.LabelRelease], rel.Name)
		}
		owner := hooks.Owner{Name: rel.Name, Namespace: rel.Namespace, TargetNamespace: TargetNamespace(rel)}
		for _, run := range []hooks.Run{hooks.RunInstall, hooks.RunUpgrade, hooks.RunDelete} {
			hs, err := hooks.ForRun(owner, res.Ref, run, nil, res.Hooks)
			if err != nil {
				t.Fatalf("%s hooks: %v", run, err)
			}
			if len(hs) != 3 {
				t.Fatalf("%s: %d hooks, want the Role, the RoleBinding and the Job", run, len(hs))
			}
			for _, h := range hs {
				check("hook "+h.Object.GetKind(), h.Object)
				if !v1alpha1.HasNameLabel(h.Object.GetLabels(), h.Object.GetAnnotations(), v1alpha1.LabelHook, name) {
					t.Errorf("hook %s %q: hook label %q does not name %q", h.Object.GetKind(), h.Object.GetName(), h.Object.GetLabels()[v1alpha1.LabelHook], name)
				}
				if h.IsJob() {
					if errs := validation.IsDNS1123Label(h.Job); len(errs) > 0 {
						t.Errorf("hook Job name %q: %v", h.Job, errs)
					}
				} else if h.Object.GetName() != name {
					t.Errorf("hook %s %q: renamed, want %q", h.Object.GetKind(), h.Object.GetName(), name)
				}
			}
		}
	})
}

// manifests is a chart's template output: a ConfigMap, and a Role, a RoleBinding and
// a Job that are hooks of every event convoy runs, all named name (as JSON, which is
// YAML, so that any name is written as it is).
func manifests(t *testing.T, name string) string {
	t.Helper()
	hook := map[string]string{hooks.Annotation: "pre-install,pre-upgrade,pre-delete"}
	objs := []map[string]any{
		{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": name}, "data": map[string]any{"k": "v"}},
		{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": map[string]any{"name": name, "annotations": hook}},
		{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": map[string]any{"name": name, "annotations": hook},
			"roleRef": map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name}},
		{"apiVersion": "batch/v1", "kind": "Job", "metadata": map[string]any{"name": name, "annotations": hook},
			"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
				"restartPolicy": "Never", "containers": []any{map[string]any{"name": "c", "image": "busybox"}},
			}}}},
	}
	var b strings.Builder
	for _, o := range objs {
		j, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString("---\n")
		b.Write(j)
		b.WriteString("\n")
	}
	return b.String()
}
