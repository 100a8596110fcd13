package localcluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"
)

// process is one running component of the control plane.
type process struct {
	name string
	cmd  *exec.Cmd
	log  *os.File
	done chan struct{} // closed when the process has exited
	err  error         // exit error, valid after done is closed
	// ready, when set, says whether the process is ready; a supervisor polls it after a
	// restart (supervise.go).
	ready func(context.Context) bool
}

// spawnRequests are served by one goroutine that holds its OS thread for the
// life of the program. Pdeathsig fires when the thread that started a child
// ends, not the process; starting every child from a thread that never ends
// makes the children die exactly when this process dies, also by SIGKILL.
var spawnRequests = make(chan spawnRequest)

type spawnRequest struct {
	cmd   *exec.Cmd
	reply chan error
}

func init() {
	go func() {
		runtime.LockOSThread() // never unlocked: the thread lives as long as the process
		for r := range spawnRequests {
			r.reply <- r.cmd.Start()
		}
	}()
}

// startProcess starts bin with args, its output appended to logDir/<name>.log.
func startProcess(name, bin string, args []string, logDir string, env ...string) (*process, error) {
	return startProcessEnv(name, bin, args, logDir, append(os.Environ(), env...))
}

// startProcessEnv is startProcess with the whole environment of the process.
func startProcessEnv(name, bin string, args []string, logDir string, env []string) (*process, error) {
	logFile, err := os.OpenFile(filepath.Join(logDir, name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open log of %s: %w", name, err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	fmt.Fprintf(logFile, "--- %s %s %q\n", time.Now().UTC().Format(time.RFC3339), bin, args)

	reply := make(chan error)
	spawnRequests <- spawnRequest{cmd: cmd, reply: reply}
	if err := <-reply; err != nil {
		_ = logFile.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, log: logFile, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		_ = logFile.Close()
		close(p.done)
	}()
	return p, nil
}

// exited reports whether the process has ended, and how.
func (p *process) exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.err
	default:
		return false, nil
	}
}

// stop sends SIGTERM to the process group, waits up to grace, then kills it.
func (p *process) stop(grace time.Duration) error {
	if ok, _ := p.exited(); ok {
		return nil
	}
	pgid := p.cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		select {
		case <-p.done:
		case <-time.After(killWait):
			return stopError(p)
		}
	}
	// Anything the process left in its group goes too.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	return nil
}

// waitFor polls check every interval until it returns true, the context ends,
// or one of the watched processes exits (then its log tail is in the error).
func waitFor(ctx context.Context, what string, watched []*process, check func(context.Context) bool) error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		if check(ctx) {
			return nil
		}
		for _, p := range watched {
			if ok, err := p.exited(); ok {
				if err == nil {
					err = errors.New("exit status 0")
				}
				return fmt.Errorf("%s exited while waiting for %s (%w); the end of its log:\n%s", p.name, what, err, logTail(p, 15))
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w", what, errors.Join(ctx.Err(), context.Cause(ctx)))
		case <-tick.C:
		}
	}
}

// logTail returns the last n lines of the process's log.
func logTail(p *process, n int) string {
	b, _ := os.ReadFile(p.log.Name())
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
