package render

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp/cmpopts"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/yaml"

	"kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/hooks"
	"kumodo.io/convoy/internal/render/charttest"
	"kumodo.io/convoy/internal/source"
	"kumodo.io/convoy/test/corpus"
)

// packageChart packages testdata/charts/<name> at version with the Helm SDK and
// returns the archive.
func packageChart(t testing.TB, name, version string) []byte {
	t.Helper()
	dir := filepath.Join("testdata", "charts", name)
	if _, err := os.Stat(dir); err != nil {
		dir = corpus.Dir(name) // a chart of the pattern corpus
	}
	return charttest.Package(t, dir, charttest.Version(version))
}

func saveChart(t testing.TB, c *chart.Chart, version string) []byte {
	t.Helper()
	c.Metadata.Version = version
	path, err := chartutil.Save(c, t.TempDir())
	if err != nil {
		t.Fatalf("packaging chart %s %s: %v", c.Name(), version, err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// chartRepo is the tests' Helm repository (charttest.Repo) of testdata/charts.
type chartRepo struct{ *charttest.Repo }

func newChartRepo(t testing.TB) *chartRepo { return &chartRepo{charttest.NewRepo(t, packageChart)} }

// add packages testdata/charts/<name> at each version and lists it in the index.
func (r *chartRepo) add(name string, versions ...string) *chartRepo {
	r.Add(name, versions...)
	return r
}

func (r *chartRepo) url() string { return r.URL() }

func (r *chartRepo) count(path string) int { return r.Count(path) }

// renderer renders the tests' Releases as the controller does: their charts fetched
// by a source.Fetcher with a fake clock and its own cache directory, then rendered.
type renderer struct {
	fetcher *source.Fetcher
	// values reads the valuesFrom of a request without Values.
	values ValuesReader
}

// testRenderer is a renderer with a fake clock.
func testRenderer(t testing.TB) (*renderer, *clocktesting.FakeClock) {
	t.Helper()
	clk := clocktesting.NewFakeClock(time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC))
	f, err := source.New(source.Options{CacheDir: t.TempDir(), Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	return &renderer{fetcher: f}, clk
}

// prepare reads the values of req's Release (unless req has them) and fetches its
// chart (unless req names one), in this order, and prepares the render, as the
// controller does.
func (r *renderer) prepare(ctx context.Context, req Request) (*Prepared, error) {
	rel := req.Release
	if req.Values == nil {
		var err error
		if req.Values, err = MergeValues(ctx, rel, r.values); err != nil {
			return nil, err
		}
	}
	if req.Chart.Digest == "" && req.Chart.Archive == nil && req.Chart.Files == nil {
		c, err := r.fetcher.Fetch(ctx, rel.Spec.Chart, 0, nil)
		if err != nil {
			return nil, fmt.Errorf("Release %s/%s: %w", rel.Namespace, rel.Name, err)
		}
		req.Chart = Chart{What: c.What, Digest: c.Digest, Commit: c.Commit, Archive: c.Archive, Files: c.Files}
	}
	return Prepare(ctx, req)
}

// Render fetches the chart of req's Release and renders it anew.
func (r *renderer) Render(ctx context.Context, req Request) (*Result, error) {
	p, err := r.prepare(ctx, req)
	if err != nil {
		return nil, err
	}
	return p.Render(ctx)
}

// renderReusing renders as the controller does: the inputs' key first, the render
// that reuse finds for it (nil: none) reused while its reads answer the same, else
// the chart templated anew.
func (r *renderer) renderReusing(ctx context.Context, req Request, reuse func(context.Context, ReuseKey) (*Result, error)) (*Result, error) {
	p, err := r.prepare(ctx, req)
	if err != nil {
		return nil, err
	}
	prev, err := reuse(ctx, p.Key)
	if err != nil {
		return nil, err
	}
	if prev != nil {
		res, err := p.Reuse(ctx, prev)
		if err != nil || res != nil {
			return res, err
		}
	}
	return p.Render(ctx)
}

// merged merges the values of rel with reader, and fails the test on error.
func merged(t testing.TB, rel *v1alpha1.Release, reader ValuesReader) *Values {
	t.Helper()
	v, err := MergeValues(context.Background(), rel, reader)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// releaseOption changes a test Release.
type releaseOption = func(*v1alpha1.Release)

// testRelease builds a Release of chart from repository.
func testRelease(name, repository, chartName string, opts ...releaseOption) *v1alpha1.Release {
	return charttest.Release(name, repository, chartName, opts...)
}

func version(v string) releaseOption {
	return func(r *v1alpha1.Release) { r.Spec.Chart.Version = v }
}

func values(yamlOrJSON string) releaseOption {
	return func(r *v1alpha1.Release) {
		var m map[string]any
		if err := yaml.Unmarshal([]byte(yamlOrJSON), &m); err != nil {
			panic(err)
		}
		b, _ := json.Marshal(m)
		r.Spec.Values = &runtime.RawExtension{Raw: b}
	}
}

func valuesFrom(refs ...v1alpha1.ValuesReference) releaseOption {
	return func(r *v1alpha1.Release) { r.Spec.ValuesFrom = append(r.Spec.ValuesFrom, refs...) }
}

func mutations(ms ...v1alpha1.Mutation) releaseOption {
	return func(r *v1alpha1.Release) { r.Mutations = append(r.Mutations, ms...) }
}

func noTargetNamespace() releaseOption {
	return func(r *v1alpha1.Release) { r.Spec.TargetNamespace = "" }
}

// fakeValues is a ValuesReader over objects held in memory, keyed "Kind/namespace/name".
type fakeValues map[string]map[string]string

func (f fakeValues) ReadValuesSource(_ context.Context, namespace string, kind v1alpha1.ValuesSourceKind, name string) (map[string][]byte, error) {
	d, ok := f[string(kind)+"/"+namespace+"/"+name]
	if !ok {
		return nil, fmt.Errorf("%s %s/%s: %w", kind, namespace, name, ErrNotFound)
	}
	out := map[string][]byte{}
	for k, v := range d {
		out[k] = []byte(v)
	}
	return out, nil
}

// defaultCaps are the capabilities of a v1.37.2 target without extra APIs.
var defaultCaps = Capabilities{KubeVersion: "v1.37.2"}

// renderOK renders and fails the test on error.
func renderOK(t testing.TB, r *renderer, req Request) *Result {
	t.Helper()
	return renderReusingOK(t, r, req, nil)
}

// renderReusingOK is renderReusing (reuse nil: none), failing the test on error.
func renderReusingOK(t testing.TB, r *renderer, req Request, reuse func(context.Context, ReuseKey) (*Result, error)) *Result {
	t.Helper()
	if req.Capabilities.KubeVersion == "" {
		req.Capabilities = defaultCaps
	}
	if reuse == nil {
		reuse = func(context.Context, ReuseKey) (*Result, error) { return nil, nil }
	}
	res, err := r.renderReusing(context.Background(), req, reuse)
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	return res
}

// ids lists "Kind namespace/name@wave" of the objects, in order.
func ids(objs []Object) []string {
	var out []string
	for _, o := range objs {
		out = append(out, fmt.Sprintf("%s %s/%s@%d", o.GetKind(), o.GetNamespace(), o.GetName(), o.Wave))
	}
	return out
}

// find returns the object of kind and name.
func find(t testing.TB, objs []Object, kind, name string) Object {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	t.Fatalf("no %s %s among %v", kind, name, ids(objs))
	return Object{}
}

func unstructuredInt(o Object, fields ...string) (int64, bool, error) {
	return unstructured.NestedInt64(o.Object, fields...)
}

type (
	metav1APIResourceList = metav1.APIResourceList
	metav1APIResource     = metav1.APIResource
)

var sortStrings = cmpopts.SortSlices(func(a, b string) bool { return a < b })

func hookNames(hs []hooks.Chart) []string {
	var out []string
	for _, h := range hs {
		out = append(out, h.Object.GetName())
	}
	return out
}
