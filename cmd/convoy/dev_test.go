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

// devRun is a `convoy dev` of a test (dev.Run in this process; convoy's processes are
// the test binary, which runs main with runMainEnv).
type devRun struct {
	t *testing.T
	// ctx lasts until dev is stopped; out is what dev printed.
	ctx     context.Context
	out     *testenv.SyncBuffer
	cancel  context.CancelFunc
	done    chan error
	stopped bool
}

// startDev runs dev.Run with o (its output, components and convoy's binary set here)
// until stop or the end of the test, waits for at most within until dev's ready file
// is there (what names the wait) and returns the processes it lists. dev's output is
// in the test's log if the test fails.
func startDev(t *testing.T, o dev.Options, what string, within time.Duration) (*devRun, map[string][2]int) {
	t.Helper()
	d := &devRun{t: t, out: &testenv.SyncBuffer{}, done: make(chan error, 1)}
	d.ctx, d.cancel = context.WithCancel(t.Context())
	o.Out, o.Components, o.Convoy, o.ConvoyEnv = d.out, dev.Components(), os.Args[0], []string{runMainEnv + "=1"}
	go func() { d.done <- dev.Run(d.ctx, o) }()
	t.Cleanup(func() {
		d.cancel()
		if !d.stopped {
			<-d.done
		}
		if t.Failed() {
			t.Logf("convoy dev output:\n%s", d.out.String())
		}
	})
	var procs map[string][2]int
	poll(t, what, within, func(context.Context) (bool, string) {
		select {
		case err := <-d.done:
			d.stopped = true
			t.Fatalf("convoy dev ended before ready: %v", err)
		default:
		}
		var ok bool
		procs, ok = readyProcesses(filepath.Join(o.StateDir, dev.ReadyFile))
		return ok, "no ready file"
	})
	return d, procs
}

// stop stops dev and waits, for at most 2 minutes, until it has; it returns how long
// dev took to stop.
func (d *devRun) stop() time.Duration {
	d.t.Helper()
	d.cancel()
	d.stopped = true
	stopping := time.Now()
	select {
	case err := <-d.done:
		if err != nil {
			d.t.Errorf("convoy dev: %v", err)
		}
	case <-time.After(2 * time.Minute):
		d.t.Fatal("convoy dev did not stop within 2 minutes")
	}
	return time.Since(stopping)
}

// Decision 0153: `convoy dev` supervises what it starts. convoy observer killed with SIGKILL
// is started again after the back-off; dev says so (how it exited, the end of its log,
// the restart), the ready file is gone while the observer is down and back once it is
// ready again, naming the new process and its restart.
func TestDevRestartsAKilledProcess(t *testing.T) {
	testenv.Integration(t)
	stateDir := filepath.Join(t.TempDir(), "dev")
	readyPath := filepath.Join(stateDir, dev.ReadyFile)
	d, before := startDev(t, dev.Options{StateDir: stateDir, Nodes: 1}, "convoy dev ready", 5*time.Minute)
	out := d.out
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

	d.stop()
	if _, ok := readyProcesses(readyPath); ok {
		t.Errorf("%s is still there after dev stopped", readyPath)
	}
}
