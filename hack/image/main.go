// Command image builds the OCI image of convoy without a container runtime:
// cmd/convoy cross-compiled (CGO_ENABLED=0) for each platform, on an empty base
// with a non-root user (65532), the CA roots of golang.org/x/crypto/x509roots/fallback
// and the OCI labels source, revision and version. It writes an OCI image layout,
// and pushes the index with -push. The same commit gives the same digest: every
// time in the image is the commit's time and the build is -trimpath.
//
//	go run ./hack/image -out bin/image                       # make image
//	go run ./hack/image -out bin/image -push reg/convoy:v1   # IMAGE=reg/convoy:v1 make image-push
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "hack/image:", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		out       = flag.String("out", "bin/image", "folder of the OCI image layout to write (replaced)")
		platforms = flag.String("platforms", strings.Join(DefaultPlatforms, ","), "comma-separated os/arch platforms")
		version   = flag.String("version", "", "version to stamp (default: git describe --tags --always --dirty)")
		source    = flag.String("source", DefaultSource, "repository URL for the org.opencontainers.image.source label")
		push      = flag.String("push", "", "push the image index to this reference (registry/name:tag); credentials from the Docker config ($DOCKER_CONFIG)")
	)
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	root, err := git(ctx, "rev-parse", "--show-toplevel")
	if err != nil {
		return fmt.Errorf("hack/image runs inside the convoy repository: %w", err)
	}
	o := Options{Root: root, Platforms: strings.Split(*platforms, ","), Version: *version, Source: *source, Log: os.Stderr}
	if err := fromGit(ctx, &o); err != nil {
		return err
	}
	var ref name.Reference
	if *push != "" {
		if ref, err = name.ParseReference(*push); err != nil {
			return fmt.Errorf("-push %q (IMAGE): want registry/name:tag: %w", *push, err)
		}
	}
	idx, err := Build(ctx, o)
	if err != nil {
		return err
	}
	if err := WriteLayout(*out, idx); err != nil {
		return err
	}
	digest, err := idx.Digest()
	if err != nil {
		return err
	}
	fmt.Printf("%s (%s, %s) written to %s\n", digest, o.Version, strings.Join(o.Platforms, ","), *out)
	if ref == nil {
		return nil
	}
	if err := Push(ctx, idx, ref, remote.WithAuthFromKeychain(authn.DefaultKeychain)); err != nil {
		return err
	}
	fmt.Printf("pushed %s@%s\n", ref.Context(), digest)
	return nil
}

// fromGit fills in what the options leave empty from the repository: the version
// (git describe), the revision (HEAD) and the time (HEAD's commit time).
func fromGit(ctx context.Context, o *Options) error {
	var err error
	if o.Version == "" {
		if o.Version, err = git(ctx, "-C", o.Root, "describe", "--tags", "--always", "--dirty"); err != nil {
			return err
		}
	}
	if o.Revision, err = git(ctx, "-C", o.Root, "rev-parse", "HEAD"); err != nil {
		return err
	}
	ts, err := git(ctx, "-C", o.Root, "log", "-1", "--format=%ct")
	if err != nil {
		return err
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return fmt.Errorf("commit time %q: %w", ts, err)
	}
	o.Created = time.Unix(sec, 0).UTC()
	return nil
}

func git(ctx context.Context, args ...string) (string, error) {
	out, err := exec.CommandContext(ctx, "git", args...).Output()
	if err != nil {
		if ee, ok := errors.AsType[*exec.ExitError](err); ok {
			return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, ee.Stderr)
		}
		return "", fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out)), nil
}

// WriteLayout writes idx as the OCI image layout dir (emptied first).
func WriteLayout(dir string, idx v1.ImageIndex) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if _, err := layout.Write(dir, idx); err != nil {
		return fmt.Errorf("writing the OCI layout %s: %w", dir, err)
	}
	return nil
}

// Push uploads idx and its images to ref.
func Push(ctx context.Context, idx v1.ImageIndex, ref name.Reference, opts ...remote.Option) error {
	if err := remote.WriteIndex(ref, idx, append(opts, remote.WithContext(ctx))...); err != nil {
		return fmt.Errorf("pushing to %s: %w", ref, err)
	}
	return nil
}
