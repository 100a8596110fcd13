package render

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp/cmpopts"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	loader "helm.sh/helm/v4/pkg/chart/v2/loader"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	repo "helm.sh/helm/v4/pkg/repo/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/yaml"

	"kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/hooks"
	"kumodo.io/convoy/internal/render/charttest"
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

// chartRepo is a Helm HTTP repository served by the test. It counts the requests
// of every path and can be told to fail.
type chartRepo struct {
	t      testing.TB
	server *httptest.Server

	mu       sync.Mutex
	archives map[string][]byte // file name -> archive
	index    *repo.IndexFile   // built by add
	requests map[string]int    // path -> count
	fail     map[string]int    // path -> HTTP status to answer instead
	digests  map[string]string // file name -> digest to put in the index instead
}

func newChartRepo(t testing.TB) *chartRepo {
	r := &chartRepo{
		t:        t,
		archives: map[string][]byte{},
		index:    repo.NewIndexFile(),
		requests: map[string]int{},
		fail:     map[string]int{},
		digests:  map[string]string{},
	}
	r.server = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.server.Close)
	return r
}

// add packages testdata/charts/<name> at each version and lists it in the index.
func (r *chartRepo) add(name string, versions ...string) *chartRepo {
	for _, v := range versions {
		r.addArchive(packageChart(r.t, name, v))
	}
	return r
}

// addArchive lists an archive in the index under charts/<name>-<version>.tgz.
func (r *chartRepo) addArchive(data []byte) {
	r.t.Helper()
	c, err := loader.LoadArchive(strings.NewReader(string(data)))
	if err != nil {
		r.t.Fatal(err)
	}
	file := fmt.Sprintf("%s-%s.tgz", c.Name(), c.Metadata.Version)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.archives[file] = data
	if err := r.index.MustAdd(c.Metadata, file, "charts", sha256Hex(data)); err != nil {
		r.t.Fatal(err)
	}
}

// addRaw serves an archive whose Chart.yaml the Helm loader may refuse, listed
// under the given name and version.
func (r *chartRepo) addRaw(name, version string, data []byte) {
	file := fmt.Sprintf("%s-%s.tgz", name, version)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.archives[file] = data
	r.index.Entries[name] = append(r.index.Entries[name], &repo.ChartVersion{
		Metadata: &chart.Metadata{APIVersion: "v2", Name: name, Version: version},
		URLs:     []string{"charts/" + file},
		Digest:   sha256Hex(data),
	})
}

func (r *chartRepo) url() string { return r.server.URL }

func (r *chartRepo) count(path string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.requests[path]
}

func (r *chartRepo) failWith(path string, status int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.fail[path] = status
}

func (r *chartRepo) setIndexDigest(file, digest string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.digests[file] = digest
}

func (r *chartRepo) serve(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests[req.URL.Path]++
	if status, ok := r.fail[req.URL.Path]; ok {
		http.Error(w, http.StatusText(status), status)
		return
	}
	switch {
	case req.URL.Path == "/index.yaml":
		idx := *r.index
		idx.Entries = map[string]repo.ChartVersions{}
		for name, cvs := range r.index.Entries {
			for _, cv := range cvs {
				c := *cv
				if d, ok := r.digests[filepath.Base(cv.URLs[0])]; ok {
					c.Digest = d
				}
				idx.Entries[name] = append(idx.Entries[name], &c)
			}
		}
		b, err := json.Marshal(idx)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		_, _ = w.Write(b)
	case strings.HasPrefix(req.URL.Path, "/charts/"):
		b, ok := r.archives[strings.TrimPrefix(req.URL.Path, "/charts/")]
		if !ok {
			http.NotFound(w, req)
			return
		}
		_, _ = w.Write(b)
	default:
		http.NotFound(w, req)
	}
}

// ociRegistry is charttest's in-process OCI registry, with the names this
// package's tests use.
type ociRegistry struct {
	*charttest.OCIRegistry
	server *httptest.Server
	host   string
}

func newOCIRegistry(t testing.TB) *ociRegistry {
	o := charttest.NewOCIRegistry(t)
	return &ociRegistry{OCIRegistry: o, server: o.Server, host: o.Host}
}

// push packages testdata/charts/<name> at each version and pushes it under
// <host>/<path>/<name>:<version> with Helm's registry client.
func (o *ociRegistry) push(t testing.TB, path, name string, versions ...string) {
	t.Helper()
	for _, v := range versions {
		o.Push(t, path, packageChart(t, name, v))
	}
}

func (o *ociRegistry) count(methodPath string) int { return o.Count(methodPath) }

// blobGets counts the blob downloads.
func (o *ociRegistry) blobGets() int { return o.BlobGets() }

// testRenderer is a Renderer with a fake clock and its own cache directory.
func testRenderer(t testing.TB) (*Renderer, *clocktesting.FakeClock) {
	t.Helper()
	clk := clocktesting.NewFakeClock(time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC))
	r, err := New(Options{CacheDir: t.TempDir(), Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	return r, clk
}

// releaseOption changes a test Release.
type releaseOption func(*v1alpha1.Release)

// testRelease builds a Release of chart from repository.
func testRelease(name, repository, chartName string, opts ...releaseOption) *v1alpha1.Release {
	rel := &v1alpha1.Release{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "team-a", UID: types.UID("uid-" + name)},
		Spec: v1alpha1.ReleaseSpec{
			TargetNamespace: "apps",
			Chart:           v1alpha1.ChartSource{Repository: repository, Name: chartName},
		},
	}
	for _, o := range opts {
		o(rel)
	}
	return rel
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
func renderOK(t testing.TB, r *Renderer, req Request) *Result {
	t.Helper()
	if req.Capabilities.KubeVersion == "" {
		req.Capabilities = defaultCaps
	}
	res, err := r.Render(context.Background(), req)
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
