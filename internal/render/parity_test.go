package render

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/common"
	loader "helm.sh/helm/v4/pkg/chart/v2/loader"
	release "helm.sh/helm/v4/pkg/release/v1"
	releaseutil "helm.sh/helm/v4/pkg/release/v1/util"
	"sigs.k8s.io/yaml"

	"kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/render/charttest"
	"kumodo.io/convoy/test/corpus"
)

// The render parity harness: convoy's render and Helm's own SDK (action.Install in
// client-only dry run, as `helm template --include-crds` and `helm install
// --dry-run=client`) render the same chart archive with the same values, release
// name, namespace and capabilities, and must give the same objects. What convoy is
// meant to do differently is forgiven, and logged, by normalise:
//
//   - the labels convoy.kumodo.io/release-name and release-namespace;
//   - the namespace convoy fills in for a namespaced object that has none, and the
//     namespace it removes from a cluster-scoped object (the API server ignores it);
//   - the convoy.kumodo.io/sync-wave annotation convoy writes on the objects it moves
//     to the render's first wave (CRDs);
//   - hooks: Helm keeps them in release.Hooks, convoy runs them its own way, so they
//     are compared by kind and name only: the install and upgrade hooks Helm has must
//     be the hooks of convoy's render (test and rollback hooks are left out);
//   - values that a template draws at random (randAlphaNum, genCA, uuidv4, …): two
//     Helm renders of the same input tell where they are, and there both sides are
//     compared by shape (a string's length, the PEM block types) instead of value.

// parityRelease, parityNamespace: the Release of every parity render.
const parityRelease = "parity"

// parityCaps are the capabilities of both renders. Helm's client-only install adds
// APIVersions to its default list, convoy uses the list it is given: convoy gets the
// default list plus the same extra API.
var parityExtraAPIs = []string{"monitoring.coreos.com/v1", "monitoring.coreos.com/v1/ServiceMonitor"}

func parityCaps() Capabilities {
	return Capabilities{
		KubeVersion: "v1.37.2",
		APIVersions: append(slices.Clone([]string(common.DefaultVersionSet)), parityExtraAPIs...),
	}
}

// parityChart is one chart of the harness and its values sets.
type parityChart struct {
	source  string // "corpus/<pattern>" or "testdata/<name>"
	name    string // chart name
	archive []byte
	values  map[string]string // values set name -> YAML
}

// parityCharts are the corpus charts, each with its defaults and its
// ci/*-values.yaml files, and the charts of testdata/charts with their defaults.
func parityCharts(t *testing.T) []parityChart {
	t.Helper()
	patterns, err := corpus.Charts()
	if err != nil {
		t.Fatal(err)
	}
	if len(patterns) == 0 {
		t.Fatal("the corpus has no charts")
	}
	var out []parityChart
	for _, p := range patterns {
		pc := parityChart{source: "corpus/" + p, archive: corpusArchive(t, p), values: map[string]string{"defaults": "{}"}}
		files, err := corpus.ValuesFiles(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			pc.values[strings.TrimSuffix(filepath.Base(f), "-values.yaml")] = string(b)
		}
		out = append(out, pc)
	}
	entries, err := os.ReadDir(filepath.Join("testdata", "charts"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		out = append(out, parityChart{source: "testdata/" + e.Name(), archive: packageChart(t, e.Name(), "1.0.0"), values: map[string]string{"defaults": "{}"}})
	}
	for i := range out {
		c, err := loader.LoadArchive(bytes.NewReader(out[i].archive))
		if err != nil {
			t.Fatal(err)
		}
		out[i].name = c.Name()
	}
	return out
}

func TestRenderParity(t *testing.T) {
	r, _ := testRenderer(t)
	for _, c := range parityCharts(t) {
		repo := newChartRepo(t) // a repository each: the corpus and testdata both have a "crds"
		repo.AddArchive(c.archive)
		for _, set := range slices.Sorted(maps.Keys(c.values)) {
			t.Run(c.source+"/"+set, func(t *testing.T) {
				vals := c.values[set]
				rel := testRelease(parityRelease, repo.url(), c.name, values(vals))
				res, err := r.Render(context.Background(), Request{Release: rel, Capabilities: parityCaps()})
				if err != nil {
					t.Fatalf("convoy: %v", err)
				}
				helm, err := helmRender(t, c.archive, vals)
				if err != nil {
					t.Fatalf("helm: %v", err)
				}
				again, err := helmRender(t, c.archive, vals)
				if err != nil {
					t.Fatalf("helm, second render: %v", err)
				}
				cmpRender(t, TargetNamespace(rel), helm, again, res)
			})
		}
	}
}

// TestRenderParityFindsDifferences: the harness fails, with a diff naming the field,
// when convoy's objects differ from Helm's (here by a Release mutation, which Helm
// does not know).
func TestRenderParityFindsDifferences(t *testing.T) {
	archive := corpusArchive(t, "schema")
	repo := newChartRepo(t)
	repo.AddArchive(archive)
	r, _ := testRenderer(t)
	rel := testRelease(parityRelease, repo.url(), "schema", mutations(v1alpha1.Mutation{
		Target: v1alpha1.MutationTarget{Group: "apps", Kind: "Deployment"},
		Patch:  `{spec: {replicas: 7}}`,
	}))
	res, err := r.Render(context.Background(), Request{Release: rel, Capabilities: parityCaps()})
	if err != nil {
		t.Fatal(err)
	}
	helm, err := helmRender(t, archive, "{}")
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{TB: t}
	cmpRender(rec, "apps", helm, helm, res)
	if !rec.failed || !strings.Contains(rec.msg, "replicas") || !strings.Contains(rec.msg, "+") {
		t.Errorf("the harness did not report the changed replicas with a diff; it said:\n%s", rec.msg)
	}
}

// TestRenderParityComparesRandomValuesByShape: a chart that draws a password, a
// UUID and a CA at random renders equal to Helm's by shape; a value of another
// shape is still a difference.
func TestRenderParityComparesRandomValuesByShape(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"Chart.yaml": "apiVersion: v2\nname: random\nversion: 1.0.0\n",
		"templates/secret.yaml": `{{- $ca := genCA "parity-ca" 365 }}
apiVersion: v1
kind: Secret
metadata:
  name: {{ .Release.Name }}-generated
  annotations:
    id: {{ uuidv4 | quote }}
data:
  password: {{ randAlphaNum 16 | b64enc | quote }}
  ca.crt: {{ $ca.Cert | b64enc | quote }}
  fixed: {{ "not random" | b64enc | quote }}
`,
	}
	for name, content := range files {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	archive := charttest.Package(t, dir)
	repo := newChartRepo(t)
	repo.AddArchive(archive)
	r, _ := testRenderer(t)
	rel := testRelease(parityRelease, repo.url(), "random")
	res, err := r.Render(context.Background(), Request{Release: rel, Capabilities: parityCaps()})
	if err != nil {
		t.Fatal(err)
	}
	helm, err := helmRender(t, archive, "{}")
	if err != nil {
		t.Fatal(err)
	}
	again, err := helmRender(t, archive, "{}")
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{TB: t}
	cmpRender(rec, "apps", helm, again, res)
	if rec.failed {
		t.Fatalf("random values of the same shape were reported:\n%s", rec.msg)
	}
	for _, want := range []string{"data.password", "data.ca\\.crt", "metadata.annotations.id"} {
		if !strings.Contains(rec.logs, want) {
			t.Errorf("the harness does not say it compared %s by shape; it logged:\n%s", want, rec.logs)
		}
	}

	// A password of another length is a difference.
	o := find(t, res.Objects, "Secret", parityRelease+"-generated")
	data := o.Object["data"].(map[string]any)
	data["password"] = base64.StdEncoding.EncodeToString([]byte("short"))
	rec = &recorder{TB: t}
	cmpRender(rec, "apps", helm, again, res)
	if !rec.failed || !strings.Contains(rec.msg, "password") {
		t.Errorf("a random value of another shape was not reported; the harness said:\n%s", rec.msg)
	}
}

// helmRender renders the archive as `helm install --dry-run=client --include-crds`
// does, for the release and capabilities of the harness.
func helmRender(t testing.TB, archive []byte, valuesYAML string) (*release.Release, error) {
	t.Helper()
	c, err := loader.LoadArchive(bytes.NewReader(archive))
	if err != nil {
		return nil, err
	}
	vals, err := loader.LoadValues(strings.NewReader(valuesYAML))
	if err != nil {
		return nil, err
	}
	cfg := action.NewConfiguration()
	cfg.SetLogger(slog.DiscardHandler)
	install := action.NewInstall(cfg)
	install.DryRunStrategy = action.DryRunClient
	install.ReleaseName = parityRelease
	install.Namespace = "apps"
	install.IncludeCRDs = true
	install.IsUpgrade = false
	kv, err := common.ParseKubeVersion(parityCaps().KubeVersion)
	if err != nil {
		return nil, err
	}
	install.KubeVersion = kv
	install.APIVersions = parityExtraAPIs
	rel, err := install.RunWithContext(context.Background(), c, vals)
	if err != nil {
		return nil, err
	}
	r, ok := rel.(*release.Release)
	if !ok {
		return nil, fmt.Errorf("helm returned a %T", rel)
	}
	return r, nil
}

// cmpRender compares convoy's render res with Helm's release helm; again is a
// second Helm render of the same input, which tells where the random values are.
func cmpRender(t testing.TB, targetNS string, helm, again *release.Release, res *Result) {
	t.Helper()
	helmObjs := manifestObjects(t, helm.Manifest)
	random := randomPaths(helmObjs, manifestObjects(t, again.Manifest))

	// Hooks: by kind and name.
	var helmHooks, convoyHooks []string
	for _, h := range helm.Hooks {
		if slices.ContainsFunc(h.Events, func(e release.HookEvent) bool {
			switch e {
			case release.HookPreInstall, release.HookPostInstall, release.HookPreUpgrade, release.HookPostUpgrade,
				release.HookPreDelete, release.HookPostDelete:
				return true
			}
			return false
		}) {
			helmHooks = append(helmHooks, h.Kind+" "+h.Name)
		}
	}
	for _, h := range res.Hooks {
		convoyHooks = append(convoyHooks, h.Object.GetKind()+" "+h.Object.GetName())
	}
	convoyObjs := map[string]map[string]any{}
	for _, o := range res.Objects {
		if _, ok := o.GetAnnotations()[release.HookAnnotation]; ok {
			convoyHooks = append(convoyHooks, o.GetKind()+" "+o.GetName())
			continue
		}
		b, err := json.Marshal(o.Object)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		convoyObjs[objectKey(m)] = m
	}
	slices.Sort(helmHooks)
	slices.Sort(convoyHooks)
	if diff := cmp.Diff(helmHooks, convoyHooks); diff != "" {
		t.Errorf("install and upgrade hooks, by kind and name (-helm +convoy):\n%s", diff)
	}

	// Pair each convoy object with Helm's, forgiving what convoy does on purpose.
	want := map[string]map[string]any{}
	for key, h := range helmObjs {
		want[key] = h
	}
	got := map[string]map[string]any{}
	for key, c := range convoyObjs {
		hkey, h := partner(helmObjs, c, targetNS)
		if h == nil {
			got[key] = c
			continue
		}
		for _, note := range normalise(h, c, targetNS) {
			t.Logf("%s: %s", hkey, note)
		}
		got[hkey] = c
	}
	for key, paths := range random {
		for _, p := range paths {
			t.Logf("%s: %s is drawn at random: compared by shape", key, strings.Join(escapePath(p), "."))
			maskRandom(want[key], p)
			maskRandom(got[key], p)
		}
	}
	if len(want) == 0 && len(helmHooks) == 0 {
		t.Errorf("Helm rendered nothing: there is nothing to compare")
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("objects differ from Helm's (-helm +convoy):\n%s", diff)
	}
}

// manifestObjects decodes a Helm manifest stream (Lists expanded, as Helm's kube
// client does) into objects keyed by objectKey.
func manifestObjects(t testing.TB, manifest string) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	var add func(m map[string]any)
	add = func(m map[string]any) {
		if m["kind"] == "List" {
			items, _ := m["items"].([]any)
			for _, it := range items {
				if im, ok := it.(map[string]any); ok {
					add(im)
				}
			}
			return
		}
		key := objectKey(m)
		if _, dup := out[key]; dup {
			t.Fatalf("Helm's manifest has %s twice", key)
		}
		out[key] = m
	}
	docs := releaseutil.SplitManifests(manifest)
	for _, name := range slices.Sorted(maps.Keys(docs)) {
		var m map[string]any
		if err := yaml.Unmarshal([]byte(docs[name]), &m); err != nil {
			t.Fatalf("Helm's manifest %s: %v", name, err)
		}
		if len(m) > 0 {
			add(m)
		}
	}
	return out
}

// objectKey is "apiVersion Kind namespace/name" of an object.
func objectKey(m map[string]any) string {
	md, _ := m["metadata"].(map[string]any)
	return fmt.Sprintf("%v %v %v/%v", m["apiVersion"], m["kind"], md["namespace"], md["name"])
}

// partner finds Helm's object for convoy's: same apiVersion, kind and name, and
// the same namespace, or none where convoy set the target namespace, or any where
// convoy removed it (a cluster-scoped object).
func partner(helmObjs map[string]map[string]any, c map[string]any, targetNS string) (string, map[string]any) {
	cmd := c["metadata"].(map[string]any)
	for _, key := range slices.Sorted(maps.Keys(helmObjs)) {
		h := helmObjs[key]
		hmd, _ := h["metadata"].(map[string]any)
		if h["apiVersion"] != c["apiVersion"] || h["kind"] != c["kind"] || hmd["name"] != cmd["name"] {
			continue
		}
		hns, _ := hmd["namespace"].(string)
		cns, _ := cmd["namespace"].(string)
		if hns == cns || (hns == "" && cns == targetNS) || cns == "" {
			return key, h
		}
	}
	return "", nil
}

// normalise removes from convoy's object c what convoy adds on purpose, given
// Helm's object h, and says what it forgave.
func normalise(h, c map[string]any, targetNS string) []string {
	var notes []string
	hmd, _ := h["metadata"].(map[string]any)
	cmd := c["metadata"].(map[string]any)
	hns, _ := hmd["namespace"].(string)
	cns, _ := cmd["namespace"].(string)
	switch {
	case hns == "" && cns == targetNS:
		delete(cmd, "namespace")
	case hns != "" && cns == "":
		cmd["namespace"] = hns
		notes = append(notes, fmt.Sprintf("convoy drops the namespace %q of a cluster-scoped object", hns))
	}
	if labels, ok := cmd["labels"].(map[string]any); ok {
		delete(labels, v1alpha1.LabelReleaseName)
		delete(labels, v1alpha1.LabelReleaseNamespace)
		if _, helmHas := hmd["labels"]; len(labels) == 0 && !helmHas {
			delete(cmd, "labels")
		}
	}
	if ann, ok := cmd["annotations"].(map[string]any); ok {
		hann, _ := hmd["annotations"].(map[string]any)
		if w, ok := ann[v1alpha1.AnnotationSyncWave]; ok && hann[v1alpha1.AnnotationSyncWave] != w {
			if hw, had := hann[v1alpha1.AnnotationSyncWave]; had {
				ann[v1alpha1.AnnotationSyncWave] = hw
			} else {
				delete(ann, v1alpha1.AnnotationSyncWave)
			}
			notes = append(notes, fmt.Sprintf("convoy moved it to the render's first wave (%s: %v)", v1alpha1.AnnotationSyncWave, w))
		}
		if _, helmHas := hmd["annotations"]; len(ann) == 0 && !helmHas {
			delete(cmd, "annotations")
		}
	}
	return notes
}

// randomPaths lists, for each object, the paths of the leaves that differ between
// two renders of the same input.
func randomPaths(a, b map[string]map[string]any) map[string][][]string {
	out := map[string][][]string{}
	for key, ao := range a {
		var paths [][]string
		diffLeaves(ao, b[key], nil, &paths)
		if len(paths) > 0 {
			out[key] = paths
		}
	}
	return out
}

func diffLeaves(a, b any, path []string, out *[][]string) {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		for _, k := range slices.Sorted(maps.Keys(am)) {
			diffLeaves(am[k], bm[k], append(slices.Clone(path), k), out)
		}
		return
	}
	as, aok := a.([]any)
	bs, bok := b.([]any)
	if aok && bok && len(as) == len(bs) {
		for i := range as {
			diffLeaves(as[i], bs[i], append(slices.Clone(path), strconv.Itoa(i)), out)
		}
		return
	}
	if !reflect.DeepEqual(a, b) {
		*out = append(*out, path)
	}
}

// maskRandom replaces the value at path in obj by its shape.
func maskRandom(obj map[string]any, path []string) {
	var parent any = obj
	for i, seg := range path {
		last := i == len(path)-1
		switch p := parent.(type) {
		case map[string]any:
			if last {
				if v, ok := p[seg]; ok {
					p[seg] = shapeOf(v)
				}
				return
			}
			parent = p[seg]
		case []any:
			n, err := strconv.Atoi(seg)
			if err != nil || n >= len(p) {
				return
			}
			if last {
				p[n] = shapeOf(p[n])
				return
			}
			parent = p[n]
		default:
			return
		}
	}
}

// shapeOf describes a random value by what must not change: PEM block types, or a
// string's length.
func shapeOf(v any) string {
	s, ok := v.(string)
	if !ok {
		return fmt.Sprintf("<random %T>", v)
	}
	text := s
	if b, err := base64.StdEncoding.DecodeString(s); err == nil && len(s) > 0 {
		text = string(b)
	}
	var types []string
	rest := []byte(text)
	for {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		types = append(types, block.Type)
	}
	if len(types) > 0 {
		return fmt.Sprintf("<random PEM: %s>", strings.Join(types, ", "))
	}
	return fmt.Sprintf("<random string of %d characters>", len(s))
}

// escapePath writes path segments with dots in them as "a\.b", as --set does.
func escapePath(path []string) []string {
	out := make([]string, len(path))
	for i, s := range path {
		out[i] = strings.ReplaceAll(s, ".", `\.`)
	}
	return out
}

// recorder is a testing.TB that records failures and logs instead of failing, to
// test the harness itself.
type recorder struct {
	testing.TB
	failed    bool
	msg, logs string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.failed = true
	r.msg += fmt.Sprintf(format, args...) + "\n"
}

func (r *recorder) Logf(format string, args ...any) { r.logs += fmt.Sprintf(format, args...) + "\n" }
