package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"

	"kumodo.io/convoy/internal/apiserver/apiservertest"
	"kumodo.io/convoy/internal/localcluster"
	"kumodo.io/convoy/internal/testenv"
)

// runMainEnv, set in a test binary's environment, makes it run convoy's main with its
// arguments instead of the tests: the tests start convoy's processes as the real
// programs they are (exit status, output) without a separate build.
const runMainEnv = "CONVOY_TEST_RUN_MAIN"

// host is the local control plane of the integration tests, with convoy's API served
// by an in-process convoy apiserver through the aggregator; started by the first test
// that needs it (hostCluster), so that the unit tests and the generated reference
// (make generate) run without one, and stopped after the tests.
var host struct {
	once    sync.Once
	cluster *localcluster.Cluster
	err     error
	stops   []func()
}

// hostCluster is host's control plane; it skips t with -short.
func hostCluster(t *testing.T) *localcluster.Cluster {
	t.Helper()
	testenv.Integration(t)
	host.once.Do(func() {
		ctx := context.Background()
		if host.cluster, host.err = localcluster.Start(ctx, localcluster.Options{}); host.err != nil {
			return
		}
		host.stops = append(host.stops, func() { _ = host.cluster.Stop() })
		stop, err := apiservertest.Start(ctx, host.cluster, apiservertest.Options{
			Namespace: "convoy-cmd", ServiceName: "convoy-apiserver-cmd", EtcdPrefix: "/convoy-cmd",
			RegistrationTimeout: 2 * time.Minute, WaitForDiscovery: true,
		})
		if host.err = err; err == nil {
			host.stops = append(host.stops, stop)
		}
	})
	if host.err != nil {
		t.Fatalf("start the local control plane with convoy's API: %v", host.err)
	}
	return host.cluster
}

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) != "" {
		main()
		os.Exit(0)
	}
	testenv.QuietLogs()
	code := m.Run()
	for i := len(host.stops) - 1; i >= 0; i-- {
		host.stops[i]()
	}
	os.Exit(code)
}

// convoyProcess is `convoy <args>` run by the test binary (runMainEnv).
type convoyProcess struct {
	cmd  *exec.Cmd
	out  *testenv.SyncBuffer
	done chan struct{}
	err  error // valid once done is closed
}

// startConvoy starts `convoy args...`; it is killed at the end of the test (and dies
// with the test binary).
func startConvoy(t *testing.T, args ...string) *convoyProcess {
	t.Helper()
	p := &convoyProcess{cmd: exec.Command(os.Args[0], args...), out: &testenv.SyncBuffer{}, done: make(chan struct{})}
	p.cmd.Env = append(os.Environ(), runMainEnv+"=1")
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.done
		if t.Failed() {
			t.Logf("convoy %v:\n%s", args, p.out.String())
		}
	})
	return p
}

// exited reports whether the process has exited, and how.
func (p *convoyProcess) exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.err
	default:
		return false, nil
	}
}

// waitExit waits at most timeout for the process to exit and returns its exit code.
func (p *convoyProcess) waitExit(t *testing.T, timeout time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(timeout):
		t.Fatalf("convoy %v still runs after %s", p.cmd.Args[1:], timeout)
	}
	var exit *exec.ExitError
	if errors.As(p.err, &exit) {
		return exit.ExitCode()
	}
	if p.err != nil {
		t.Fatalf("convoy %v: %v", p.cmd.Args[1:], p.err)
	}
	return 0
}

func freePort(t *testing.T) int {
	t.Helper()
	return testenv.FreePort(t)
}

// poll calls cond every 100 ms until it holds, for at most timeout; then it fails t
// with what cond said last.
func poll(t *testing.T, what string, timeout time.Duration, cond func(context.Context) (bool, string)) {
	t.Helper()
	testenv.Eventually(t, t.Context(), what, timeout, func() (bool, string) { return cond(t.Context()) })
}
