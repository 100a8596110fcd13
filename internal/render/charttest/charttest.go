// Package charttest serves Helm charts to tests: it packages chart folders with
// the Helm SDK, builds archives that Helm's packaging would refuse, and runs an
// in-process OCI registry (go-containerregistry) that charts are pushed to with
// Helm's registry client. Only tests import it.
package charttest

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	gcrregistry "github.com/google/go-containerregistry/pkg/registry"
	"helm.sh/helm/v4/pkg/chart/common"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	loader "helm.sh/helm/v4/pkg/chart/v2/loader"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	"helm.sh/helm/v4/pkg/registry"
	"sigs.k8s.io/yaml"
)

// Package packages the chart source folder dir with the Helm SDK, after the
// edits, and returns the archive.
func Package(t testing.TB, dir string, edits ...func(*chart.Chart)) []byte {
	t.Helper()
	c, err := loader.LoadDir(dir)
	if err != nil {
		t.Fatalf("load chart %s: %v", dir, err)
	}
	for _, edit := range edits {
		edit(c)
	}
	path, err := chartutil.Save(c, t.TempDir())
	if err != nil {
		t.Fatalf("package chart %s %s: %v", c.Name(), c.Metadata.Version, err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Version sets the chart's version (an edit for Package).
func Version(v string) func(*chart.Chart) {
	return func(c *chart.Chart) { c.Metadata.Version = v }
}

// Value sets a top-level default value of the chart (an edit for Package), so
// that two versions of one chart render differently.
func Value(key string, v any) func(*chart.Chart) {
	return func(c *chart.Chart) {
		if c.Values == nil {
			c.Values = map[string]any{}
		}
		c.Values[key] = v
		// The archive's values.yaml is the raw file, not c.Values.
		data, err := yaml.Marshal(c.Values)
		if err != nil {
			panic(err)
		}
		for _, f := range c.Raw {
			if f.Name == chartutil.ValuesfileName {
				f.Data = data
				return
			}
		}
		c.Raw = append(c.Raw, &common.File{Name: chartutil.ValuesfileName, Data: data})
	}
}

// RawArchive builds a chart archive by hand, for charts that Helm's packaging
// refuses (an unknown chart apiVersion, say): <name>/Chart.yaml is chartYAML,
// and one template makes a ConfigMap named x.
func RawArchive(t testing.TB, name, chartYAML string) []byte {
	t.Helper()
	files := map[string]string{
		name + "/Chart.yaml":        chartYAML,
		name + "/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n",
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, n := range names {
		c := files[n]
		if err := tw.WriteHeader(&tar.Header{Name: n, Mode: 0o644, Size: int64(len(c))}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(c)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// OCIRegistry is an in-process OCI registry on plain HTTP at 127.0.0.1 (which
// convoy's renderer reaches without TLS), counting requests by method and path.
// It stops at the end of the test that made it.
type OCIRegistry struct {
	// Server serves the registry; close it to make the registry unreachable.
	Server *httptest.Server
	// Host is host:port, as in oci://<Host>/<path>.
	Host string

	mu       sync.Mutex
	requests map[string]int
}

// NewOCIRegistry starts a registry for the test t. opts add to the registry's
// options, e.g. gcrregistry.WithReferrersSupport(true) for the OCI 1.1
// referrers API (without it, referrers are found by the referrers tag schema).
func NewOCIRegistry(t testing.TB, opts ...gcrregistry.Option) *OCIRegistry {
	o := &OCIRegistry{requests: map[string]int{}}
	h := gcrregistry.New(append([]gcrregistry.Option{gcrregistry.Logger(log.New(io.Discard, "", 0))}, opts...)...)
	o.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		o.mu.Lock()
		o.requests[req.Method+" "+req.URL.Path]++
		o.mu.Unlock()
		h.ServeHTTP(w, req)
	}))
	t.Cleanup(o.Server.Close)
	o.Host = strings.TrimPrefix(o.Server.URL, "http://")
	return o
}

// Repository is the oci:// URL of path in the registry, for spec.chart.repository.
func (o *OCIRegistry) Repository(path string) string { return "oci://" + o.Host + "/" + path }

// Push pushes a chart archive with Helm's registry client under
// <Host>/<path>/<chart name>:<chart version> ("+" in the version becomes "_",
// as Helm tags it) and returns that reference.
func (o *OCIRegistry) Push(t testing.TB, path string, archive []byte) string {
	t.Helper()
	c, err := loader.LoadArchive(bytes.NewReader(archive))
	if err != nil {
		t.Fatalf("read the chart archive to push: %v", err)
	}
	rc, err := registry.NewClient(registry.ClientOptPlainHTTP(), registry.ClientOptCredentialsFile(filepath.Join(t.TempDir(), "config.json")))
	if err != nil {
		t.Fatal(err)
	}
	ref := fmt.Sprintf("%s/%s/%s:%s", o.Host, path, c.Name(), strings.ReplaceAll(c.Metadata.Version, "+", "_"))
	if _, err := rc.Push(archive, ref, registry.PushOptStrictMode(false)); err != nil {
		t.Fatalf("push %s: %v", ref, err)
	}
	return ref
}

// Count is how many requests "METHOD /path" the registry answered.
func (o *OCIRegistry) Count(methodPath string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.requests[methodPath]
}

// BlobGets counts the blob downloads.
func (o *OCIRegistry) BlobGets() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := 0
	for k, v := range o.requests {
		if strings.HasPrefix(k, "GET ") && strings.Contains(k, "/blobs/") {
			n += v
		}
	}
	return n
}
