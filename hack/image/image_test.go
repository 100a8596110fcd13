package main

import (
	"archive/tar"
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"kumodo.io/convoy/internal/localcluster"
)

// testPlatforms are the platforms the tests build: linux/amd64 only in `make
// test` (an arm64 build of the whole module costs minutes on a cold cache);
// CONVOY_IMAGE_PLATFORMS=linux/amd64,linux/arm64 (make image-test) builds both.
func testPlatforms() []string {
	if p := os.Getenv("CONVOY_IMAGE_PLATFORMS"); p != "" {
		return strings.Split(p, ",")
	}
	return []string{"linux/amd64"}
}

// layoutRoot holds the OCI layouts the tests write; TestMain removes it. (A test's
// TempDir would go with the first test, and the image is read from it lazily.)
var layoutRoot string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "convoy-image-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	layoutRoot = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

var (
	builtOnce sync.Once
	built     v1.ImageIndex
)

// image is the image of this commit, built once for the package's tests.
func image(t *testing.T) v1.ImageIndex {
	t.Helper()
	if testing.Short() {
		t.Skip("builds convoy (not with -short)")
	}
	builtOnce.Do(func() { built = build(t) })
	if built == nil {
		t.Fatal("the image did not build (see the first test)")
	}
	return built
}

// build builds the image of this commit into an OCI layout under a temporary
// folder and reads it back from there.
func build(t *testing.T) v1.ImageIndex {
	t.Helper()
	if testing.Short() {
		t.Skip("builds convoy (not with -short)")
	}
	root, err := localcluster.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Root: root, Platforms: testPlatforms(), Log: io.Discard}
	if err := fromGit(t.Context(), &o); err != nil {
		t.Fatal(err)
	}
	idx, err := Build(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp(layoutRoot, "layout-")
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteLayout(dir, idx); err != nil {
		t.Fatal(err)
	}
	p, err := layout.FromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	read, err := p.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	// layout.Write makes the index the layout's index.json.
	return read
}

func digest(t *testing.T, idx v1.ImageIndex) v1.Hash {
	t.Helper()
	d, err := idx.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// Two builds of the same commit give the same index digest (binary, layers,
// config, manifests): reproducible.
func TestImageIsReproducible(t *testing.T) {
	first, second := digest(t, image(t)), digest(t, build(t))
	if first != second {
		t.Errorf("two builds of the same commit: %s and %s", first, second)
	}
}

// The image has one manifest per platform; each config names the entrypoint
// /usr/local/bin/convoy, user 65532, the OCI labels source, revision and version,
// and its platform; its files are the CA roots, the users and the binary; and the
// amd64 binary extracted from its layer runs `convoy version` with the commit.
func TestImageConfigAndBinary(t *testing.T) {
	idx := image(t)
	root, err := localcluster.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Root: root}
	if err := fromGit(t.Context(), &o); err != nil {
		t.Fatal(err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var platforms []string
	for _, d := range m.Manifests {
		platforms = append(platforms, d.Platform.String())
	}
	if diff := cmp.Diff(testPlatforms(), platforms); diff != "" {
		t.Errorf("platforms of the index (-want +got):\n%s", diff)
	}
	for _, d := range m.Manifests {
		img, err := idx.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if got := cf.OS + "/" + cf.Architecture; got != d.Platform.String() {
			t.Errorf("config of the %s manifest says %s", d.Platform, got)
		}
		if diff := cmp.Diff([]string{"/usr/local/bin/convoy"}, cf.Config.Entrypoint); diff != "" {
			t.Errorf("%s entrypoint (-want +got):\n%s", d.Platform, diff)
		}
		if cf.Config.User != "65532:65532" {
			t.Errorf("%s user %q, want 65532:65532", d.Platform, cf.Config.User)
		}
		for k, want := range map[string]string{
			LabelSource: DefaultSource, LabelRevision: o.Revision, LabelVersion: o.Version,
		} {
			if got := cf.Config.Labels[k]; got != want {
				t.Errorf("%s label %s = %q, want %q", d.Platform, k, got, want)
			}
		}
		files := extract(t, img)
		roots := x509.NewCertPool()
		if !roots.AppendCertsFromPEM(files[CABundle].data) {
			t.Errorf("%s: %s holds no certificate", d.Platform, CABundle)
		}
		if n := strings.Count(string(files[CABundle].data), "BEGIN CERTIFICATE"); n < 100 {
			t.Errorf("%s: %s holds %d certificates, want the Mozilla bundle (>100)", d.Platform, CABundle, n)
		}
		if b, _ := pem.Decode(files[CABundle].data); b == nil {
			t.Errorf("%s: %s is not PEM", d.Platform, CABundle)
		}
		if !strings.Contains(string(files["/etc/passwd"].data), "nonroot:x:65532:65532:") {
			t.Errorf("%s: /etc/passwd has no user 65532", d.Platform)
		}
		if f := files["/tmp"]; !f.dir || f.mode != 0o1777 {
			t.Errorf("%s: /tmp is %+v, want a directory with mode 1777", d.Platform, f)
		}
		bin := files[Binary]
		if bin.mode&0o111 == 0 {
			t.Fatalf("%s: %s is not executable (mode %o)", d.Platform, Binary, bin.mode)
		}
		if d.Platform.Architecture != "amd64" {
			continue
		}
		path := filepath.Join(t.TempDir(), "convoy")
		if err := os.WriteFile(path, bin.data, 0o755); err != nil {
			t.Fatal(err)
		}
		out, err := exec.CommandContext(t.Context(), path, "version").CombinedOutput()
		if err != nil {
			t.Fatalf("convoy version from the image: %v\n%s", err, out)
		}
		want := "convoy " + o.Version + " " + o.Revision + " linux/amd64 "
		if !strings.HasPrefix(string(out), want) {
			t.Errorf("convoy version printed %q, want it to start with %q", out, want)
		}
	}
}

type entry struct {
	mode int64
	dir  bool
	data []byte
}

// extract reads the flattened file system of img.
func extract(t *testing.T, img v1.Image) map[string]entry {
	t.Helper()
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	files := map[string]entry{}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		files["/"+strings.TrimSuffix(h.Name, "/")] = entry{mode: h.Mode, dir: h.Typeflag == tar.TypeDir, data: data}
	}
}

// The index pushed to a registry (go-containerregistry's, in this process) pulls
// back by digest with the same manifests.
func TestImagePushAndPullByDigest(t *testing.T) {
	idx := image(t)
	srv := httptest.NewServer(registry.New(registry.Logger(nopLogger())))
	t.Cleanup(srv.Close)
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := name.ParseReference(u.Host + "/kumodo/convoy:v0.0.0-test")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	if err := Push(ctx, idx, ref); err != nil {
		t.Fatal(err)
	}
	want := digest(t, idx)
	byDigest := ref.Context().Digest(want.String())
	pulled, err := remote.Index(byDigest, remote.WithContext(ctx))
	if err != nil {
		t.Fatalf("pull %s: %v", byDigest, err)
	}
	if got := digest(t, pulled); got != want {
		t.Errorf("pulled %s by digest, got an index with digest %s", want, got)
	}
	wantM, _ := idx.IndexManifest()
	gotM, err := pulled.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantM, gotM); diff != "" {
		t.Errorf("pulled index manifest (-pushed +pulled):\n%s", diff)
	}
	for _, d := range gotM.Manifests {
		img, err := pulled.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		layers, err := img.Layers()
		if err != nil {
			t.Fatal(err)
		}
		// Reading every layer checks that the registry has every blob.
		for _, l := range layers {
			rc, err := l.Compressed()
			if err != nil {
				t.Fatalf("%s: %v", d.Platform, err)
			}
			_, err = io.Copy(io.Discard, rc)
			rc.Close()
			if err != nil {
				t.Fatalf("%s: reading a layer: %v", d.Platform, err)
			}
		}
	}
	if !slices.ContainsFunc(gotM.Manifests, func(d v1.Descriptor) bool { return d.Platform.Architecture == "amd64" }) {
		t.Errorf("the pulled index has no linux/amd64 image")
	}
}

func nopLogger() *log.Logger { return log.New(io.Discard, "", 0) }
