package localcluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
)

// KubernetesVersion is the version of every Kubernetes component the local
// control plane runs.
const KubernetesVersion = "v1.37.2"

// Binaries lists the files that hack/kube/build.sh makes.
var Binaries = []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubectl", "kwok", "kwok-stages.yaml"}

// BinDirEnv names the environment variable that overrides the binary folder.
const BinDirEnv = "CONVOY_KUBE_BIN_DIR"

// RepoRoot finds the convoy repository that holds the working directory, by
// looking upwards for hack/kube/build.sh.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if exists(filepath.Join(dir, "hack", "kube", "build.sh")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("not inside the convoy repository (no hack/kube/build.sh above the working directory); set " + BinDirEnv)
		}
		dir = parent
	}
}

// BinDir is where the Kubernetes binaries are: $CONVOY_KUBE_BIN_DIR, or
// bin/k8s/<version>/ in the repository.
func BinDir() (string, error) {
	if d := os.Getenv(BinDirEnv); d != "" {
		return d, nil
	}
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "bin", "k8s", KubernetesVersion), nil
}

// MissingBinaries returns the binaries not yet in dir.
func MissingBinaries(dir string) []string { return missingFrom(dir, Binaries) }

func missingFrom(dir string, names []string) []string {
	var missing []string
	for _, b := range names {
		if !exists(filepath.Join(dir, b)) {
			missing = append(missing, b)
		}
	}
	return missing
}

// EnsureBinaries builds whatever binary is missing with hack/kube/build.sh,
// its progress written to progress, and returns the binary folder.
func EnsureBinaries(ctx context.Context, progress io.Writer) (string, error) {
	dir, err := BinDir()
	if err != nil {
		return "", err
	}
	missing := MissingBinaries(dir)
	if len(missing) == 0 {
		return dir, nil
	}
	root, err := RepoRoot()
	if err != nil {
		return "", fmt.Errorf("%v missing from %s and cannot build them: %w", missing, dir, err)
	}
	cmd := exec.CommandContext(ctx, "bash", append([]string{filepath.Join(root, "hack", "kube", "build.sh")}, missing...)...)
	cmd.Env = append(os.Environ(), BinDirEnv+"="+dir)
	cmd.Stdout, cmd.Stderr = progress, progress
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("build the Kubernetes binaries (hack/kube/build.sh): %w", err)
	}
	return dir, nil
}

// BuildConvoy builds this repository's ./cmd/convoy into dir, as the tests run it,
// and returns the binary's path.
func BuildConvoy(ctx context.Context, dir string) (string, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "convoy")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/convoy")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/convoy: %w\n%s", err, out)
	}
	return bin, nil
}
