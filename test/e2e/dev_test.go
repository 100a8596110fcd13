package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"kumodo.io/convoy/internal/localcluster"
	"kumodo.io/convoy/internal/testenv"
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
// <state-dir>/kubeconfig, run the example of the usage notes (the manual
// Release waits for a sync, the printed raw sync applies it, the automatic one
// applies by itself, the observer reports it Healthy), and on SIGTERM end with
// nothing left running (the controller, the observer and the chart repository
// included) and the ready file gone.
func TestDevReachesReadyAndStopsCleanly(t *testing.T) {
	bin := buildConvoy(t)
	kubeBin, err := localcluster.BinDir()
	if err != nil {
		t.Fatal(err)
	}
	stateDir := filepath.Join(t.TempDir(), "state")
	// A free port, not the default 8879, so that a `make dev` beside the tests
	// does not collide; dev then points the example at it.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	chartsAddr := l.Addr().String()
	chartsURL := "http://" + chartsAddr
	l.Close()
	out := &testenv.SyncBuffer{}
	cmd := exec.Command(bin, "dev", "--state-dir", stateDir, "--nodes", "2", "--charts-addr", chartsAddr)
	cmd.Stdout, cmd.Stderr = out, out
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

	getNodes := exec.Command(filepath.Join(kubeBin, "kubectl"), "--kubeconfig", filepath.Join(stateDir, "kubeconfig"),
		"get", "nodes", "--no-headers")
	nodes, err := getNodes.CombinedOutput()
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
	kubeconfig := filepath.Join(stateDir, "kubeconfig")
	// kubectl returns the standard output; the error holds the standard error.
	kubectl := func(args ...string) (string, error) {
		var stdout, stderr bytes.Buffer
		c := exec.Command(filepath.Join(kubeBin, "kubectl"), append([]string{"--kubeconfig", kubeconfig}, args...)...)
		c.Stdout, c.Stderr = &stdout, &stderr
		if err := c.Run(); err != nil {
			return strings.TrimSpace(stdout.String()), fmt.Errorf("%w: %s", err, strings.TrimSpace(stderr.String()))
		}
		return strings.TrimSpace(stdout.String()), nil
	}
	// applyExample applies examples/<file> with the chart repository of this run.
	root, _ := localcluster.RepoRoot()
	applyExample := func(file string) {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(root, "examples", file))
		if err != nil {
			t.Fatal(err)
		}
		c := exec.Command(filepath.Join(kubeBin, "kubectl"), "--kubeconfig", kubeconfig, "apply", "-f", "-")
		c.Stdin = strings.NewReader(strings.ReplaceAll(string(b), "http://127.0.0.1:8879", chartsURL))
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("kubectl apply -f examples/%s: %v\n%s", file, err, out)
		}
	}
	// until polls kubectl args until its output is want.
	until := func(what, want string, timeout time.Duration, args ...string) {
		t.Helper()
		var got string
		err := wait.PollUntilContextTimeout(t.Context(), 250*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
			got, _ = kubectl(args...)
			return got == want, nil
		})
		if err != nil {
			t.Fatalf("%s: kubectl %s = %q, want %q", what, strings.Join(args, " "), got, want)
		}
	}
	applied := `jsonpath={.status.conditions[?(@.type=="Applied")].status}/{.status.conditions[?(@.type=="Applied")].reason}`
	available := `jsonpath={.status.conditions[?(@.type=="Available")].status}`

	// dev applied the example: a manual Release that the controller renders and
	// holds until a sync.
	until("the example Release waits for a sync", "False/WaitingForSync", 2*time.Minute,
		"get", "release", "hello", "-n", "demo", "-o", applied)
	if got, err := kubectl("get", "deployments", "-n", "demo", "-o", "name"); err != nil || got != "" {
		t.Fatalf("before the sync, deployments in demo: %q (err %v), want none", got, err)
	}
	// convoy's API is served through the host kube-apiserver: kubectl apply works
	// on Releases, and the example applies unchanged.
	applyExample("release-manual.yaml")
	releases, err := kubectl("get", "releases", "-A", "--no-headers")
	if err != nil || !strings.HasPrefix(releases, "demo") || !strings.Contains(releases, "hello") {
		t.Fatalf("kubectl get releases -A: %v\n%s", err, releases)
	}
	// The sync, in the raw form the usage notes print.
	syncPath := "/apis/convoy.kumodo.io/v1alpha1/namespaces/demo/releases/hello/sync"
	if !strings.Contains(out.String(), "kubectl create --raw "+syncPath+" -f /dev/null") {
		t.Errorf("convoy dev did not print the sync command:\n%s", out.String())
	}
	if b, err := kubectl("create", "--raw", syncPath, "-f", "/dev/null"); err != nil {
		t.Fatalf("kubectl create --raw %s: %v\n%s", syncPath, err, b)
	}
	until("the Deployment of the synced Release", "True", 2*time.Minute,
		"get", "deployment", "hello", "-n", "demo", "-o", available)
	until("the synced Release", "True/Applied", time.Minute,
		"get", "release", "hello", "-n", "demo", "-o", applied)
	// dev runs the observer under its own identity: its health data in the
	// ReleaseInventory makes the Release Healthy.
	healthy := `jsonpath={.status.conditions[?(@.type=="Healthy")].status}/{.status.conditions[?(@.type=="Healthy")].reason}`
	until("the observer's health data", "Healthy", time.Minute,
		"get", "releaseinventories", "hello", "-n", "demo", "-o", "jsonpath={.status.health}")
	until("the synced Release is Healthy", "True/Healthy", time.Minute,
		"get", "release", "hello", "-n", "demo", "-o", healthy)
	if nodes, err := kubectl("get", "pods", "-n", "demo", "-l", "app.kubernetes.io/instance=hello",
		"-o", "jsonpath={.items[*].spec.nodeName}"); err != nil || !strings.HasPrefix(nodes, "kwok-node-") || len(strings.Fields(nodes)) != 2 {
		t.Errorf("pods of hello run on %q (err %v), want 2 on kwok nodes", nodes, err)
	}
	// The automatic example applies without a sync.
	applyExample("release-automatic.yaml")
	until("the Deployment of the automatic Release", "True", 2*time.Minute,
		"get", "deployment", "hello-auto", "-n", "demo", "-o", available)
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
	// The chart repository (inside the dev process) let go of its port.
	if l, err := net.Listen("tcp", chartsAddr); err != nil {
		t.Errorf("the chart repository's address %s is still bound after stop: %v", chartsAddr, err)
	} else {
		l.Close()
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
