package diff

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/hooks"
)

func obj(t *testing.T, s string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(s), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

func TestFields(t *testing.T) {
	base := `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: apps, resourceVersion: "7", uid: u1, generation: 3, creationTimestamp: "2026-01-01T00:00:00Z", managedFields: [{manager: convoy}], labels: {app.kubernetes.io/name: web}}
spec: {replicas: 2, template: {spec: {containers: [{name: web, image: web:1}]}}}
status: {readyReplicas: 2}
`
	cases := map[string]struct {
		dryRun string
		want   []string
	}{
		"the same object": {dryRun: base},
		"only server-maintained metadata and status differ": {dryRun: `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: apps, resourceVersion: "8", uid: u1, generation: 4, creationTimestamp: "2026-01-01T00:00:00Z", managedFields: [], labels: {app.kubernetes.io/name: web}}
spec: {replicas: 2.0, template: {spec: {containers: [{name: web, image: web:1}]}}}
status: {readyReplicas: 0}
`},
		"a scalar, a label with dots, a longer list": {dryRun: `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: apps, labels: {app.kubernetes.io/name: api}}
spec: {replicas: 3, template: {spec: {containers: [{name: web, image: web:1}, {name: side, image: s:1}]}}}
`, want: []string{"metadata.labels[app.kubernetes.io/name]", "spec.replicas", "spec.template.spec.containers"}},
		"a field on one side only": {dryRun: `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: apps, labels: {app.kubernetes.io/name: web}, annotations: {a: b}}
spec: {template: {spec: {containers: [{name: web, image: web:2}]}}}
`, want: []string{"metadata.annotations", "spec.replicas", "spec.template.spec.containers[0].image"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Fields(obj(t, base), obj(t, tc.dryRun))
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("Fields (-want +got):\n%s", d)
			}
		})
	}
}

// Applied keeps the render's objects and adds the chart hooks of the run that are
// not Jobs, with convoy's hook label, once each; hook Jobs and hooks of other
// events are left out.
func TestApplied(t *testing.T) {
	manifests := []*unstructured.Unstructured{
		obj(t, "{apiVersion: v1, kind: Service, metadata: {name: web, namespace: apps}}"),
		obj(t, "{apiVersion: batch/v1, kind: Job, metadata: {name: migrate, namespace: apps, annotations: {helm.sh/hook: pre-upgrade}}, spec: {template: {spec: {restartPolicy: Never, containers: [{name: m, image: m}]}}}}"),
		obj(t, "{apiVersion: v1, kind: ServiceAccount, metadata: {name: migrate, namespace: apps, annotations: {helm.sh/hook: 'pre-install,pre-upgrade,post-upgrade'}}}"),
		obj(t, "{apiVersion: v1, kind: ConfigMap, metadata: {name: install-only, namespace: apps, annotations: {helm.sh/hook: pre-install}}}"),
		obj(t, "{apiVersion: v1, kind: ConfigMap, metadata: {name: on-delete, namespace: apps, annotations: {helm.sh/hook: pre-delete}}}"),
	}
	cases := map[string]struct {
		run  hooks.Run
		want []string
	}{
		"upgrade": {run: hooks.RunUpgrade, want: []string{"Service apps/web", "ServiceAccount apps/migrate"}},
		"install": {run: hooks.RunInstall, want: []string{"Service apps/web", "ServiceAccount apps/migrate", "ConfigMap apps/install-only"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Applied(manifests, hooks.Owner{Name: "web", Namespace: "apps"}, tc.run)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, u := range got {
				names = append(names, Describe(Reference(u)))
				if u.GetKind() != "Service" && u.GetLabels()[v1.LabelHook] == "" {
					t.Errorf("%s has no %s label", u.GetName(), v1.LabelHook)
				}
			}
			if d := cmp.Diff(tc.want, names); d != "" {
				t.Errorf("Applied (-want +got):\n%s", d)
			}
		})
	}
}

// Secret values never reach a diff; a changed one is marked as changed.
func TestUnifiedMasksSecrets(t *testing.T) {
	live := obj(t, "{apiVersion: v1, kind: Secret, metadata: {name: s, namespace: apps}, data: {same: c2VjcmV0, changed: b2xk}}")
	want := obj(t, "{apiVersion: v1, kind: Secret, metadata: {name: s, namespace: apps}, data: {same: c2VjcmV0, changed: bmV3}}")
	got := Unified("Secret apps/s", Result{Action: Configure, Live: live, Want: want})
	for _, secret := range []string{"c2VjcmV0", "b2xk", "bmV3"} {
		if strings.Contains(got, secret) {
			t.Errorf("the diff shows the Secret value %s:\n%s", secret, got)
		}
	}
	if !strings.Contains(got, "-  changed: '"+Masked+"'\n+  changed: '"+MaskedChanged+"'\n") || !strings.Contains(got, "   same: '"+Masked+"'\n") {
		t.Errorf("the diff does not mark the changed value only:\n%s", got)
	}
	if Unified("x", Result{Action: Unchanged, Live: live, Want: live}) != "" {
		t.Error("an Unchanged object has a diff")
	}
}

// TestManagers reads the field managers of an answer without their fields.
func TestManagers(t *testing.T) {
	cases := map[string]struct {
		object string
		want   []metav1.ManagedFieldsEntry
	}{
		"none":        {object: `{metadata: {name: web}}`},
		"no metadata": {object: `{kind: ConfigMap}`},
		"entries, fields left out": {
			object: `{metadata: {name: web, managedFields: [
  {manager: helm, operation: Update, apiVersion: v1, fieldsType: FieldsV1, fieldsV1: {f:data: {f:a: {}}}},
  {manager: convoy, operation: Apply, apiVersion: v1, fieldsType: FieldsV1, fieldsV1: {f:data: {f:b: {}}}},
  {manager: helm, operation: Update, apiVersion: v1, subresource: status}]}}`,
			want: []metav1.ManagedFieldsEntry{
				{Manager: "helm", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1"},
				{Manager: "convoy", Operation: metav1.ManagedFieldsOperationApply, APIVersion: "v1"},
				{Manager: "helm", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Subresource: "status"},
			},
		},
		"an entry that is not an object is skipped": {
			object: `{metadata: {managedFields: [x, {manager: helm, operation: Apply}]}}`,
			want:   []metav1.ManagedFieldsEntry{{Manager: "helm", Operation: metav1.ManagedFieldsOperationApply}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, managers(obj(t, tc.object))); d != "" {
				t.Errorf("managers (-want +got):\n%s", d)
			}
		})
	}
}
