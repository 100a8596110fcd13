package render

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/reasons"
)

func op(o, path, value string) v1alpha1.JSONPatchOperation {
	p := v1alpha1.JSONPatchOperation{Op: o, Path: path}
	if value != "" {
		p.Value = &runtime.RawExtension{Raw: []byte(value)}
	}
	return p
}

// containers lists "name=image" of a Deployment's containers.
func containers(t *testing.T, o Object) []string {
	t.Helper()
	cs, _, err := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, c := range cs {
		m := c.(map[string]any)
		out = append(out, m["name"].(string)+"="+m["image"].(string))
	}
	return out
}

func TestMutations(t *testing.T) {
	repo := chartServer(t)
	r, _ := testRenderer(t)
	deployment := v1alpha1.MutationTarget{Group: "apps", Kind: "Deployment", Name: "web"}
	type observed struct {
		Replicas     int64
		Containers   []string
		ServiceLabel string
		ConfigMapTag string
		ReleaseLabel string
		Warnings     []string
	}
	chartDefault := observed{
		Replicas:     1,
		Containers:   []string{"web=registry.example/web:1.0", "sidecar=registry.example/sidecar:1.0"},
		ReleaseLabel: "web",
	}
	with := func(f func(*observed)) observed {
		o := chartDefault
		o.Containers = append([]string(nil), o.Containers...)
		f(&o)
		return o
	}
	cases := map[string]struct {
		muts   []v1alpha1.Mutation
		want   observed
		reason string
		msgHas string
	}{
		"no mutation": {want: chartDefault},
		"strategic merge patch (YAML) on a Deployment merges containers by name": {
			muts: []v1alpha1.Mutation{{Target: deployment, Patch: "spec:\n  replicas: 5\n  template:\n    spec:\n      containers:\n      - name: web\n        image: registry.example/web:2.0\n"}},
			want: with(func(o *observed) {
				o.Replicas = 5
				o.Containers = []string{"web=registry.example/web:2.0", "sidecar=registry.example/sidecar:1.0"}
			}),
		},
		"strategic merge patch (JSON) with a $patch directive": {
			muts: []v1alpha1.Mutation{{Target: deployment, Patch: `{"spec":{"template":{"spec":{"containers":[{"name":"sidecar","$patch":"delete"}]}}}}`}},
			want: with(func(o *observed) { o.Containers = []string{"web=registry.example/web:1.0"} }),
		},
		"JSON patch on a Service": {
			muts: []v1alpha1.Mutation{{Target: v1alpha1.MutationTarget{Kind: "Service", Name: "web"}, JSONPatch: []v1alpha1.JSONPatchOperation{op("add", "/metadata/labels/tier", `"web"`)}}},
			want: with(func(o *observed) { o.ServiceLabel = "web" }),
		},
		"in order: the second sees the first": {
			muts: []v1alpha1.Mutation{
				{Target: deployment, Patch: `spec: {replicas: 3}`},
				{Target: deployment, JSONPatch: []v1alpha1.JSONPatchOperation{op("test", "/spec/replicas", "3"), op("replace", "/spec/replicas", "7")}},
			},
			want: with(func(o *observed) { o.Replicas = 7 }),
		},
		"labelSelector across kinds": {
			muts: []v1alpha1.Mutation{{
				Target:    v1alpha1.MutationTarget{LabelSelector: "app.kubernetes.io/name=web,app.kubernetes.io/instance in (web)"},
				JSONPatch: []v1alpha1.JSONPatchOperation{op("add", "/metadata/labels/tier", `"selected"`)},
			}, {
				Target:    v1alpha1.MutationTarget{Kind: "ConfigMap", LabelSelector: "!app.kubernetes.io/name"},
				JSONPatch: []v1alpha1.JSONPatchOperation{op("add", "/metadata/annotations", `{"tag":"no-app-label"}`)},
			}},
			want: with(func(o *observed) { o.ServiceLabel = "selected"; o.ConfigMapTag = "no-app-label" }),
		},
		"the convoy labels survive a mutation": {
			muts: []v1alpha1.Mutation{{Target: deployment, JSONPatch: []v1alpha1.JSONPatchOperation{op("remove", "/metadata/labels/convoy.kumodo.io~1release-name", "")}}},
			want: chartDefault,
		},
		"selecting nothing is fine": {
			muts: []v1alpha1.Mutation{
				{Target: v1alpha1.MutationTarget{Kind: "Deployment"}, Patch: `spec: {replicas: 9}`}, // core group: no Deployment
				{Target: v1alpha1.MutationTarget{Group: "apps", Kind: "Deployment", Name: "other"}, Patch: `spec: {replicas: 9}`},
				{Target: v1alpha1.MutationTarget{Kind: "Service", Namespace: "elsewhere"}, Patch: `spec: {type: NodePort}`},
			},
			want: with(func(o *observed) {
				o.Warnings = []string{"mutations[0] selects no object", "mutations[1] selects no object", "mutations[2] selects no object"}
			}),
		},
		"a JSON patch that does not apply": {
			muts:   []v1alpha1.Mutation{{Target: deployment, JSONPatch: []v1alpha1.JSONPatchOperation{op("remove", "/spec/nonexistent", "")}}},
			reason: v1alpha1.ReasonUnappliable, msgHas: "mutations[0] on apps/v1 Deployment apps/web: JSON patch",
		},
		"a failing test op": {
			muts:   []v1alpha1.Mutation{{Target: deployment, JSONPatch: []v1alpha1.JSONPatchOperation{op("test", "/spec/replicas", "2")}}},
			reason: v1alpha1.ReasonUnappliable,
		},
		"a strategic merge patch that is not an object": {
			muts:   []v1alpha1.Mutation{{Target: deployment, Patch: `[1, 2]`}},
			reason: v1alpha1.ReasonUnappliable, msgHas: "must be an object",
		},
		"a strategic merge patch without the list's merge key": {
			muts:   []v1alpha1.Mutation{{Target: deployment, Patch: `spec: {template: {spec: {containers: [{image: x}]}}}`}},
			reason: v1alpha1.ReasonUnappliable, msgHas: "strategic merge patch",
		},
		"a patch that removes the name": {
			muts:   []v1alpha1.Mutation{{Target: deployment, JSONPatch: []v1alpha1.JSONPatchOperation{op("remove", "/metadata/name", "")}}},
			reason: v1alpha1.ReasonUnappliable, msgHas: "has no metadata.name",
		},
		"both patch and jsonPatch": {
			muts:   []v1alpha1.Mutation{{Target: deployment, Patch: `spec: {}`, JSONPatch: []v1alpha1.JSONPatchOperation{op("remove", "/spec", "")}}},
			reason: v1alpha1.ReasonUnappliable, msgHas: "exactly one of patch and jsonPatch",
		},
		"a bad label selector": {
			muts:   []v1alpha1.Mutation{{Target: v1alpha1.MutationTarget{LabelSelector: "a in (("}, Patch: `spec: {}`}},
			reason: v1alpha1.ReasonUnappliable, msgHas: "labelSelector",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rel := testRelease("web", repo.url(), "web", mutations(tc.muts...))
			res, err := r.Render(context.Background(), Request{Release: rel, Capabilities: defaultCaps})
			if diff := cmp.Diff(tc.reason, reasons.Of(err, "")); diff != "" {
				t.Fatalf("reason (-want +got):\n%s\nerror: %v", diff, err)
			}
			if err != nil {
				if !strings.Contains(err.Error(), tc.msgHas) {
					t.Fatalf("error %q does not say %q", err, tc.msgHas)
				}
				return
			}
			dep := find(t, res.Objects, "Deployment", "web")
			replicas, _, _ := unstructuredInt(dep, "spec", "replicas")
			got := observed{
				Replicas:     replicas,
				Containers:   containers(t, dep),
				ServiceLabel: find(t, res.Objects, "Service", "web").GetLabels()["tier"],
				ConfigMapTag: find(t, res.Objects, "ConfigMap", "web-settings").GetAnnotations()["tag"],
				ReleaseLabel: dep.GetLabels()[v1alpha1.LabelReleaseName],
				Warnings:     res.Warnings,
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("after mutations (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMutationOfACustomResource(t *testing.T) {
	// Kinds without a typed schema get a JSON merge patch.
	repo := chartServer(t)
	r, _ := testRenderer(t)
	rel := testRelease("crds", repo.url(), "crds", mutations(v1alpha1.Mutation{
		Target: v1alpha1.MutationTarget{Group: "example.com", Kind: "Widget"},
		Patch:  `spec: {size: 9, color: blue}`,
	}))
	res := renderOK(t, r, Request{Release: rel})
	got := find(t, res.Objects, "Widget", "crds").Object["spec"]
	if diff := cmp.Diff(map[string]any{"size": int64(9), "color": "blue"}, got); diff != "" {
		t.Errorf("Widget spec (-want +got):\n%s", diff)
	}
}
