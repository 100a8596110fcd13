package deploy_test

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/version"
	"sigs.k8s.io/yaml"

	"kumodo.io/convoy/internal/localcluster"
)

// krew's own validation (sigs.k8s.io/krew/internal/index/validation) is an internal
// package of the krew module, and krew's go.mod requires k8s.io/client-go
// v11.0.0+incompatible, which minimal version selection would pick over convoy's
// client-go. So these tests check by hand what that validation checks (krew v0.4.3:
// ValidatePlugin and validatePlatform), plus what `kubectl krew install` needs of
// an archive.

// krewPlugin is krew's Plugin manifest (krew.googlecontainertools.github.com/v1alpha2),
// read strictly: a field krew does not know fails the test.
type krewPlugin struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Version          string         `json:"version"`
		Homepage         string         `json:"homepage,omitempty"`
		ShortDescription string         `json:"shortDescription"`
		Description      string         `json:"description,omitempty"`
		Caveats          string         `json:"caveats,omitempty"`
		Platforms        []krewPlatform `json:"platforms"`
	} `json:"spec"`
}

type krewPlatform struct {
	Selector *metav1.LabelSelector `json:"selector"`
	URI      string                `json:"uri"`
	Sha256   string                `json:"sha256"`
	Bin      string                `json:"bin"`
	Files    []struct {
		From string `json:"from"`
		To   string `json:"to"`
	} `json:"files,omitempty"`
}

func (p krewPlatform) osArch() string {
	if p.Selector == nil {
		return ""
	}
	return p.Selector.MatchLabels["os"] + "/" + p.Selector.MatchLabels["arch"]
}

// krewPlatforms are the platforms convoy ships, and krew installs for.
var krewPlatforms = []string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64", "windows/amd64", "windows/arm64"}

var (
	krewSafeName = regexp.MustCompile(`^[\w-]+$`)
	krewSHA256   = regexp.MustCompile(`^[a-f0-9]{64}$`)
)

// placeholder is what deploy/krew/convoy.yaml has where hack/release writes a digest.
const placeholder = "TODO-at-release"

// readKrewManifest reads a krew manifest and fails on what krew's validation
// refuses. With release, sha256 must be digests and uri https; without, the
// template's placeholders are accepted.
func readKrewManifest(t *testing.T, file string, release bool) *krewPlugin {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	p := &krewPlugin{}
	if err := yaml.UnmarshalStrict(data, p); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if p.APIVersion != "krew.googlecontainertools.github.com/v1alpha2" || p.Kind != "Plugin" {
		t.Errorf("%s: apiVersion %s, kind %s", file, p.APIVersion, p.Kind)
	}
	// krew names the plugin after the file (convoy.yaml in the index).
	if name := strings.TrimSuffix(filepath.Base(file), ".yaml"); p.Metadata.Name != name || !krewSafeName.MatchString(name) {
		t.Errorf("%s: metadata.name %q, want the file's name %q", file, p.Metadata.Name, name)
	}
	if s := p.Spec.ShortDescription; s == "" || strings.ContainsAny(s, "\r\n") {
		t.Errorf("%s: shortDescription %q: must be set, on one line", file, s)
	}
	if p.Spec.Description == "" {
		t.Errorf("%s: description is empty", file)
	}
	if v := p.Spec.Version; !strings.HasPrefix(v, "v") {
		t.Errorf("%s: version %q does not start with v", file, v)
	} else if _, err := version.ParseSemantic(v); err != nil {
		t.Errorf("%s: version %q: %v", file, v, err)
	}
	if len(p.Spec.Platforms) == 0 {
		t.Errorf("%s: no platforms", file)
	}
	seen := map[string]bool{}
	for i, pl := range p.Spec.Platforms {
		where := file + ": platforms[" + pl.osArch() + "]"
		if pl.Selector == nil || len(pl.Selector.MatchExpressions) > 0 || len(pl.Selector.MatchLabels) != 2 || !slices.Contains(krewPlatforms, pl.osArch()) {
			t.Errorf("%s: platforms[%d] selector %+v: want matchLabels os and arch of %v", file, i, pl.Selector, krewPlatforms)
			continue
		}
		if seen[pl.osArch()] {
			t.Errorf("%s: two platforms select %s", where, pl.osArch())
		}
		seen[pl.osArch()] = true
		u, err := url.Parse(pl.URI)
		if err != nil || u.Scheme != "https" || u.Host == "" {
			t.Errorf("%s: uri %q is not an https URL", where, pl.URI)
		}
		if !krewSHA256.MatchString(pl.Sha256) && (release || pl.Sha256 != placeholder) {
			t.Errorf("%s: sha256 %q is not 64 lowercase hex digits", where, pl.Sha256)
		}
		wantBin := "kubectl-convoy"
		if pl.Selector.MatchLabels["os"] == "windows" {
			wantBin += ".exe"
		}
		if pl.Bin != wantBin {
			t.Errorf("%s: bin %q, want %q", where, pl.Bin, wantBin)
		}
		if pl.Files != nil && len(pl.Files) == 0 {
			t.Errorf("%s: files is empty: leave it out or name the files", where)
		}
		for _, f := range pl.Files {
			if f.From == "" || f.To == "" {
				t.Errorf("%s: files entry %+v: from and to must be set", where, f)
			}
		}
	}
	return p
}

// The committed manifest, the template of each release's manifest, has every
// platform krew installs convoy for and passes krew's validation but for its
// placeholders.
func TestKrewManifest(t *testing.T) {
	p := readKrewManifest(t, filepath.Join(deployDir(t), "krew", "convoy.yaml"), false)
	var got []string
	for _, pl := range p.Spec.Platforms {
		got = append(got, pl.osArch())
	}
	if diff := cmp.Diff(krewPlatforms, got); diff != "" {
		t.Errorf("platforms (-want +got):\n%s", diff)
	}
}

// `make dist` runs `go run ./hack/release`; this test runs the same program for one
// platform (this machine's, when convoy ships for it) and checks what krew relies
// on: the manifest it writes passes krew's validation and differs from the template
// only in version, uri and sha256; the sha256 is the archive's; the archive holds
// every file that `files:` copies (LICENSE too, when named), so that `bin` is
// there after the copy; the binary is executable and reports the version.
func TestKrewPackage(t *testing.T) {
	root, err := localcluster.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	platform := runtime.GOOS + "/" + runtime.GOARCH
	native := slices.Contains(krewPlatforms, platform)
	if !native {
		platform = "linux/amd64"
	}
	const release = "v0.0.1-test.1"
	out := t.TempDir()
	// A cold Go cache compiles the plugin's dependencies for CGO_ENABLED=0 first
	// (about 3 minutes on 2 cores); seconds afterwards.
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "run", "./hack/release", "-version", release, "-platforms", platform,
		"-out", out, "-download-url", "https://downloads.example.com/convoy/{version}")
	cmd.Dir = root
	start := time.Now()
	if log, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go run ./hack/release: %v\n%s", err, log)
	}
	t.Logf("packaged %s in %s", platform, time.Since(start).Round(time.Second))

	manifest := filepath.Join(out, "convoy.yaml")
	p := readKrewManifest(t, manifest, true)
	if p.Spec.Version != release || len(p.Spec.Platforms) != 1 || p.Spec.Platforms[0].osArch() != platform {
		t.Fatalf("%s: version %s, %d platform(s), want %s for %s only", manifest, p.Spec.Version, len(p.Spec.Platforms), release, platform)
	}
	pl := p.Spec.Platforms[0]

	// The template with the release's values is what was written.
	want := readKrewManifest(t, filepath.Join(deployDir(t), "krew", "convoy.yaml"), false)
	want.Spec.Version = release
	for _, tp := range want.Spec.Platforms {
		if tp.osArch() == platform {
			tp.URI, tp.Sha256 = pl.URI, pl.Sha256
			want.Spec.Platforms = []krewPlatform{tp}
		}
	}
	if diff := cmp.Diff(want, p); diff != "" {
		t.Errorf("the manifest differs from deploy/krew/convoy.yaml by more than version, uri and sha256 (-template +written):\n%s", diff)
	}

	goos, goarch, _ := strings.Cut(platform, "/")
	name := "kubectl-convoy_" + release + "_" + goos + "_" + goarch + ".tar.gz"
	if goos == "windows" {
		name = strings.TrimSuffix(name, ".tar.gz") + ".zip"
	}
	if wantURI := "https://downloads.example.com/convoy/" + release + "/" + name; pl.URI != wantURI {
		t.Errorf("uri %s, want %s", pl.URI, wantURI)
	}
	archive, err := os.ReadFile(filepath.Join(out, name))
	if err != nil {
		t.Fatalf("the archive the uri names: %v", err)
	}
	sum := sha256.Sum256(archive)
	if got := hex.EncodeToString(sum[:]); got != pl.Sha256 {
		t.Errorf("sha256 of %s is %s, the manifest says %s", name, got, pl.Sha256)
	}
	if sums, err := os.ReadFile(filepath.Join(out, "SHA256SUMS")); err != nil || string(sums) != pl.Sha256+"  "+name+"\n" {
		t.Errorf("SHA256SUMS = %q (%v), want the archive's line", sums, err)
	}

	entries := readArchive(t, name, archive)
	// krew extracts the archive, copies each files: from (a glob) to its to, then
	// runs bin from the install folder.
	installed := map[string]archiveEntry{}
	if pl.Files == nil {
		installed = entries
	}
	for _, f := range pl.Files {
		matched := false
		for n, e := range entries {
			if ok, _ := path.Match(f.From, n); ok {
				matched = true
				installed[path.Join(f.To, path.Base(n))] = e
			}
		}
		if !matched {
			t.Errorf("files: from %q matches nothing in %s (it holds %v)", f.From, name, keys(entries))
		}
		if strings.EqualFold(f.From, "LICENSE") {
			if _, ok := entries["LICENSE"]; !ok {
				t.Errorf("the manifest names LICENSE, which %s lacks", name)
			}
		}
	}
	bin, ok := installed[path.Clean(pl.Bin)]
	if !ok {
		t.Fatalf("bin %s is not installed from %s (installed: %v)", pl.Bin, name, keys(installed))
	}
	if goos != "windows" && bin.mode&0o111 == 0 {
		t.Errorf("%s in %s has mode %o, not executable", pl.Bin, name, bin.mode)
	}
	if !native {
		return
	}
	exe := filepath.Join(t.TempDir(), pl.Bin)
	if err := os.WriteFile(exe, bin.data, 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := exec.CommandContext(ctx, exe, "version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(got), "kubectl-convoy "+release+" "+platform+" ") {
		t.Errorf("%s version: %v, %q; want kubectl-convoy %s %s", pl.Bin, err, got, release, platform)
	}
}

type archiveEntry struct {
	mode int64
	data []byte
}

// readArchive returns the regular files of a .tar.gz or .zip archive by name.
func readArchive(t *testing.T, name string, data []byte) map[string]archiveEntry {
	t.Helper()
	out := map[string]archiveEntry{}
	if strings.HasSuffix(name, ".zip") {
		zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, f := range zr.File {
			if !f.Mode().IsRegular() {
				continue
			}
			rc, err := f.Open()
			if err != nil {
				t.Fatalf("%s: %s: %v", name, f.Name, err)
			}
			b, err := io.ReadAll(rc)
			_ = rc.Close()
			if err != nil {
				t.Fatalf("%s: %s: %v", name, f.Name, err)
			}
			out[path.Clean(f.Name)] = archiveEntry{mode: int64(f.Mode().Perm()), data: b}
		}
		return out
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatalf("%s: %s: %v", name, h.Name, err)
		}
		out[path.Clean(h.Name)] = archiveEntry{mode: h.Mode, data: b}
	}
}

func keys(m map[string]archiveEntry) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
