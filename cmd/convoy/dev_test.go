package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"kumodo.io/convoy/internal/dev"
	"kumodo.io/convoy/internal/testenv"
)

// readyLine is a process's line in dev's ready file.
var readyLine = regexp.MustCompile(`(?m)^(\S+) pid=(\d+) restarts=(\d+)$`)

// readyProcesses reads dev's ready file: each process's pid and restarts; ok false while
// there is no ready file.
func readyProcesses(path string) (procs map[string][2]int, ok bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, false
	}
	procs = map[string][2]int{}
	for _, m := range readyLine.FindAllStringSubmatch(string(b), -1) {
		pid, _ := strconv.Atoi(m[2])
		restarts, _ := strconv.Atoi(m[3])
		procs[m[1]] = [2]int{pid, restarts}
	}
	return procs, true
}

// Issue 32: `convoy dev` supervises what it starts. convoy observer killed with SIGKILL
// is started again after the back-off; dev says so (how it exited, the end of its log,
// the restart), the ready file is gone while the observer is down and back once it is
// ready again, naming the new process and its restart.
func TestDevRestartsAKilledProcess(t *testing.T) {
	testenv.Integration(t)
	stateDir := filepath.Join(t.TempDir(), "dev")
	readyPath := filepath.Join(stateDir, dev.ReadyFile)
	out := &testenv.SyncBuffer{}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- dev.Run(ctx, dev.Options{StateDir: stateDir, Nodes: 1, Out: out, Components: dev.Components(),
			Convoy: os.Args[0], ConvoyEnv: []string{runMainEnv + "=1"}})
	}()
	stopped := false
	t.Cleanup(func() {
		cancel()
		if !stopped {
			<-done
		}
		if t.Failed() {
			t.Logf("convoy dev output:\n%s", out.String())
		}
	})

	var before map[string][2]int
	poll(t, "convoy dev ready", 5*time.Minute, func(context.Context) (bool, string) {
		select {
		case err := <-done:
			stopped = true
			t.Fatalf("convoy dev ended before ready: %v", err)
		default:
		}
		var ok bool
		before, ok = readyProcesses(readyPath)
		return ok, "no ready file"
	})
	for _, name := range []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok",
		"convoy-apiserver", "convoy-controller", "convoy-observer"} {
		if p, ok := before[name]; !ok || p[0] == 0 || p[1] != 0 {
			t.Errorf("the ready file's %s: %v, want its pid and restarts=0 (file: %v)", name, p, before)
		}
	}

	pid := before["convoy-observer"][0]
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	poll(t, "no ready file while the observer is down", 30*time.Second, func(context.Context) (bool, string) {
		_, ok := readyProcesses(readyPath)
		return !ok, "the ready file is still there"
	})
	var after map[string][2]int
	poll(t, "the ready file back once the observer is ready again", 3*time.Minute, func(context.Context) (bool, string) {
		var ok bool
		after, ok = readyProcesses(readyPath)
		return ok, "no ready file"
	})
	if p := after["convoy-observer"]; p[0] == 0 || p[0] == pid || p[1] != 1 {
		t.Errorf("the ready file's convoy-observer after the kill: %v, want a new pid (not %d) and restarts=1", p, pid)
	}
	for name, p := range before {
		if name != "convoy-observer" && after[name] != p {
			t.Errorf("the ready file's %s changed from %v to %v: only the observer was killed", name, p, after[name])
		}
	}
	printed := out.String()
	for _, want := range []string{
		fmt.Sprintf("convoy-observer (pid %d) exited (signal: killed); starting it again in 1s. The end of its log (%s):\n    ",
			pid, filepath.Join(stateDir, "cluster", "logs", "convoy-observer.log")),
		"convoy dev is not ready while convoy-observer is down (removed " + readyPath + ")\n",
		fmt.Sprintf("Started convoy-observer again (pid %d, restart 1)\n", after["convoy-observer"][0]),
		"convoy-observer is ready again\n",
		"convoy dev is ready again (" + readyPath + ")\n",
	} {
		if !strings.Contains(printed, want) {
			t.Errorf("convoy dev did not print %q", want)
		}
	}

	cancel()
	stopped = true
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("convoy dev: %v", err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("convoy dev did not stop within 2 minutes")
	}
	if _, ok := readyProcesses(readyPath); ok {
		t.Errorf("%s is still there after dev stopped", readyPath)
	}
}
