package source

import (
	"context"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/render"
	"kumodo.io/convoy/internal/render/charttest"
)

// The tests fetch charts with a Fetcher and render what it fetched with
// internal/render, as the controller does, to check the chart that a source gives
// end to end (its objects, its inputs). Only the tests import render: the package
// itself does not.

// packageChart packages testdata/charts/<name> at version with the Helm SDK and
// returns the archive.
func packageChart(t testing.TB, name, version string) []byte {
	t.Helper()
	return charttest.Package(t, filepath.Join("testdata", "charts", name), charttest.Version(version))
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

func (r *chartRepo) addProvenance(file string, prov []byte) { r.AddProvenance(file, prov) }

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

// renderer fetches the charts of the tests' Releases with a Fetcher (a fake clock, a
// cache directory of its own) and renders them.
type renderer struct {
	*Fetcher
}

// testRenderer is a renderer with a fake clock.
func testRenderer(t testing.TB) (*renderer, *clocktesting.FakeClock) {
	t.Helper()
	clk := clocktesting.NewFakeClock(time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC))
	f, err := New(Options{CacheDir: t.TempDir(), Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	return &renderer{f}, clk
}

// Request is a render of a Release whose chart is fetched with Credentials.
type Request struct {
	Release      *v1alpha1.Release
	Capabilities render.Capabilities
	Credentials  *Credentials
}

// Result is a render of a fetched chart.
type Result = render.Result

// defaultCaps are the capabilities of a v1.37.2 target without extra APIs.
var defaultCaps = render.Capabilities{KubeVersion: "v1.37.2"}

// Render fetches the chart of req's Release, as the controller does (its interval
// the age of a Git listing it takes), and renders it.
func (r *renderer) Render(ctx context.Context, req Request) (*Result, error) {
	rel := req.Release
	var maxAge time.Duration
	if iv := rel.Spec.SyncPolicy.Interval; iv != nil {
		maxAge = iv.Duration
	}
	c, err := r.Fetch(ctx, rel.Spec.Chart, maxAge, req.Credentials)
	if err != nil {
		return nil, fmt.Errorf("Release %s/%s: %w", rel.Namespace, rel.Name, err)
	}
	return render.Render(ctx, render.Request{
		Release: rel, Capabilities: req.Capabilities,
		Chart: render.Chart{What: c.What, Digest: c.Digest, Commit: c.Commit, Archive: c.Archive, Files: c.Files},
	})
}

// renderOK renders and fails the test on error.
func renderOK(t testing.TB, r *renderer, req Request) *Result {
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

// releaseOption changes a test Release.
type releaseOption = func(*v1alpha1.Release)

// testRelease builds a Release of chart from repository.
func testRelease(name, repository, chartName string, opts ...releaseOption) *v1alpha1.Release {
	return charttest.Release(name, repository, chartName, opts...)
}

func version(v string) releaseOption {
	return func(r *v1alpha1.Release) { r.Spec.Chart.Version = v }
}

// ids lists "Kind namespace/name@wave" of the objects, in order.
func ids(objs []render.Object) []string {
	var out []string
	for _, o := range objs {
		out = append(out, fmt.Sprintf("%s %s/%s@%d", o.GetKind(), o.GetNamespace(), o.GetName(), o.Wave))
	}
	return out
}

// newRenderer is a renderer of a Fetcher with opts.
func newRenderer(opts Options) (*renderer, error) {
	f, err := New(opts)
	if err != nil {
		return nil, err
	}
	return &renderer{f}, nil
}
