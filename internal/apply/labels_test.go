package apply

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/hooks"
)

// Everything convoy applies for awkward names passes the API server's own validation,
// not only Go's: the objects as the render labels them (v1alpha1.SetReleaseLabels,
// what render's assemble calls) and the hook objects and hook Jobs as the hook planner
// builds them, for Release names up to 253 characters and RBAC names with ':' (a
// label value may hold neither). A server-side dry run of each; with the labels of
// before (the name as the label value) the server refuses them with 422.
func TestAwkwardNamesPassServerValidation(t *testing.T) {
	e := integration(t)
	cases := map[string]struct {
		release, hook string
	}{
		"an RBAC hook named <release>:create-cert": {release: "web", hook: "web:create-cert"},
		"a cert-manager-like name":                 {release: "cm", hook: "cm:cainjector:leaderelection"},
		"uppercase and a trailing colon":           {release: "web", hook: "Web:Admin:"},
		"a 253-character Release":                  {release: strings.Repeat("r", 60) + "." + strings.Repeat("e", 60) + "." + strings.Repeat("l", 60) + "." + strings.Repeat("s", 71), hook: "create-cert"},
		"a long Release and a long RBAC name":      {release: strings.Repeat("a", 63) + ".b", hook: strings.Repeat("a", 63) + ".b:" + strings.Repeat("c", 150)},
	}
	// Random names as well, seeded (replay a failing one by its case name): a Release
	// name is a DNS subdomain, an RBAC name any path segment name.
	rng := rand.New(rand.NewPCG(31, 2026))
	for i := range randomNameCases {
		release, hook := randomReleaseName(rng), randomRBACName(rng)
		if errs := validation.IsDNS1123Subdomain(release); len(errs) > 0 {
			t.Fatalf("the generator made a Release name the API server refuses, %q: %v", release, errs)
		}
		cases[fmt.Sprintf("random %d: %q %q", i, release, hook)] = struct{ release, hook string }{release, hook}
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			owner := hooks.Owner{Name: tc.release, Namespace: "team-a", TargetNamespace: e.ns}
			rendered := []*unstructured.Unstructured{
				namedObject("v1", "ConfigMap", e.ns, "settings", nil),
				namedObject("rbac.authorization.k8s.io/v1", "ClusterRole", "", tc.hook, nil),
			}
			hookAnnotations := map[string]string{hooks.Annotation: "pre-install,pre-upgrade"}
			chart := []hooks.Chart{
				chartHook(t, namedObject("rbac.authorization.k8s.io/v1", "Role", e.ns, tc.hook, hookAnnotations)),
				chartHook(t, with(namedObject("rbac.authorization.k8s.io/v1", "RoleBinding", e.ns, tc.hook, hookAnnotations), func(u *unstructured.Unstructured) {
					u.Object["roleRef"] = map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": tc.hook}
					u.Object["subjects"] = []any{map[string]any{"kind": "ServiceAccount", "name": "default", "namespace": e.ns}}
				})),
				chartHook(t, with(namedObject("batch/v1", "Job", e.ns, "create-cert", hookAnnotations), func(u *unstructured.Unstructured) {
					u.Object["spec"] = map[string]any{"template": map[string]any{"spec": map[string]any{
						"restartPolicy": "Never", "containers": []any{map[string]any{"name": "c", "image": "busybox"}},
					}}}
				})),
			}
			for _, c := range chart {
				rendered = append(rendered, c.Object)
			}
			for _, u := range rendered {
				v1alpha1.SetReleaseLabels(u, owner.Name, owner.Namespace)
			}
			lifecycle := []v1alpha1.Hook{{Name: "migrate", Phase: v1alpha1.HookPreApply, Job: &batchv1.JobSpec{Template: corev1.PodTemplateSpec{
				Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
			}}}}
			hs, err := hooks.ForRun(owner, "sha256:0123456789abcdef", hooks.RunInstall, lifecycle, chart)
			if err != nil {
				t.Fatal(err)
			}
			var objects []Object
			for _, u := range rendered[:2] { // the render's objects; the hooks are applied as the planner built them
				objects = append(objects, Object{Object: u})
			}
			for _, h := range hs {
				objects = append(objects, Object{Object: h.Object})
			}
			if _, err := e.applier.DryRun(e.ctx, objects, nil); err != nil {
				t.Fatalf("the server refuses what convoy would apply: %v", err)
			}
			// The same hook object labelled with the names themselves, as before: the
			// server refuses it, so the dry run above can fail.
			if v1alpha1.LabelValue(tc.hook) != tc.hook || v1alpha1.LabelValue(tc.release) != tc.release {
				before := hs[0].Object.DeepCopy()
				labels := before.GetLabels()
				labels[v1alpha1.LabelHook], labels[v1alpha1.LabelReleaseName] = hs[0].Name, tc.release
				before.SetLabels(labels)
				err := e.client.Patch(e.ctx, before, client.Apply, client.DryRunAll, client.FieldOwner(v1alpha1.FieldManager), client.ForceOwnership)
				if !IsRefused(err) {
					t.Errorf("the server accepts %s labelled %v (error %v): the test checks nothing", hs[0].Object.GetKind(), labels, err)
				}
			}
		})
	}
}

// randomNameCases is how many random name pairs TestAwkwardNamesPassServerValidation
// tries besides its table.
const randomNameCases = 24

// randomReleaseName is a DNS subdomain of 1 to 253 characters: labels of lowercase
// letters, digits and '-', joined by '.', starting and ending alphanumeric.
func randomReleaseName(rng *rand.Rand) string {
	const alnum, inner = "abcdefghijklmnopqrstuvwxyz0123456789", "abcdefghijklmnopqrstuvwxyz0123456789-"
	n := 1 + rng.IntN(253)
	b := make([]byte, n)
	for i := range b {
		switch {
		case i == 0 || i == n-1:
			b[i] = alnum[rng.IntN(len(alnum))]
		case rng.IntN(12) == 0 && b[i-1] != '.' && b[i-1] != '-':
			b[i] = '.'
		default:
			b[i] = inner[rng.IntN(len(inner))]
			if b[i] == '-' && b[i-1] == '.' {
				b[i] = 'x'
			}
		}
	}
	return string(b)
}

// randomRBACName is a name the API server takes for a Role: any path segment name (no
// '/', no '%', not "." or ".."), here of 1 to 200 characters that charts use
// (letters of both cases, digits, ':', '.', '-', '_', '@', '+', '=').
func randomRBACName(rng *rand.Rand) string {
	const chars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789:.-_@+="
	b := make([]byte, 1+rng.IntN(200))
	for i := range b {
		b[i] = chars[rng.IntN(len(chars))]
	}
	if s := string(b); s == "." || s == ".." {
		return s + "x"
	}
	return string(b)
}

// namedObject builds an object with annotations.
func namedObject(apiVersion, kind, ns, name string, annotations map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetNamespace(ns)
	u.SetName(name)
	if annotations != nil {
		u.SetAnnotations(annotations)
	}
	return u
}

// chartHook parses a chart's hook object as the render does.
func chartHook(t *testing.T, u *unstructured.Unstructured) hooks.Chart {
	t.Helper()
	c, ok, _ := hooks.Parse(u, u.GetName())
	if !ok {
		t.Fatalf("%s is not a hook", u.GetName())
	}
	return c
}
