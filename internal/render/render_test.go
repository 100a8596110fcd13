package render

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/reasons"
)

// chartServer serves every chart of testdata/charts at 1.0.0.
func chartServer(t *testing.T) *chartRepo {
	t.Helper()
	return newChartRepo(t).add("web", "1.0.0").add("crds", "1.0.0").add("hooks", "1.0.0").add("waves", "1.0.0").add("kubeversion", "1.0.0")
}

func TestLabelsAndNamespaces(t *testing.T) {
	repo := chartServer(t)
	r, _ := testRenderer(t)
	cases := map[string]struct {
		rel  *Request
		want []string
	}{
		"targetNamespace": {
			rel:  &Request{Release: testRelease("web", repo.url(), "web")},
			want: []string{"ConfigMap apps/web-settings@0", "Service apps/web@0", "Deployment apps/web@0"},
		},
		"the Release's namespace by default": {
			rel:  &Request{Release: testRelease("web", repo.url(), "web", noTargetNamespace())},
			want: []string{"ConfigMap team-a/web-settings@0", "Service team-a/web@0", "Deployment team-a/web@0"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			res := renderOK(t, r, *tc.rel)
			if diff := cmp.Diff(tc.want, ids(res.Objects)); diff != "" {
				t.Errorf("objects (-want +got):\n%s", diff)
			}
			for _, o := range res.Objects {
				got := map[string]string{}
				for _, k := range []string{v1alpha1.LabelReleaseName, v1alpha1.LabelReleaseNamespace} {
					got[k] = o.GetLabels()[k]
				}
				want := map[string]string{v1alpha1.LabelReleaseName: "web", v1alpha1.LabelReleaseNamespace: "team-a"}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("%s labels (-want +got):\n%s", describe(o.Unstructured), diff)
				}
			}
			if strings.Contains(string(res.Canonical), "is installed") {
				t.Error("NOTES.txt is in the render")
			}
		})
	}
}

func TestTemplateError(t *testing.T) {
	repo := chartServer(t)
	r, _ := testRenderer(t)
	_, err := r.Render(context.Background(), Request{Release: testRelease("web", repo.url(), "web", values(`{broken: true}`)), Capabilities: defaultCaps})
	if reasons.Of(err, "") != v1alpha1.ReasonUnappliable || !strings.Contains(err.Error(), "broken on purpose") {
		t.Fatalf("want Unappliable with the template's message, got %v", err)
	}
}

func TestCapabilities(t *testing.T) {
	repo := chartServer(t)
	r, _ := testRenderer(t)
	cases := map[string]struct {
		caps    Capabilities
		reason  string
		msgHas  string
		objects []string
		data    map[string]any
	}{
		"kubeVersion constraint not met": {
			caps:   Capabilities{KubeVersion: "v1.29.9"},
			reason: v1alpha1.ReasonUnappliable, msgHas: "requires kubeVersion >=1.30.0-0, which the target's Kubernetes v1.29.9 does not meet",
		},
		"kubeVersion met, no monitoring API": {
			caps:    Capabilities{KubeVersion: "v1.30.0", APIVersions: []string{"v1", "apps/v1"}},
			objects: []string{"ConfigMap apps/capabilities@0"},
			data:    map[string]any{"kubeVersion": "v1.30.0", "hasMonitoring": "false"},
		},
		"a vendor version suffix": {
			caps:    Capabilities{KubeVersion: "v1.33.4-gke.1245000"},
			objects: []string{"ConfigMap apps/capabilities@0"},
			data:    map[string]any{"kubeVersion": "v1.33.4-gke.1245000", "hasMonitoring": "false"},
		},
		"APIVersions.Has": {
			caps: CapabilitiesFromDiscovery("v1.37.2", []*metav1APIResourceList{
				{GroupVersion: "v1", APIResources: []metav1APIResource{{Name: "configmaps", Kind: "ConfigMap", Namespaced: true}}},
				{GroupVersion: "monitoring.coreos.com/v1", APIResources: []metav1APIResource{
					{Name: "servicemonitors", Kind: "ServiceMonitor", Namespaced: true},
					{Name: "servicemonitors/status", Kind: "ServiceMonitor", Namespaced: true},
				}},
			}),
			objects: []string{"ConfigMap apps/capabilities@0", "ServiceMonitor apps/web@0"},
			data:    map[string]any{"kubeVersion": "v1.37.2", "hasMonitoring": "true"},
		},
		"not a Kubernetes version": {
			caps:   Capabilities{KubeVersion: "banana"},
			reason: v1alpha1.ReasonUnappliable,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			res, err := r.Render(context.Background(), Request{Release: testRelease("kv", repo.url(), "kubeversion"), Capabilities: tc.caps})
			if diff := cmp.Diff(tc.reason, reasons.Of(err, "")); diff != "" {
				t.Fatalf("reason (-want +got):\n%s\nerror: %v", diff, err)
			}
			if err != nil {
				if !strings.Contains(err.Error(), tc.msgHas) {
					t.Fatalf("error %q does not say %q", err, tc.msgHas)
				}
				return
			}
			if diff := cmp.Diff(tc.objects, ids(res.Objects)); diff != "" {
				t.Errorf("objects (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.data, find(t, res.Objects, "ConfigMap", "capabilities").Object["data"]); diff != "" {
				t.Errorf("data (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCapabilitiesFromDiscovery(t *testing.T) {
	caps := CapabilitiesFromDiscovery("v1.37.2", []*metav1APIResourceList{
		{GroupVersion: "apps/v1", APIResources: []metav1APIResource{
			{Name: "deployments", Kind: "Deployment", Namespaced: true},
			{Name: "deployments/scale", Kind: "Scale", Namespaced: true},
		}},
		{GroupVersion: "v1", APIResources: []metav1APIResource{{Name: "namespaces", Kind: "Namespace"}}},
	})
	want := Capabilities{
		KubeVersion: "v1.37.2",
		APIVersions: []string{"apps/v1", "apps/v1/Deployment", "v1", "v1/Namespace"},
		Namespaced: map[schema.GroupKind]bool{
			{Group: "apps", Kind: "Deployment"}: true,
			{Group: "", Kind: "Namespace"}:      false,
		},
	}
	if diff := cmp.Diff(want, caps); diff != "" {
		t.Errorf("capabilities (-want +got):\n%s", diff)
	}
}

func TestCRDs(t *testing.T) {
	repo := chartServer(t)
	r, _ := testRenderer(t)
	cases := map[string]struct {
		caps Capabilities
		want []string
	}{
		"scopes from the render's CRDs": {
			caps: defaultCaps,
			want: []string{
				"CustomResourceDefinition /gadgets.example.com@0",
				"CustomResourceDefinition /widgets.example.com@0",
				"ServiceAccount apps/crds@0",
				"Gadget /crds@0", // cluster-scoped: the chart's namespace is dropped
				"Widget apps/crds@0",
			},
		},
		"the target's discovery wins": {
			caps: Capabilities{KubeVersion: "v1.37.2", Namespaced: map[schema.GroupKind]bool{
				{Group: "example.com", Kind: "Gadget"}: true,
			}},
			want: []string{
				"CustomResourceDefinition /gadgets.example.com@0",
				"CustomResourceDefinition /widgets.example.com@0",
				"ServiceAccount apps/crds@0",
				"Gadget should-be-dropped/crds@0",
				"Widget apps/crds@0",
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			res := renderOK(t, r, Request{Release: testRelease("crds", repo.url(), "crds"), Capabilities: tc.caps})
			if diff := cmp.Diff(tc.want, ids(res.Objects)); diff != "" {
				t.Errorf("objects (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCRDsGoToTheFirstWave(t *testing.T) {
	repo := chartServer(t)
	r, _ := testRenderer(t)
	rel := testRelease("crds", repo.url(), "crds", mutations(v1alpha1.Mutation{
		Target: v1alpha1.MutationTarget{Kind: "ServiceAccount"},
		Patch:  `{metadata: {annotations: {convoy.kumodo.io/sync-wave: "-2"}}}`,
	}, v1alpha1.Mutation{
		Target: v1alpha1.MutationTarget{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition", Name: "widgets.example.com"},
		Patch:  `{metadata: {annotations: {convoy.kumodo.io/sync-wave: "5"}}}`,
	}))
	res := renderOK(t, r, Request{Release: rel})
	want := []string{
		"CustomResourceDefinition /gadgets.example.com@-2",
		"CustomResourceDefinition /widgets.example.com@-2",
		"ServiceAccount apps/crds@-2",
		"Gadget /crds@0",
		"Widget apps/crds@0",
	}
	if diff := cmp.Diff(want, ids(res.Objects)); diff != "" {
		t.Errorf("objects (-want +got):\n%s", diff)
	}
	// The stored manifests say the same: WaveOf reads the moved wave.
	for _, o := range res.Objects {
		if w, err := WaveOf(o.Unstructured); err != nil || w != o.Wave {
			t.Errorf("%s: WaveOf = %d, %v; Wave = %d", describe(o.Unstructured), w, err, o.Wave)
		}
	}
}

func TestHooks(t *testing.T) {
	repo := chartServer(t)
	r, _ := testRenderer(t)
	res := renderOK(t, r, Request{Release: testRelease("hooks", repo.url(), "hooks")})

	type hook struct {
		Kind      string
		Name      string
		Events    string
		Weight    int32
		Policies  string
		Namespace string
		Label     string
	}
	var got []hook
	for _, h := range res.Hooks {
		var events, policies []string
		for _, e := range h.Events {
			events = append(events, string(e))
		}
		for _, p := range h.DeletePolicies {
			policies = append(policies, string(p))
		}
		got = append(got, hook{
			Kind: h.Object.GetKind(), Name: h.Object.GetName(), Weight: h.Weight,
			Events: strings.Join(events, ","), Policies: strings.Join(policies, ","),
			Namespace: h.Object.GetNamespace(),
			Label:     h.Object.GetLabels()[v1alpha1.LabelReleaseName],
		})
	}
	// Every hook of an install, upgrade or delete event, Jobs and other objects, in
	// Helm's order: weight, then kind, then name.
	wantHooks := []hook{
		{Kind: "Job", Name: "migrate", Events: "pre-install,pre-upgrade", Weight: -1, Policies: "before-hook-creation", Namespace: "apps", Label: "hooks"},
		{Kind: "Secret", Name: "bootstrap", Events: "pre-install", Namespace: "apps", Label: "hooks"},
		{Kind: "Job", Name: "cleanup", Events: "pre-delete", Namespace: "apps", Label: "hooks"},
		{Kind: "Job", Name: "seed", Events: "pre-install", Namespace: "apps", Label: "hooks"},
		{Kind: "Job", Name: "notify", Events: "post-install,post-upgrade", Weight: 5, Namespace: "apps", Label: "hooks"},
	}
	if diff := cmp.Diff(wantHooks, got); diff != "" {
		t.Errorf("hooks (-want +got):\n%s", diff)
	}
	// A hook is not an object of the render's waves.
	wantObjects := []string{"ConfigMap apps/early@1", "ConfigMap apps/app@2"}
	if diff := cmp.Diff(wantObjects, ids(res.Objects)); diff != "" {
		t.Errorf("objects (-want +got):\n%s", diff)
	}
	wantWarnings := []string{
		"v1 Pod smoke-test is left out: convoy does not run Helm test hooks",
		"batch/v1 Job undo is left out: convoy does not run Helm post-rollback hooks",
	}
	if diff := cmp.Diff(wantWarnings, res.Warnings, sortStrings); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	// Hooks are part of the render ref: Decode finds them in the canonical stream.
	objs, hooks, err := Decode(res.Canonical)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"migrate", "bootstrap", "cleanup", "seed", "notify"}, hookNames(hooks)); diff != "" {
		t.Errorf("decoded hooks (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantObjects, ids(objs)); diff != "" {
		t.Errorf("decoded objects (-want +got):\n%s", diff)
	}
}

func TestWaves(t *testing.T) {
	repo := chartServer(t)
	r, _ := testRenderer(t)
	cases := map[string]struct {
		badWave string
		want    []string
		waves   []int32
		reason  string
	}{
		"convoy, then argocd, then 0": {
			want: []string{
				"ConfigMap apps/convoy-minus-one@-1",
				"ConfigMap apps/default-wave@0",
				"ServiceAccount apps/sa-two@2",
				"ConfigMap apps/both@2", // convoy's annotation wins over Argo CD's 7
				"ConfigMap apps/argo-three@3",
			},
			waves: []int32{-1, 0, 2, 3},
		},
		"a negative wave": {
			badWave: "-4",
			want: []string{
				"ConfigMap apps/bad@-4",
				"ConfigMap apps/convoy-minus-one@-1",
				"ConfigMap apps/default-wave@0",
				"ServiceAccount apps/sa-two@2",
				"ConfigMap apps/both@2",
				"ConfigMap apps/argo-three@3",
			},
			waves: []int32{-4, -1, 0, 2, 3},
		},
		"not an integer": {badWave: "first", reason: v1alpha1.ReasonUnappliable},
		"a fraction":     {badWave: "1.5", reason: v1alpha1.ReasonUnappliable},
		"out of range":   {badWave: "99999999999", reason: v1alpha1.ReasonUnappliable},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rel := testRelease("waves", repo.url(), "waves", values(`{badWave: "`+tc.badWave+`"}`))
			res, err := r.Render(context.Background(), Request{Release: rel, Capabilities: defaultCaps})
			if diff := cmp.Diff(tc.reason, reasons.Of(err, "")); diff != "" {
				t.Fatalf("reason (-want +got):\n%s\nerror: %v", diff, err)
			}
			if err != nil {
				if !strings.Contains(err.Error(), "ConfigMap apps/bad: annotation convoy.kumodo.io/sync-wave") {
					t.Errorf("error %q does not name the object and annotation", err)
				}
				return
			}
			if diff := cmp.Diff(tc.want, ids(res.Objects)); diff != "" {
				t.Errorf("objects (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.waves, res.Waves); diff != "" {
				t.Errorf("waves (-want +got):\n%s", diff)
			}
		})
	}
}
