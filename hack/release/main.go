// Command release packages kubectl-convoy for krew: for each platform of the krew
// manifest deploy/krew/convoy.yaml (or the -platforms given), it cross-compiles
// cmd/kubectl-convoy with CGO_ENABLED=0 and the version stamped, packs the files
// the platform's `files` name (the binary, and LICENSE or another repository file
// when named) into kubectl-convoy_<version>_<os>_<arch>.tar.gz (.zip on Windows),
// and writes <out>/convoy.yaml: the manifest with that version and each archive's
// uri and sha256, for the krew index. <out>/SHA256SUMS lists the archives.
//
//	go run ./hack/release -version v0.1.0                   # every platform, into dist/
//	go run ./hack/release -version v0.1.0 -platforms linux/amd64 -out /tmp/d
//
// Archives are reproducible: entries in a fixed order, owned by root, with the time
// of $SOURCE_DATE_EPOCH (default: the Unix epoch); binaries built with -trimpath and
// without VCS stamping. `make dist VERSION=v0.1.0` runs it from the repository root.
package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/version"
	"sigs.k8s.io/yaml"
)

// versionVariable is the variable the plugin reports in `kubectl convoy version`.
const versionVariable = "kumodo.io/convoy/internal/cli.version"

// Plugin is the part of krew's Plugin manifest (krew.googlecontainertools.github.com/
// v1alpha2) that convoy's manifest uses. Unknown fields are refused, so a field
// added to the template is either known here or fails the packaging.
type Plugin struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec PluginSpec `json:"spec"`
}

// PluginSpec is krew's spec of a plugin.
type PluginSpec struct {
	Version          string     `json:"version"`
	Homepage         string     `json:"homepage,omitempty"`
	ShortDescription string     `json:"shortDescription"`
	Description      string     `json:"description,omitempty"`
	Caveats          string     `json:"caveats,omitempty"`
	Platforms        []Platform `json:"platforms"`
}

// Platform is one archive of the plugin and where krew finds the binary in it.
type Platform struct {
	Selector *metav1.LabelSelector `json:"selector"`
	URI      string                `json:"uri"`
	Sha256   string                `json:"sha256"`
	Bin      string                `json:"bin"`
	Files    []FileOperation       `json:"files,omitempty"`
}

// FileOperation copies files of the extracted archive into the install folder.
type FileOperation struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// OSArch is the platform of a selector: its os and arch labels.
func (p Platform) OSArch() string {
	if p.Selector == nil {
		return "/"
	}
	return p.Selector.MatchLabels["os"] + "/" + p.Selector.MatchLabels["arch"]
}

type options struct {
	root, manifest, out, version, downloadURL string
	platforms                                 []string
	mtime                                     time.Time
	log                                       io.Writer
}

func main() {
	o := options{log: os.Stderr}
	var platforms string
	flag.StringVar(&o.version, "version", "", "the release, a semantic version with a leading v (required), e.g. v0.1.0")
	flag.StringVar(&o.out, "out", "dist", "folder for the archives, SHA256SUMS and convoy.yaml")
	flag.StringVar(&o.root, "root", ".", "the repository root")
	flag.StringVar(&o.manifest, "manifest", filepath.Join("deploy", "krew", "convoy.yaml"), "the krew manifest to fill in, relative to -root")
	flag.StringVar(&o.downloadURL, "download-url", "https://github.com/kumodo/convoy/releases/download/{version}",
		"where the archives will be published; {version} is replaced")
	flag.StringVar(&platforms, "platforms", "", "comma-separated os/arch to build (default: every platform of the manifest)")
	flag.Parse()
	if platforms != "" {
		o.platforms = strings.Split(platforms, ",")
	}
	mtime, err := sourceDateEpoch(os.Getenv("SOURCE_DATE_EPOCH"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(2)
	}
	o.mtime = mtime
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

func sourceDateEpoch(s string) (time.Time, error) {
	if s == "" {
		return time.Unix(0, 0).UTC(), nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH=%q is not a Unix time: %w", s, err)
	}
	return time.Unix(n, 0).UTC(), nil
}

func run(o options) error {
	if !strings.HasPrefix(o.version, "v") {
		return fmt.Errorf("-version %q: krew wants a semantic version with a leading v, e.g. v0.1.0", o.version)
	}
	if _, err := version.ParseSemantic(o.version); err != nil {
		return fmt.Errorf("-version %q: %w", o.version, err)
	}
	p, err := readManifest(filepath.Join(o.root, o.manifest))
	if err != nil {
		return err
	}
	platforms, err := selectPlatforms(p.Spec.Platforms, o.platforms)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	build, err := os.MkdirTemp("", "convoy-release-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(build) }()

	var sums strings.Builder
	for i := range platforms {
		pl := &platforms[i]
		name, sum, err := o.pack(*pl, build)
		if err != nil {
			return fmt.Errorf("%s: %w", pl.OSArch(), err)
		}
		pl.URI = strings.TrimSuffix(strings.ReplaceAll(o.downloadURL, "{version}", o.version), "/") + "/" + name
		pl.Sha256 = sum
		fmt.Fprintf(&sums, "%s  %s\n", sum, name)
		fmt.Fprintf(o.log, "%s  %s\n", sum, filepath.Join(o.out, name))
	}
	p.Spec.Version = o.version
	p.Spec.Platforms = platforms
	data, err := yaml.Marshal(p)
	if err != nil {
		return err
	}
	header := fmt.Sprintf("# krew manifest of kubectl-convoy %s, written by hack/release from %s.\n", o.version, filepath.ToSlash(o.manifest))
	if len(o.platforms) > 0 {
		header += "# Only the platforms built (-platforms): not for the krew index.\n"
	}
	if err := os.WriteFile(filepath.Join(o.out, "convoy.yaml"), append([]byte(header), data...), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(o.out, "SHA256SUMS"), []byte(sums.String()), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(o.log, "krew manifest: %s\n", filepath.Join(o.out, "convoy.yaml"))
	return nil
}

func readManifest(path string) (*Plugin, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	p := &Plugin{}
	if err := yaml.UnmarshalStrict(data, p); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(p.Spec.Platforms) == 0 {
		return nil, fmt.Errorf("%s has no spec.platforms", path)
	}
	return p, nil
}

// selectPlatforms returns the manifest's platforms, or those of want in the
// manifest's order; each one must name exactly one os and arch.
func selectPlatforms(all []Platform, want []string) ([]Platform, error) {
	var out []Platform
	for _, p := range all {
		if p.Selector == nil || len(p.Selector.MatchExpressions) > 0 || len(p.Selector.MatchLabels) != 2 ||
			p.Selector.MatchLabels["os"] == "" || p.Selector.MatchLabels["arch"] == "" {
			return nil, fmt.Errorf("platform %+v: hack/release builds platforms selected by exactly matchLabels {os, arch}", p.Selector)
		}
		if len(want) == 0 || slices.Contains(want, p.OSArch()) {
			out = append(out, p)
		}
	}
	for _, w := range want {
		if !slices.ContainsFunc(out, func(p Platform) bool { return p.OSArch() == w }) {
			return nil, fmt.Errorf("-platforms %s: not a platform of the krew manifest", w)
		}
	}
	return out, nil
}

// ArchiveName is the archive of a platform: kubectl-convoy_<version>_<os>_<arch>
// with .zip on Windows and .tar.gz elsewhere.
func ArchiveName(version, goos, goarch string) string {
	ext := ".tar.gz"
	if goos == "windows" {
		ext = ".zip"
	}
	return fmt.Sprintf("kubectl-convoy_%s_%s_%s%s", version, goos, goarch, ext)
}

// pack builds the binary of one platform and writes its archive into o.out; it
// returns the archive's name and sha256.
func (o options) pack(p Platform, build string) (string, string, error) {
	goos, goarch := p.Selector.MatchLabels["os"], p.Selector.MatchLabels["arch"]
	binary := "kubectl-convoy"
	if goos == "windows" {
		binary += ".exe"
	}
	if p.Bin != binary {
		return "", "", fmt.Errorf("bin is %q; the binary for %s is %s", p.Bin, goos, binary)
	}
	// The archive holds what files: names (or, without files:, the binary alone):
	// the binary, and any other name is a file of the repository root (LICENSE).
	entries := []string{binary}
	for _, f := range p.Files {
		if f.From == binary || slices.Contains(entries, f.From) {
			continue
		}
		if strings.ContainsAny(f.From, "*?[") || strings.Contains(f.From, "/") || f.From == "." {
			return "", "", fmt.Errorf("files: from %q: hack/release packs single files of the repository root", f.From)
		}
		entries = append(entries, f.From)
	}
	if len(p.Files) > 0 && !slices.ContainsFunc(p.Files, func(f FileOperation) bool { return f.From == binary }) {
		return "", "", fmt.Errorf("files: does not copy %s, so krew would not install it", binary)
	}

	dir := filepath.Join(build, goos+"_"+goarch)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", err
	}
	fmt.Fprintf(o.log, "building kubectl-convoy %s for %s/%s...\n", o.version, goos, goarch)
	cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=false",
		"-ldflags", "-s -w -X "+versionVariable+"="+o.version,
		"-o", filepath.Join(dir, binary), "./cmd/kubectl-convoy")
	cmd.Dir = o.root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+goos, "GOARCH="+goarch)
	cmd.Stdout, cmd.Stderr = o.log, o.log
	if err := cmd.Run(); err != nil {
		return "", "", fmt.Errorf("go build: %w", err)
	}
	files := make([]archiveFile, 0, len(entries))
	for _, e := range entries {
		src, mode := filepath.Join(o.root, e), int64(0o644)
		if e == binary {
			src, mode = filepath.Join(dir, binary), 0o755
		}
		data, err := os.ReadFile(src)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return "", "", fmt.Errorf("the manifest's files: name %s, which the repository does not have", e)
			}
			return "", "", err
		}
		files = append(files, archiveFile{name: e, mode: mode, data: data})
	}

	name := ArchiveName(o.version, goos, goarch)
	var archive []byte
	var err error
	if goos == "windows" {
		archive, err = zipArchive(files, o.mtime)
	} else {
		archive, err = tarGzArchive(files, o.mtime)
	}
	if err != nil {
		return "", "", err
	}
	if err := os.WriteFile(filepath.Join(o.out, name), archive, 0o644); err != nil {
		return "", "", err
	}
	sum := sha256.Sum256(archive)
	return name, hex.EncodeToString(sum[:]), nil
}

type archiveFile struct {
	name string
	mode int64
	data []byte
}

func tarGzArchive(files []archiveFile, mtime time.Time) ([]byte, error) {
	var b bytes.Buffer
	zw, err := gzip.NewWriterLevel(&b, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	tw := tar.NewWriter(zw)
	for _, f := range files {
		h := &tar.Header{Name: f.name, Mode: f.mode, Size: int64(len(f.data)), ModTime: mtime, Typeflag: tar.TypeReg}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func zipArchive(files []archiveFile, mtime time.Time) ([]byte, error) {
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for _, f := range files {
		h := &zip.FileHeader{Name: f.name, Method: zip.Deflate, Modified: mtime}
		h.SetMode(os.FileMode(f.mode))
		w, err := zw.CreateHeader(h)
		if err != nil {
			return nil, err
		}
		if _, err := w.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
