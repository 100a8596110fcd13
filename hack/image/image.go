package main

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/pem"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"golang.org/x/crypto/x509roots/fallback/bundle"
)

// What the image is: one static binary on an empty base, run as a non-root user.
const (
	// Binary is where convoy is in the image, and the entrypoint.
	Binary = "/usr/local/bin/convoy"
	// User is the numeric user:group the image runs as (distroless's "nonroot").
	User = "65532:65532"
	// CABundle is the file of trusted roots, where Go's crypto/x509 looks on Linux.
	CABundle = "/etc/ssl/certs/ca-certificates.crt"
	// DefaultSource is the repository the org.opencontainers.image.source label names.
	DefaultSource = "https://github.com/kumodo/convoy"
)

// Labels of the OCI image spec (annotations.md) that the image carries.
const (
	LabelSource   = "org.opencontainers.image.source"
	LabelRevision = "org.opencontainers.image.revision"
	LabelVersion  = "org.opencontainers.image.version"
	LabelTitle    = "org.opencontainers.image.title"
	LabelCreated  = "org.opencontainers.image.created"
)

// DefaultPlatforms are the platforms `make image` builds.
var DefaultPlatforms = []string{"linux/amd64", "linux/arm64"}

// Options say what to build.
type Options struct {
	// Root is the repository (the module with cmd/convoy).
	Root string
	// Platforms are os/arch pairs, e.g. linux/amd64.
	Platforms []string
	// Version and Revision are stamped into the binary and the labels.
	Version, Revision string
	// Source is the repository URL of the source label.
	Source string
	// Created is the time of every file, of the config and of the created label: the
	// commit's time, so that a commit always gives the same image.
	Created time.Time
	// Log receives the progress (go build's output included).
	Log io.Writer
}

// Build cross-compiles cmd/convoy (CGO_ENABLED=0, -trimpath) for each platform and
// returns the OCI image index of the images: a base layer (users, groups, CA
// roots, /tmp; the same for every platform) and a layer with the binary.
func Build(ctx context.Context, o Options) (v1.ImageIndex, error) {
	if len(o.Platforms) == 0 {
		return nil, fmt.Errorf("no platform to build: give -platforms, e.g. %s", strings.Join(DefaultPlatforms, ","))
	}
	if o.Version == "" || o.Revision == "" {
		return nil, fmt.Errorf("version %q and revision %q must both be set", o.Version, o.Revision)
	}
	base, err := baseLayer(o.Created)
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "convoy-image-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)

	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	var adds []mutate.IndexAddendum
	for _, p := range o.Platforms {
		goos, goarch, ok := strings.Cut(p, "/")
		if !ok || goos != "linux" || goarch == "" {
			return nil, fmt.Errorf("platform %q: want linux/<arch>, e.g. linux/amd64", p)
		}
		bin := filepath.Join(tmp, goarch, "convoy")
		if err := goBuild(ctx, o, goarch, bin); err != nil {
			return nil, err
		}
		img, err := platformImage(o, base, goarch, bin)
		if err != nil {
			return nil, fmt.Errorf("image for %s: %w", p, err)
		}
		adds = append(adds, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{
			Platform: &v1.Platform{OS: goos, Architecture: goarch},
		}})
	}
	idx = mutate.AppendManifests(idx, adds...)
	return mutate.Annotations(idx, labels(o)).(v1.ImageIndex), nil
}

// labels are the image's OCI labels (also the index's annotations).
func labels(o Options) map[string]string {
	source := o.Source
	if source == "" {
		source = DefaultSource
	}
	return map[string]string{
		LabelSource:   source,
		LabelRevision: o.Revision,
		LabelVersion:  o.Version,
		LabelTitle:    "convoy",
		LabelCreated:  o.Created.UTC().Format(time.RFC3339),
	}
}

// goBuild compiles cmd/convoy for linux/goarch into out, reproducibly: no cgo,
// -trimpath, no VCS stamp (the revision comes from -X), stripped.
func goBuild(ctx context.Context, o Options, goarch, out string) error {
	fmt.Fprintf(o.Log, "building convoy %s for linux/%s...\n", o.Version, goarch)
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-buildvcs=false",
		"-ldflags", fmt.Sprintf("-s -w -buildid= -X main.version=%s -X main.revision=%s", o.Version, o.Revision),
		"-o", out, "./cmd/convoy")
	cmd.Dir = o.Root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+goarch, "GOFLAGS=-mod=readonly")
	cmd.Stdout, cmd.Stderr = o.Log, o.Log
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build ./cmd/convoy for linux/%s: %w", goarch, err)
	}
	return nil
}

func platformImage(o Options, base v1.Layer, goarch, bin string) (v1.Image, error) {
	data, err := os.ReadFile(bin)
	if err != nil {
		return nil, err
	}
	binLayer, err := layer(o.Created, []file{{name: Binary, mode: 0o755, data: data}})
	if err != nil {
		return nil, err
	}
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	created := v1.Time{Time: o.Created.UTC()}
	img, err = mutate.Append(img,
		mutate.Addendum{Layer: base, MediaType: types.OCILayer, History: v1.History{
			Created: created, CreatedBy: "hack/image: users, groups, CA roots (golang.org/x/crypto/x509roots/fallback), /tmp"}},
		mutate.Addendum{Layer: binLayer, MediaType: types.OCILayer, History: v1.History{
			Created: created, CreatedBy: "hack/image: go build ./cmd/convoy (CGO_ENABLED=0)"}},
	)
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", goarch
	cf.Created = created
	cf.Author = ""
	cf.Config = v1.Config{
		Entrypoint: []string{Binary},
		User:       User,
		WorkingDir: "/",
		Env: []string{
			"PATH=/usr/local/bin:/usr/bin:/bin",
			"SSL_CERT_FILE=" + CABundle,
			"HOME=/home/nonroot",
		},
		Labels: labels(o),
	}
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		return nil, err
	}
	return mutate.Annotations(img, labels(o)).(v1.Image), nil
}

// file is one entry of a layer: a regular file, or a directory when dir is set.
type file struct {
	name     string
	mode     int64
	uid, gid int
	dir      bool
	data     []byte
}

// baseLayer is what every platform shares: the users (root and nonroot, 65532),
// the CA roots and a /tmp.
func baseLayer(created time.Time) (v1.Layer, error) {
	roots, err := caRoots()
	if err != nil {
		return nil, err
	}
	return layer(created, []file{
		{name: "/etc/passwd", mode: 0o644, data: []byte("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n")},
		{name: "/etc/group", mode: 0o644, data: []byte("root:x:0:\nnonroot:x:65532:\n")},
		{name: CABundle, mode: 0o644, data: roots},
		{name: "/home/nonroot", mode: 0o700, uid: 65532, gid: 65532, dir: true},
		{name: "/tmp", mode: 0o1777, dir: true},
	})
}

// caRoots is the Mozilla root bundle that golang.org/x/crypto/x509roots/fallback
// ships (pinned in go.mod, so the build downloads nothing), as PEM. Roots that the
// bundle trusts only under a constraint (e.g. distrust after a date) are left out: a
// PEM file cannot carry the constraint.
func caRoots() ([]byte, error) {
	var buf bytes.Buffer
	n := 0
	for r := range bundle.Roots() {
		if r.Constraint != nil {
			continue
		}
		if err := pem.Encode(&buf, &pem.Block{Type: "CERTIFICATE", Bytes: r.Certificate}); err != nil {
			return nil, err
		}
		n++
	}
	if n == 0 {
		return nil, fmt.Errorf("golang.org/x/crypto/x509roots/fallback/bundle has no unconstrained root")
	}
	return buf.Bytes(), nil
}

// layer is a gzip-compressed OCI layer of files, reproducible: the parent
// directories are added, entries are sorted, every time is created.
func layer(created time.Time, files []file) (v1.Layer, error) {
	all := map[string]file{}
	for _, f := range files {
		all[f.name] = f
		for d := filepath.Dir(f.name); d != "/"; d = filepath.Dir(d) {
			if _, ok := all[d]; !ok {
				all[d] = file{name: d, mode: 0o755, dir: true}
			}
		}
	}
	names := make([]string, 0, len(all))
	for n := range all {
		names = append(names, n)
	}
	slices.Sort(names)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, n := range names {
		f := all[n]
		h := &tar.Header{
			Name: strings.TrimPrefix(n, "/"), Mode: f.mode, Uid: f.uid, Gid: f.gid,
			ModTime: created.UTC(), Format: tar.FormatPAX, Typeflag: tar.TypeReg, Size: int64(len(f.data)),
		}
		if f.dir {
			h.Name += "/"
			h.Typeflag, h.Size = tar.TypeDir, 0
		}
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
	data := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}, tarball.WithMediaType(types.OCILayer))
}
