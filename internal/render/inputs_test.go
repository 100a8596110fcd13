package render

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/runtime"

	"kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/reasons"
)

// The inputs digest is a function of the inputs only: the same inputs in another
// order of JSON keys give the same digest, and each input changes it. The target's
// capabilities are not inputs (TestCapabilityReadsChanged).
func TestInputsDigest(t *testing.T) {
	base := func() Inputs {
		return Inputs{
			ChartDigest:  "sha256:c0ffee",
			ValuesDigest: "sha256:va1ue5",
			Mutations: []v1alpha1.Mutation{
				{Target: v1alpha1.MutationTarget{Kind: "Deployment"}, Patch: "spec:\n  replicas: 2\n"},
				{Target: v1alpha1.MutationTarget{Kind: "ConfigMap"}, JSONPatch: []v1alpha1.JSONPatchOperation{
					{Op: "add", Path: "/data/b", Value: &runtime.RawExtension{Raw: []byte(`{"x":1,"y":[1,2]}`)}},
				}},
			},
			ReleaseName: "web",
			Namespace:   "apps",
		}
	}
	want, err := base().Digest()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(want, "sha256:") || len(want) != len("sha256:")+64 {
		t.Fatalf("digest %q, want sha256:<64 hex digits>", want)
	}

	same := map[string]func(*Inputs){
		"JSON patch keys in another order": func(in *Inputs) {
			in.Mutations[1].JSONPatch[0].Value.Raw = []byte(`{ "y": [1, 2], "x": 1 }`)
		},
	}
	for name, change := range same {
		t.Run("same: "+name, func(t *testing.T) {
			in := base()
			change(&in)
			got, err := in.Digest()
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("digest %s, want %s", got, want)
			}
		})
	}

	changed := map[string]func(*Inputs){
		"chart":                      func(in *Inputs) { in.ChartDigest = "sha256:c0ffef" },
		"values":                     func(in *Inputs) { in.ValuesDigest = "sha256:va1ue6" },
		"a mutation's patch":         func(in *Inputs) { in.Mutations[0].Patch = "spec:\n  replicas: 3\n" },
		"a mutation's target":        func(in *Inputs) { in.Mutations[0].Target.Name = "web" },
		"a JSON patch value":         func(in *Inputs) { in.Mutations[1].JSONPatch[0].Value.Raw = []byte(`{"x":2,"y":[1,2]}`) },
		"the mutations' order":       func(in *Inputs) { in.Mutations[0], in.Mutations[1] = in.Mutations[1], in.Mutations[0] },
		"no mutations":               func(in *Inputs) { in.Mutations = nil },
		"release name":               func(in *Inputs) { in.ReleaseName = "api" },
		"target namespace":           func(in *Inputs) { in.Namespace = "apps-2" },
		"an upgrade, not an install": func(in *Inputs) { in.IsUpgrade = true },
		"chart verification": func(in *Inputs) {
			in.Verify = &v1alpha1.ChartVerify{Provider: v1alpha1.ChartVerifyHelm, SecretRef: &v1alpha1.LocalObjectReference{Name: "keys"}}
		},
		"other trusted keys": func(in *Inputs) {
			in.Verify = &v1alpha1.ChartVerify{Provider: v1alpha1.ChartVerifyHelm, SecretRef: &v1alpha1.LocalObjectReference{Name: "other-keys"}}
		},
	}
	seen := map[string]string{want: "base"}
	for name, change := range changed {
		t.Run("changed: "+name, func(t *testing.T) {
			in := base()
			change(&in)
			got, err := in.Digest()
			if err != nil {
				t.Fatal(err)
			}
			if other, ok := seen[got]; ok {
				t.Errorf("digest %s, the same as for %s", got, other)
			}
			seen[got] = name
		})
	}
}

// Without spec.chart.verify the digest is the one convoy gave before chart
// verification existed, so that an upgrade renders no Release anew.
func TestInputsDigestWithoutVerifyIsUnchanged(t *testing.T) {
	in := Inputs{ChartDigest: "sha256:c0ffee", ValuesDigest: "sha256:va1ue5", ReleaseName: "web", Namespace: "apps", IsUpgrade: true}
	got, err := in.Digest()
	if err != nil {
		t.Fatal(err)
	}
	// The encoding of format 2 before spec.chart.verify.
	want, err := digestOf(struct {
		Format       int                 `json:"format"`
		ChartDigest  string              `json:"chartDigest"`
		ValuesDigest string              `json:"valuesDigest"`
		Mutations    []v1alpha1.Mutation `json:"mutations"`
		ReleaseName  string              `json:"releaseName"`
		Namespace    string              `json:"namespace"`
		IsUpgrade    bool                `json:"isUpgrade"`
	}{Format: 2, ChartDigest: in.ChartDigest, ValuesDigest: in.ValuesDigest, Mutations: []v1alpha1.Mutation{},
		ReleaseName: in.ReleaseName, Namespace: in.Namespace, IsUpgrade: true})
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("digest %s, want %s as before chart verification", got, want)
	}
}

// The key of a Render made by a convoy of inputs format 1 (ReuseKey.Legacy) is the
// digest that convoy gave: these were computed by it. The API versions' order and
// duplicates do not matter, as they did not then.
func TestLegacyReuseKey(t *testing.T) {
	in := Inputs{
		ChartDigest:  "sha256:c0ffee",
		ValuesDigest: "sha256:va1ue5",
		Mutations: []v1alpha1.Mutation{
			{Target: v1alpha1.MutationTarget{Kind: "Deployment"}, Patch: "spec:\n  replicas: 2\n"},
			{Target: v1alpha1.MutationTarget{Kind: "ConfigMap"}, JSONPatch: []v1alpha1.JSONPatchOperation{
				{Op: "add", Path: "/data/b", Value: &runtime.RawExtension{Raw: []byte(`{"x":1,"y":[1,2]}`)}},
			}},
		},
		ReleaseName: "web",
		Namespace:   "apps",
	}
	caps := Capabilities{KubeVersion: "v1.37.2", APIVersions: []string{"v1", "batch/v1", "apps/v1", "v1"}}
	tests := map[string]struct {
		in   Inputs
		caps Capabilities
		want ReuseKey
	}{
		"an install": {in: in, caps: caps, want: ReuseKey{
			Inputs: "sha256:8224b453d08dfa03886b31d1336118f347946b0093817b7c4d8e6a0146779f6a",
		}},
		"an upgrade: also the key as an install": {in: upgrade(in), caps: caps, want: ReuseKey{
			Inputs:        "sha256:d24115d33c54ca5b1f10559c27bc7db789d343d640eca382b1329eafa28954ff",
			InstallInputs: "sha256:8224b453d08dfa03886b31d1336118f347946b0093817b7c4d8e6a0146779f6a",
		}},
		"Helm's default capabilities": {in: in, want: ReuseKey{
			Inputs: "sha256:689844d5bffff828a06996db38ad37d9f98e6e87ca3be4a794ded3811d3b0308",
		}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			key, err := reuseKey(tc.in, tc.caps)
			if err != nil {
				t.Fatal(err)
			}
			legacy, reads, err := key.Legacy()
			if err != nil {
				t.Fatal(err)
			}
			if legacy.Inputs != tc.want.Inputs || legacy.InstallInputs != tc.want.InstallInputs {
				t.Errorf("legacy key %s / %s, want %s / %s", legacy.Inputs, legacy.InstallInputs, tc.want.Inputs, tc.want.InstallInputs)
			}
			if legacy.Inputs == key.Inputs {
				t.Error("the legacy key is the key of format 2")
			}
			// The legacy Render stays reusable while the whole list and version stay.
			if changed, err := reads.Changed(tc.caps); err != nil || changed {
				t.Errorf("its reads changed for the same capabilities: %v, %v", changed, err)
			}
			more := tc.caps
			more.APIVersions = append(slices.Clone(more.targetAPIVersions()), "example.com/v1")
			if changed, _ := reads.Changed(more); !changed {
				t.Error("its reads did not change with an API version more")
			}
		})
	}
}

func upgrade(in Inputs) Inputs {
	in.IsUpgrade = true
	return in
}

func TestInputsDigestRejectsABrokenJSONPatchValue(t *testing.T) {
	in := Inputs{Mutations: []v1alpha1.Mutation{{JSONPatch: []v1alpha1.JSONPatchOperation{
		{Op: "add", Path: "/a", Value: &runtime.RawExtension{Raw: []byte(`{broken`)}},
	}}}}
	_, err := in.Digest()
	if reasons.Of(err, "") != v1alpha1.ReasonUnappliable || !strings.Contains(err.Error(), "mutations[0].jsonPatch[0].value") {
		t.Errorf("error %v, want Unappliable naming mutations[0].jsonPatch[0].value", err)
	}
}

// The templates see the revision and install or upgrade that the request sets
// (Helm's .Release.Revision, .Release.IsInstall, .Release.IsUpgrade).
func TestRenderReleaseRevision(t *testing.T) {
	repo := newChartRepo(t).add("generated", "1.0.0")
	r, _ := testRenderer(t)
	cases := map[string]struct {
		revision  int64
		isUpgrade bool
		want      map[string]string
	}{
		"unset: an install at revision 1": {want: map[string]string{"revision": "1", "isInstall": "true", "isUpgrade": "false"}},
		"an install at revision 2":        {revision: 2, want: map[string]string{"revision": "2", "isInstall": "true", "isUpgrade": "false"}},
		"an upgrade at revision 5":        {revision: 5, isUpgrade: true, want: map[string]string{"revision": "5", "isInstall": "false", "isUpgrade": "true"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			res := renderOK(t, r, Request{Release: testRelease("db", repo.url(), "generated"), Revision: tc.revision, IsUpgrade: tc.isUpgrade})
			data := configMapData(t, res, "db-release")
			got := map[string]string{"revision": data["revision"], "isInstall": data["isInstall"], "isUpgrade": data["isUpgrade"]}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf(".Release (-want +got):\n%s", diff)
			}
			if res.Revision != max(tc.revision, 1) || res.IsUpgrade != tc.isUpgrade || res.Reused {
				t.Errorf("result revision %d, upgrade %v, reused %v", res.Revision, res.IsUpgrade, res.Reused)
			}
		})
	}
}

// The inputs' key is known before the chart is templated (Prepare); an earlier render
// of it, passed to Prepared.Reuse, is the result, and without one the chart is
// templated.
func TestRenderReuse(t *testing.T) {
	repo := newChartRepo(t).add("generated", "1.0.0")
	r, _ := testRenderer(t)
	rel := testRelease("db", repo.url(), "generated")
	var keys []ReuseKey
	none := func(_ context.Context, k ReuseKey) (*Result, error) {
		keys = append(keys, k)
		return nil, nil
	}
	install := renderReusingOK(t, r, Request{Release: rel}, none)
	again := renderReusingOK(t, r, Request{Release: rel}, none)
	if install.Ref == again.Ref {
		t.Fatalf("two renders of the chart of random values gave one ref %s: the test chart does not test reuse", install.Ref)
	}
	upgrade := renderReusingOK(t, r, Request{Release: rel, IsUpgrade: true, Revision: 2}, none)
	other := renderReusingOK(t, r, Request{Release: testRelease("db", repo.url(), "generated", values(`greeting: hi`))}, none)

	want := []ReuseKey{
		{Inputs: install.Inputs}, {Inputs: install.Inputs},
		{Inputs: upgrade.Inputs, InstallInputs: install.Inputs},
		{Inputs: other.Inputs},
	}
	if diff := cmp.Diff(want, keys, cmpopts.IgnoreUnexported(ReuseKey{})); diff != "" {
		t.Errorf("keys asked (-want +got):\n%s", diff)
	}
	if install.Inputs == upgrade.Inputs || install.Inputs == other.Inputs {
		t.Errorf("inputs %s (install), %s (upgrade), %s (other values): want three digests", install.Inputs, upgrade.Inputs, other.Inputs)
	}

	earlier := &Result{Ref: install.Ref, Objects: install.Objects, Inputs: install.Inputs, Revision: 1}
	got := renderReusingOK(t, r, Request{Release: rel}, func(context.Context, ReuseKey) (*Result, error) { return earlier, nil })
	if got != earlier || !got.Reused || got.ValuesDigest != install.ValuesDigest || got.ChartDigest != install.ChartDigest {
		t.Errorf("result %+v, want the earlier render, reused, with the values and chart digests", got)
	}
}

// A Render object reads back into the result it stores.
func TestResultFromObject(t *testing.T) {
	repo := newChartRepo(t).add("hooks", "1.0.0")
	r, _ := testRenderer(t)
	rel := testRelease("web", repo.url(), "hooks")
	res := renderOK(t, r, Request{Release: rel, Revision: 7, IsUpgrade: true})
	// As a chart whose templates read the capabilities records them.
	res.Capabilities = CapabilityReads{APIVersions: map[string]bool{"policy/v1": true}, KubeVersion: map[string]string{"Minor": "37"}}
	obj, err := NewRenderObject(rel, res)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ResultFromObject(obj)
	if err != nil {
		t.Fatal(err)
	}
	want := *res
	want.Warnings, want.IsUpgrade, want.ChartDigest = nil, false, "" // not stored
	if diff := cmp.Diff(&want, got, cmp.Comparer(func(a, b Object) bool {
		return a.Wave == b.Wave && cmp.Equal(a.Object, b.Object)
	})); diff != "" {
		t.Errorf("result read back (-want +got):\n%s", diff)
	}

	obj.RenderRef = "sha256:" + strings.Repeat("0", 64)
	if _, err := ResultFromObject(obj); err == nil || !strings.Contains(err.Error(), "not its renderRef") {
		t.Errorf("a Render whose manifests are not its renderRef's: error %v", err)
	}
}

// configMapData is the data of the ConfigMap name of a render.
func configMapData(t *testing.T, res *Result, name string) map[string]string {
	t.Helper()
	for _, o := range res.Objects {
		if o.GetKind() == "ConfigMap" && o.GetName() == name {
			data := map[string]string{}
			for k, v := range o.Object["data"].(map[string]any) {
				data[k], _ = v.(string)
			}
			return data
		}
	}
	t.Fatalf("no ConfigMap %s in the render", name)
	return nil
}

// The compact form of a render reads back into the result its Render object stores,
// and makes that Render object again, byte for byte: objects of several waves, the
// chart's hooks, numbers.
func TestResultFromCompact(t *testing.T) {
	for _, chart := range []string{"hooks", "waves", "web"} {
		t.Run(chart, func(t *testing.T) {
			repo := newChartRepo(t).add(chart, "1.0.0")
			r, _ := testRenderer(t)
			rel := testRelease("web", repo.url(), chart)
			res := renderOK(t, r, Request{Release: rel, Revision: 3})
			obj, err := NewRenderObject(rel, res)
			if err != nil {
				t.Fatal(err)
			}
			want, err := ResultFromObject(obj)
			if err != nil {
				t.Fatal(err)
			}
			compact, err := Compact(want)
			if err != nil {
				t.Fatal(err)
			}
			kept := obj.DeepCopy()
			kept.Manifests = nil
			got, err := ResultFromCompact(kept, compact)
			if err != nil {
				t.Fatal(err)
			}
			want.Canonical = nil
			if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b Object) bool {
				return a.Wave == b.Wave && cmp.Equal(a.Object, b.Object)
			})); diff != "" {
				t.Errorf("result read back (-want +got):\n%s", diff)
			}
			again, err := NewRenderObject(rel, got)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(again.Manifests, obj.Manifests) {
				t.Errorf("the Render made from the compact form holds other manifests than the Render of the render")
			}
		})
	}
}

// A compact form whose objects are not those of the render's ref does not make a
// Render object of that ref.
func TestARenderObjectIsNotMadeFromObjectsOfAnotherRef(t *testing.T) {
	repo := newChartRepo(t).add("web", "1.0.0")
	r, _ := testRenderer(t)
	rel := testRelease("web", repo.url(), "web")
	res := renderOK(t, r, Request{Release: rel, Revision: 1})
	res.Canonical = nil
	res.Objects[0].SetLabels(map[string]string{"changed": "after the render"})
	if _, err := NewRenderObject(rel, res); err == nil || !strings.Contains(err.Error(), "serialise to render") {
		t.Errorf("error %v, want one saying the objects serialise to another render", err)
	}
}
