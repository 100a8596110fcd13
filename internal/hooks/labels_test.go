package hooks

import (
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// chartHook is a chart hook object of kind named name, a pre-install and
// pre-upgrade hook, labelled as the render labels it.
func chartHook(apiVersion, kind, name string, owner Owner) Chart {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetName(name)
	u.SetNamespace(owner.TargetNamespace)
	u.SetAnnotations(map[string]string{Annotation: "pre-install,pre-upgrade"})
	if kind == "Job" {
		u.Object["spec"] = map[string]any{"template": map[string]any{"spec": map[string]any{
			"restartPolicy": "Never", "containers": []any{map[string]any{"name": "c", "image": "busybox"}},
		}}}
	}
	v1.SetReleaseLabels(u, owner.Name, owner.Namespace)
	c, ok, _ := Parse(u, name)
	if !ok {
		panic("not a hook: " + name)
	}
	return c
}

// Every hook of a run (the hook objects and the Jobs) carries only valid label
// values, whatever the names of the Release and of the chart's objects, and the
// labels name the Release and the hook as SetNameLabel does, so that the
// controller's and the observer's selectors find them.
func TestForRunLabelsAreValidForAwkwardNames(t *testing.T) {
	cases := map[string]struct {
		release string
		hook    string
	}{
		"a valid name":                    {release: "web", hook: "web-create-cert"},
		"an RBAC name with a colon":       {release: "web", hook: "web:create-cert"},
		"a cert-manager-like name":        {release: "cm", hook: "cm:leaderelection:create"},
		"a long hook name":                {release: "web", hook: strings.Repeat("h", 200)},
		"uppercase and colons":            {release: "web", hook: "System:Web:Admin"},
		"trailing punctuation":            {release: "web", hook: "web-create-cert:"},
		"a 253-character Release":         {release: strings.Repeat("r", 253), hook: "create-cert"},
		"a Release with dots":             {release: "web.team-a.example", hook: "web.team-a:create"},
		"a long Release and a colon hook": {release: strings.Repeat("a", 100) + ".b", hook: strings.Repeat("a", 100) + ":create-cert"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			owner := Owner{Name: tc.release, Namespace: "team-a", TargetNamespace: "apps"}
			chart := []Chart{
				chartHook("rbac.authorization.k8s.io/v1", "Role", tc.hook, owner),
				chartHook("rbac.authorization.k8s.io/v1", "RoleBinding", tc.hook, owner),
				chartHook("batch/v1", "Job", tc.hook, owner),
			}
			lifecycle := []v1.Hook{{Name: "migrate", Phase: v1.HookPreApply, Job: &batchv1.JobSpec{}}}
			hs, err := ForRun(owner, "sha256:0123456789abcdef", RunInstall, lifecycle, chart)
			if err != nil {
				t.Fatal(err)
			}
			if len(hs) != 4 {
				t.Fatalf("%d hooks, want 4", len(hs))
			}
			for _, h := range hs {
				what := h.Object.GetKind() + " " + h.Object.GetName()
				labels, annotations := h.Object.GetLabels(), h.Object.GetAnnotations()
				if errs := metav1validation.ValidateLabels(labels, field.NewPath("metadata", "labels")); len(errs) > 0 {
					t.Errorf("%s: %v", what, errs.ToAggregate())
				}
				if !v1.HasNameLabel(labels, annotations, v1.LabelHook, h.Name) {
					t.Errorf("%s: hook label %q (annotation %q) does not name hook %q", what, labels[v1.LabelHook], annotations[v1.LabelHook], h.Name)
				}
				if !v1.HasReleaseLabels(labels, annotations, owner.Name, owner.Namespace) {
					t.Errorf("%s: labels %v do not name Release %s/%s", what, labels, owner.Namespace, owner.Name)
				}
				if h.IsJob() {
					// What the API server enforces of a Job's name: a DNS subdomain, and a
					// label value (the job-name label of its pods).
					if errs := append(validation.IsDNS1123Subdomain(h.Job), validation.IsValidLabelValue(h.Job)...); len(errs) > 0 {
						t.Errorf("Job name %q: %v", h.Job, errs)
					}
				} else if h.Object.GetName() != tc.hook {
					t.Errorf("%s: the hook object was renamed, want %q", what, tc.hook)
				}
			}
		})
	}
}
