package chartrepo

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	repo "helm.sh/helm/v4/pkg/repo/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/render"
	"kumodo.io/convoy/internal/source"
)

// examples is the folder `convoy dev` serves.
var examples = filepath.Join("..", "..", "..", "examples", "charts")

func serve(t *testing.T, dir string) *Server {
	t.Helper()
	r, err := Build(dir)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Serve("127.0.0.1:0", r)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

func get(t *testing.T, url string) []byte {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s\n%s", url, resp.Status, b)
	}
	return b
}

// The index lists the example chart with a digest that is the sha256 of the
// archive served at the URL the index gives.
func TestIndexDigestMatchesServedArchive(t *testing.T) {
	s := serve(t, examples)
	idx := &repo.IndexFile{}
	if err := yaml.Unmarshal(get(t, s.URL+"/index.yaml"), idx); err != nil {
		t.Fatal(err)
	}
	if idx.APIVersion == "" {
		t.Fatal("index.yaml has no apiVersion")
	}
	cvs := idx.Entries["hello"]
	if len(cvs) != 1 {
		t.Fatalf("index entries of hello: %d, want 1: %+v", len(cvs), idx.Entries)
	}
	cv := cvs[0]
	if cv.Version != "0.1.0" || cv.Digest == "" || len(cv.URLs) != 1 {
		t.Fatalf("hello entry: version %q digest %q urls %v", cv.Version, cv.Digest, cv.URLs)
	}
	archiveURL, err := repo.ResolveReferenceURL(s.URL, cv.URLs[0])
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(get(t, archiveURL))
	if got := hex.EncodeToString(sum[:]); got != cv.Digest {
		t.Errorf("served archive %s has digest %s, the index says %s", archiveURL, got, cv.Digest)
	}
	resp, err := http.Get(s.URL + "/missing-0.1.0.tgz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET of a missing archive: %s, want 404", resp.Status)
	}
}

// internal/source fetches the example chart from the served repository (index,
// constraint, digest check) and internal/render renders its Deployment and Service.
func TestRenderFromServedRepository(t *testing.T) {
	s := serve(t, examples)
	f, err := source.New(source.Options{CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	rel := &v1alpha1.Release{
		ObjectMeta: metav1.ObjectMeta{Name: "hello", Namespace: "demo", UID: "uid-hello"},
		Spec: v1alpha1.ReleaseSpec{
			Chart: v1alpha1.ChartSource{Repository: s.URL, Name: "hello", Version: ">=0.1.0"},
		},
	}
	c, err := f.Fetch(context.Background(), rel.Spec.Chart, 0, nil)
	if err != nil {
		t.Fatalf("Fetch: %v", err)
	}
	res, err := render.Render(context.Background(), render.Request{Release: rel, Capabilities: render.Capabilities{KubeVersion: "v1.37.2"},
		Chart: render.Chart{What: c.What, Digest: c.Digest, Archive: c.Archive}})
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	if res.ChartName != "hello" || res.ChartVersion != "0.1.0" {
		t.Errorf("rendered %s %s, want hello 0.1.0", res.ChartName, res.ChartVersion)
	}
	kinds := map[string]bool{}
	for _, o := range res.Objects {
		kinds[o.GetKind()+"/"+o.GetNamespace()+"/"+o.GetName()] = true
		if o.GetKind() == "Deployment" {
			replicas, _, _ := unstructured.NestedInt64(o.Object, "spec", "replicas")
			if replicas != 1 {
				t.Errorf("Deployment replicas = %d, want the default 1", replicas)
			}
		}
	}
	for _, want := range []string{"Deployment/demo/hello", "Service/demo/hello"} {
		if !kinds[want] {
			t.Errorf("render lacks %s; has %v", want, kinds)
		}
	}
}

func TestServeOnTakenAddress(t *testing.T) {
	s := serve(t, examples)
	r, err := Build(examples)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Serve(s.URL[len("http://"):], r)
	if !errors.Is(err, ErrAddrInUse) {
		t.Fatalf("Serve on a taken address: %v, want ErrAddrInUse", err)
	}
}

func TestBuildSkipsNonCharts(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "notes"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Build(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Charts()) != 0 || len(r.Index.Entries) != 0 {
		t.Errorf("charts %v, entries %v; want none", r.Charts(), r.Index.Entries)
	}
	if _, err := Build(filepath.Join(dir, "missing")); err == nil {
		t.Error("Build of a missing folder: no error")
	}
}
