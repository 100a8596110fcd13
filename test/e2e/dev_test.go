package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"kumodo.io/convoy/internal/localcluster"
)

// buildConvoy compiles cmd/convoy into a temporary folder.
func buildConvoy(t *testing.T) string {
	t.Helper()
	root, err := localcluster.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "convoy")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/convoy")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/convoy: %v\n%s", err, out)
	}
	return bin
}

// TestDevReachesReadyAndStopsCleanly runs `convoy dev` as a user does: it
// must create <state-dir>/ready, serve Ready nodes to kubectl through
// <state-dir>/kubeconfig, and on SIGTERM end with nothing left running and
// the ready file gone.
func TestDevReachesReadyAndStopsCleanly(t *testing.T) {
	bin := buildConvoy(t)
	kubeBin, err := localcluster.BinDir()
	if err != nil {
		t.Fatal(err)
	}
	stateDir := filepath.Join(t.TempDir(), "state")
	var out bytes.Buffer
	cmd := exec.Command(bin, "dev", "--state-dir", stateDir, "--nodes", "2")
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		if t.Failed() {
			t.Logf("convoy dev output:\n%s", out.String())
		}
	})

	ready := filepath.Join(stateDir, "ready")
	err = wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, 5*time.Minute, true, func(context.Context) (bool, error) {
		select {
		case err := <-exited:
			t.Fatalf("convoy dev exited before ready: %v", err)
		default:
		}
		_, err := os.Stat(ready)
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("no %s: %v", ready, err)
	}

	kubectl := exec.Command(filepath.Join(kubeBin, "kubectl"), "--kubeconfig", filepath.Join(stateDir, "kubeconfig"),
		"get", "nodes", "--no-headers")
	nodes, err := kubectl.CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl get nodes: %v\n%s", err, nodes)
	}
	lines := strings.Split(strings.TrimSpace(string(nodes)), "\n")
	if len(lines) != 2 {
		t.Fatalf("want 2 nodes, got:\n%s", nodes)
	}
	for _, l := range lines {
		if f := strings.Fields(l); len(f) < 2 || f[1] != "Ready" {
			t.Errorf("node not Ready: %q", l)
		}
	}
	// convoy's API is served through the host kube-apiserver.
	root, _ := localcluster.RepoRoot()
	apply := exec.Command(filepath.Join(kubeBin, "kubectl"), "--kubeconfig", filepath.Join(stateDir, "kubeconfig"),
		"apply", "-f", filepath.Join(root, "examples", "release-manual.yaml"))
	if b, err := apply.CombinedOutput(); err != nil {
		t.Fatalf("kubectl apply -f examples/release-manual.yaml: %v\n%s", err, b)
	}
	get := exec.Command(filepath.Join(kubeBin, "kubectl"), "--kubeconfig", filepath.Join(stateDir, "kubeconfig"),
		"get", "releases", "-A", "--no-headers")
	releases, err := get.CombinedOutput()
	if err != nil || !strings.HasPrefix(string(releases), "default") || !strings.Contains(string(releases), "hello") {
		t.Fatalf("kubectl get releases -A: %v\n%s", err, releases)
	}
	if !strings.Contains(out.String(), "export KUBECONFIG=") {
		t.Errorf("convoy dev did not print how to use it:\n%s", out.String())
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("convoy dev exit after SIGTERM: %v", err)
		}
	case <-time.After(90 * time.Second):
		t.Fatal("convoy dev did not exit within 90s of SIGTERM")
	}
	if _, err := os.Stat(ready); !os.IsNotExist(err) {
		t.Errorf("%s still exists after stop (err=%v)", ready, err)
	}
	if left := processesMentioning(stateDir); len(left) > 0 {
		t.Errorf("processes left running after SIGTERM: %v", left)
	}
}

// processesMentioning lists the command lines of running processes that
// name path in their arguments.
func processesMentioning(path string) []string {
	var found []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		if cmdline := strings.ReplaceAll(string(b), "\x00", " "); strings.Contains(cmdline, path) {
			found = append(found, e.Name()+": "+cmdline)
		}
	}
	return found
}
