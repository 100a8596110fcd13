package controller

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/render"
)

// Which earlier render a reconcile reuses (decision 0060): the current one while
// its inputs are the same, also as the install it was; else one of exactly the same
// inputs; else none (template anew).
func TestChooseReuse(t *testing.T) {
	install := render.ReuseKey{Inputs: "sha256:install-x"}
	upgrade := render.ReuseKey{Inputs: "sha256:upgrade-x", InstallInputs: "sha256:install-x"}
	cand := func(name, inputs string, revision int64) renderCandidate {
		return renderCandidate{name: name, inputs: inputs, revision: revision}
	}
	cases := map[string]struct {
		current string
		key     render.ReuseKey
		cands   []renderCandidate
		want    string // the name chosen; "" for none
	}{
		"no earlier render": {current: "", key: install},
		"the current render, same inputs": {
			current: "web-1", key: install, cands: []renderCandidate{cand("web-1", "sha256:install-x", 1)}, want: "web-1",
		},
		"the current render installed the Release, which is now applied": {
			current: "web-1", key: upgrade, cands: []renderCandidate{cand("web-1", "sha256:install-x", 1)}, want: "web-1",
		},
		"an older install render of the inputs is not reused for an upgrade": {
			current: "web-2", key: upgrade,
			cands: []renderCandidate{cand("web-1", "sha256:install-x", 1), cand("web-2", "sha256:install-y", 2)},
		},
		"an older render of the same inputs, as an upgrade": {
			current: "web-3", key: upgrade,
			cands: []renderCandidate{cand("web-2", "sha256:upgrade-x", 2), cand("web-3", "sha256:upgrade-y", 3)},
			want:  "web-2",
		},
		"several renders of the same inputs: the highest revision": {
			current: "web-9", key: install,
			cands: []renderCandidate{cand("web-4", "sha256:install-x", 4), cand("web-6", "sha256:install-x", 6), cand("web-5", "sha256:install-x", 5)},
			want:  "web-6",
		},
		"the current render wins over a higher revision of the same inputs": {
			current: "web-4", key: install,
			cands: []renderCandidate{cand("web-6", "sha256:install-x", 6), cand("web-4", "sha256:install-x", 4)},
			want:  "web-4",
		},
		"the current render, other inputs": {
			current: "web-1", key: upgrade, cands: []renderCandidate{cand("web-1", "sha256:install-y", 1)},
		},
		"a Render without recorded inputs is never reused": {
			current: "web-1", key: install, cands: []renderCandidate{cand("web-1", "", 0)},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := ""
			if i := chooseReuse(tc.current, tc.key, tc.cands); i >= 0 {
				got = tc.cands[i].name
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("chosen (-want +got):\n%s", diff)
			}
		})
	}
}

// The current render made by a convoy whose inputs held the target's capabilities
// (inputs format 1) is reused while they are the same, and records the inputs of
// today's key of the form it matched; no other Render is.
func TestChooseLegacy(t *testing.T) {
	install := render.ReuseKey{Inputs: "sha256:install-x"}
	upgrade := render.ReuseKey{Inputs: "sha256:upgrade-x", InstallInputs: "sha256:install-x"}
	legacyInstall := render.ReuseKey{Inputs: "sha256:v1-install-x"}
	legacyUpgrade := render.ReuseKey{Inputs: "sha256:v1-upgrade-x", InstallInputs: "sha256:v1-install-x"}
	cand := func(name, inputs string) renderCandidate {
		return renderCandidate{name: name, inputs: inputs, revision: 1}
	}
	cases := map[string]struct {
		current     string
		key, legacy render.ReuseKey
		cands       []renderCandidate
		want        string // the name chosen; "" for none
		inputs      string
	}{
		"the current render of the same inputs and capabilities": {
			current: "web-1", key: install, legacy: legacyInstall, cands: []renderCandidate{cand("web-1", "sha256:v1-install-x")},
			want: "web-1", inputs: "sha256:install-x",
		},
		"the install render of an applied Release": {
			current: "web-1", key: upgrade, legacy: legacyUpgrade, cands: []renderCandidate{cand("web-1", "sha256:v1-install-x")},
			want: "web-1", inputs: "sha256:install-x",
		},
		"an upgrade render": {
			current: "web-2", key: upgrade, legacy: legacyUpgrade, cands: []renderCandidate{cand("web-1", "sha256:v1-install-x"), cand("web-2", "sha256:v1-upgrade-x")},
			want: "web-2", inputs: "sha256:upgrade-x",
		},
		"an older render of the same inputs is not reused": {
			current: "web-2", key: install, legacy: legacyInstall, cands: []renderCandidate{cand("web-1", "sha256:v1-install-x"), cand("web-2", "sha256:v1-install-y")},
		},
		"other capabilities or inputs": {
			current: "web-1", key: install, legacy: legacyInstall, cands: []renderCandidate{cand("web-1", "sha256:v1-install-y")},
		},
		"no recorded inputs": {
			current: "web-1", key: install, legacy: render.ReuseKey{}, cands: []renderCandidate{cand("web-1", "")},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := ""
			i, inputs := chooseLegacy(tc.current, tc.key, tc.legacy, tc.cands)
			if i >= 0 {
				got = tc.cands[i].name
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("chosen (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.inputs, inputs); diff != "" {
				t.Errorf("inputs to record (-want +got):\n%s", diff)
			}
		})
	}
}

// A render templated anew that differs from the current one is reported when no input
// is known to have changed: after reuse, only when the current Render was lost or
// made before inputs were recorded.
func TestUnexplainedChange(t *testing.T) {
	const oldRef, newRef = "sha256:0123456789aaaa", "sha256:9876543210bbbb"
	key := render.ReuseKey{Inputs: "sha256:upgrade-x", InstallInputs: "sha256:install-x"}
	current := v1.RenderRef(oldRef).RenderName("web")
	rel := testRelease("web", statusOnly(func(s *v1.ReleaseStatus) {
		s.Render = &v1.RenderStatus{Ref: oldRef, ChartVersion: "1.0.0", ValuesDigest: "sha256:values"}
	}))
	res := &render.Result{Ref: newRef, ChartVersion: "1.0.0", ValuesDigest: "sha256:values", Inputs: key.Inputs}
	cases := map[string]struct {
		rel   *v1.Release
		cands []renderCandidate
		res   *render.Result
		want  bool
	}{
		"the current Render is gone, chart and values the same": {rel: rel, res: res, want: true},
		"the current Render has no inputs recorded, chart and values the same": {
			rel: rel, res: res, cands: []renderCandidate{{name: current}}, want: true,
		},
		"the current Render records the same inputs but could not be reused": {
			rel: rel, res: res, cands: []renderCandidate{{name: current, inputs: key.Inputs}}, want: true,
		},
		"the current Render records these inputs as the install": {
			rel: rel, res: res, cands: []renderCandidate{{name: current, inputs: key.InstallInputs}}, want: true,
		},
		"the current Render records other inputs": {
			rel: rel, res: res, cands: []renderCandidate{{name: current, inputs: "sha256:other"}},
		},
		"the current Render is gone and the values changed": {
			rel: rel, res: &render.Result{Ref: newRef, ChartVersion: "1.0.0", ValuesDigest: "sha256:other"},
		},
		"the current Render is gone and the chart version changed": {
			rel: rel, res: &render.Result{Ref: newRef, ChartVersion: "1.0.1", ValuesDigest: "sha256:values"},
		},
		"the current Render is gone and the Git commit changed": {
			rel: rel, res: &render.Result{Ref: newRef, ChartVersion: "1.0.0", ValuesDigest: "sha256:values", Commit: "0123456789abcdef0123456789abcdef01234567"},
		},
		"the same render":  {rel: rel, res: &render.Result{Ref: oldRef, ChartVersion: "1.0.0", ValuesDigest: "sha256:values"}},
		"the first render": {rel: testRelease("web"), res: res},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := unexplainedChange(tc.rel, &renderHistory{cands: tc.cands}, key, tc.res)
			if (got != "") != tc.want {
				t.Errorf("warning %q, want one: %v", got, tc.want)
			}
		})
	}
}

func TestRenderMemoryWarnsOncePerInputs(t *testing.T) {
	m := &renderMemory{}
	web, api := releaseKey(testRelease("web")), releaseKey(testRelease("api"))
	got := []bool{m.warnOnce(web, "a"), m.warnOnce(web, "a"), m.warnOnce(api, "a"), m.warnOnce(web, "b"), m.warnOnce(web, "b")}
	m.forget(web)
	got = append(got, m.warnOnce(web, "b"))
	if diff := cmp.Diff([]bool{true, false, true, true, false, true}, got); diff != "" {
		t.Errorf("warnOnce (-want +got):\n%s", diff)
	}
}

// The latest Render of each Release is remembered without the managed fields that a
// created Render carries, nor its manifests: its render is kept in compact form, made
// once per render (decision 0134: the controller's memory and CPU per Release).
func TestRenderMemoryKeepsNoManagedFieldsNorManifests(t *testing.T) {
	m := &renderMemory{}
	rel := testRelease("web")
	obj := &v1.Render{ObjectMeta: metav1.ObjectMeta{
		Name: "web-abc", OwnerReferences: []metav1.OwnerReference{{UID: rel.UID}},
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "convoy", Operation: metav1.ManagedFieldsOperationUpdate}},
	}, RenderRef: "abc", Manifests: []byte("gzip'd YAML")}
	cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "web"}}}
	res := &render.Result{Ref: "abc", Objects: []render.Object{{Unstructured: cm}}}
	if err := m.put(releaseKey(rel), obj, res); err != nil {
		t.Fatal(err)
	}
	got := m.get(releaseKey(rel), rel.UID)
	if got == nil || got.obj.RenderRef != "abc" || got.obj.ManagedFields != nil || got.obj.Manifests != nil {
		t.Fatalf("remembered %+v, want the Render abc without managed fields and manifests", got)
	}
	if obj.Manifests == nil {
		t.Error("the Render object given was changed")
	}
	back, err := render.ResultFromCompact(got.obj, got.compact)
	if err != nil || len(back.Objects) != 1 || back.Objects[0].GetName() != "web" {
		t.Errorf("compact form read back: %+v, %v; want the ConfigMap web", back, err)
	}

	// The same render again (a steady reconcile) keeps the compact form it has.
	if err := m.put(releaseKey(rel), obj, &render.Result{Ref: "abc"}); err != nil {
		t.Fatal(err)
	}
	if again := m.get(releaseKey(rel), rel.UID); !bytes.Equal(again.compact, got.compact) {
		t.Error("the compact form of a remembered render was made again")
	}
}

// renderReader answers Get with a copy of its Render; it is the API server of a unit
// test of reuse.
type renderReader struct{ render *v1.Render }

func (f renderReader) Get(_ context.Context, _ client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	f.render.DeepCopyInto(obj.(*v1.Render))
	return nil
}

func (f renderReader) List(context.Context, client.ObjectList, ...client.ListOption) error {
	return nil
}

// A Render of the same inputs read from the API server that cannot be read back is
// not reused: the chart is templated anew (nil, no error), not a nil result used.
func TestAnUnreadableRenderIsNotReused(t *testing.T) {
	rel := testRelease("web")
	rel.Status.Render = &v1.RenderStatus{Ref: "sha256:" + strings.Repeat("a", 64)}
	name := currentRenderName(rel)
	r := &Reconciler{apiReader: renderReader{&v1.Render{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{v1.AnnotationInputs: "sha256:in"}},
		RenderRef:  rel.Status.Render.Ref,
		Manifests:  []byte("not gzip'd"),
	}}}
	h := &renderHistory{cands: []renderCandidate{{name: name, inputs: "sha256:in", revision: 1}}}
	st := &state{rel: rel}
	res, err := r.reuse(context.Background(), st, h, render.ReuseKey{Inputs: "sha256:in"})
	if res != nil || err != nil || st.renderObj != nil {
		t.Errorf("reuse = %+v, %v (renderObj %v); want nothing reused and no error", res, err, st.renderObj)
	}
}
