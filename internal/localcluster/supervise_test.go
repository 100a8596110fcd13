package localcluster_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/flowcontrol"
	testingclock "k8s.io/utils/clock/testing"

	"kumodo.io/convoy/internal/localcluster"
)

// The restart back-off of a supervised process is the kubelet's scaled down by ten: 1 s,
// doubling up to 30 s, and 1 s again once a process exits more than a minute after its
// previous exit.
func TestRestartBackoff(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC)
	cases := map[string]struct {
		exits []time.Duration // when the process exited, from t0
		want  []time.Duration // the wait before each restart
	}{
		"a crash loop doubles up to 30 s": {
			exits: []time.Duration{0, 2 * time.Second, 5 * time.Second, 10 * time.Second, 19 * time.Second, 36 * time.Second, 67 * time.Second, 98 * time.Second},
			want:  []time.Duration{1 * time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 30 * time.Second, 30 * time.Second, 30 * time.Second},
		},
		"an exit a minute after the previous one waits 1 s again": {
			exits: []time.Duration{0, 2 * time.Second, 63 * time.Second},
			want:  []time.Duration{1 * time.Second, 2 * time.Second, 1 * time.Second},
		},
		"an exit exactly a minute later still backs off": {
			exits: []time.Duration{0, 60 * time.Second},
			want:  []time.Duration{1 * time.Second, 2 * time.Second},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			clk := testingclock.NewFakeClock(t0)
			b := localcluster.RestartBackoff()
			b.Clock = clk
			var got []time.Duration
			for _, at := range tc.exits {
				clk.SetTime(t0.Add(at))
				b.Next("convoy-observer", clk.Now())
				got = append(got, b.Get("convoy-observer"))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("restart delays (-want +got):\n%s", diff)
			}
		})
	}
}

// events collects what a supervisor reports.
type events struct {
	mu  sync.Mutex
	all []localcluster.Event
}

func (e *events) add(ev localcluster.Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.all = append(e.all, ev)
}

func (e *events) list() []localcluster.Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]localcluster.Event(nil), e.all...)
}

// types lists the event types of process name.
func (e *events) types(name string) []localcluster.EventType {
	var ts []localcluster.EventType
	for _, ev := range e.list() {
		if ev.Process == name {
			ts = append(ts, ev.Type)
		}
	}
	return ts
}

// Under supervision a process killed with SIGKILL (kube-apiserver here, and one started
// with Run) is started again after the back-off and reported (how it exited, the end of
// its log), kube-apiserver answers again at the same address, a process replaced by
// Restart is not started twice, and after Stop nothing is restarted.
func TestSuperviseRestartsAKilledProcess(t *testing.T) {
	c, err := localcluster.Start(t.Context(), localcluster.Options{})
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = c.Stop()
		}
	})
	// A process beside the cluster, ready once it has written its file.
	readyFile := t.TempDir() + "/sleeper-ready"
	err = c.Run(t.Context(), localcluster.Process{Name: "sleeper", Path: "/bin/sh",
		Args: []string{"-c", "echo sleeping; touch " + readyFile + "; exec sleep 600"},
		Ready: func(context.Context) bool {
			_, err := os.Stat(readyFile)
			return err == nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	var got events
	c.Supervise(t.Context(), localcluster.SuperviseOptions{OnEvent: got.add})

	waitTypes := func(name string, want ...localcluster.EventType) {
		t.Helper()
		err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, 2*time.Minute, true, func(context.Context) (bool, error) {
			return cmp.Equal(want, got.types(name)), nil
		})
		if err != nil {
			t.Fatalf("events of %s: %v, want %v (all: %+v)", name, got.types(name), want, got.list())
		}
	}

	// kill -9 of the sleeper's process.
	pid := c.PID("sleeper")
	if err := os.Remove(readyFile); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitTypes("sleeper", localcluster.ProcessExited, localcluster.ProcessRestarted, localcluster.ProcessReady)
	exited := got.list()[0]
	if exited.PID != pid || exited.Err == nil || exited.Err.Error() != "signal: killed" || exited.Delay != localcluster.RestartInitial ||
		!strings.Contains(exited.LogTail, "sleeping") || !strings.HasSuffix(exited.LogFile, "/sleeper.log") {
		t.Errorf("Exited event %+v: want pid %d, signal: killed, a delay of %s, the log's end with the line sleeping",
			exited, pid, localcluster.RestartInitial)
	}
	if np := c.PID("sleeper"); np == 0 || np == pid {
		t.Errorf("sleeper's pid after the restart: %d (was %d), want a new running process", np, pid)
	}

	// kill -9 of kube-apiserver: back at the same address, with its data.
	if err := c.Kill("kube-apiserver"); err != nil {
		t.Fatal(err)
	}
	waitTypes("kube-apiserver", localcluster.ProcessExited, localcluster.ProcessRestarted, localcluster.ProcessReady)
	if _, err := clientset(t, c).CoreV1().Namespaces().Get(t.Context(), "default", metav1.GetOptions{}); err != nil {
		t.Errorf("kube-apiserver at %s after its restart: %v", c.Host(), err)
	}

	// Restart replaces etcd on purpose: no supervisor restart on top.
	before := len(c.PIDs())
	if err := c.Restart("etcd"); err != nil {
		t.Fatal(err)
	}
	// Stop: nothing restarted after it, nothing left.
	stopped = true
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	if ts := got.types("etcd"); len(ts) > 0 {
		t.Errorf("events of etcd after Restart and Stop: %v, want none", ts)
	}
	if after := len(c.PIDs()); after != before+1 {
		t.Errorf("%d processes after Restart(etcd) and Stop, want %d (one more than before)", after, before+1)
	}
	for _, name := range []string{"sleeper", "kube-apiserver", "etcd"} {
		if pid := c.PID(name); pid != 0 {
			t.Errorf("%s runs (pid %d) after Stop", name, pid)
		}
	}
}

// A process whose start fails is tried again after the back-off, reported as
// RestartFailed.
func TestSuperviseRetriesAFailedStart(t *testing.T) {
	c, err := localcluster.Start(t.Context(), localcluster.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Stop() })
	bin := t.TempDir() + "/flaky"
	if err := os.WriteFile(bin, []byte("#!/bin/sh\nexec sleep 600\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := c.Run(t.Context(), localcluster.Process{Name: "flaky", Path: bin}); err != nil {
		t.Fatal(err)
	}
	var got events
	clk := testingclock.NewFakeClock(time.Now())
	backoff := flowcontrol.NewFakeBackOff(100*time.Millisecond, time.Second, clk)
	c.Supervise(t.Context(), localcluster.SuperviseOptions{OnEvent: got.add, Backoff: backoff})
	// The program goes away, then the process dies: the restart cannot start it.
	if err := os.Rename(bin, bin+".away"); err != nil {
		t.Fatal(err)
	}
	if err := c.Kill("flaky"); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(t.Context(), 20*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		ts := got.types("flaky")
		return len(ts) >= 2 && ts[len(ts)-1] == localcluster.RestartFailed, nil
	})
	if err != nil {
		t.Fatalf("events of flaky: %v, want Exited then RestartFailed", got.types("flaky"))
	}
	if err := os.Rename(bin+".away", bin); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(t.Context(), 20*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		ts := got.types("flaky")
		return ts[len(ts)-1] == localcluster.ProcessReady, nil
	})
	if err != nil {
		t.Fatalf("events of flaky: %v, want it started again once the program is back", got.types("flaky"))
	}
	for _, ev := range got.list() {
		if ev.Type == localcluster.RestartFailed && (ev.Err == nil || !errors.Is(ev.Err, os.ErrNotExist) && !strings.Contains(ev.Err.Error(), "no such file")) {
			t.Errorf("RestartFailed event %+v: want the start's error (no such file)", ev)
		}
	}
	if pid := c.PID("flaky"); pid == 0 {
		t.Errorf("flaky does not run after events %v", got.types("flaky"))
	}
}
