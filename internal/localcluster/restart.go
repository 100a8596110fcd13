package localcluster

import (
	"fmt"
	"syscall"
	"time"
)

// Kill sends SIGKILL to the process group of the newest running process named
// name (etcd, kube-apiserver, or one started with Run) and waits until it has
// exited: a crash, for fault-injection tests. Stop skips a killed process; under
// supervision (Supervise) it is started again, as any process that exits.
func (c *Cluster) Kill(name string) error {
	c.mu.Lock()
	p := c.newest(name, true)
	c.mu.Unlock()
	if p == nil {
		return fmt.Errorf("kill %s: no running process of that name", name)
	}
	return p.kill()
}

// Restart kills the newest process named name if it still runs (as Kill) and starts it
// again with the same program, arguments, environment and log file, so that it
// listens on the same ports. It returns once the new process has started, not
// once it is ready: the caller polls what it needs.
func (c *Cluster) Restart(name string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return fmt.Errorf("restart %s: cluster is stopped", name)
	}
	p := c.newest(name, false)
	if p == nil {
		return fmt.Errorf("restart %s: no process of that name", name)
	}
	if err := p.kill(); err != nil {
		return err
	}
	_, err := c.startAgain(p)
	return err
}

// startAgain starts p's program again with the same arguments, environment, log file
// and readiness check, as the newest process of its name. The caller holds c.mu.
func (c *Cluster) startAgain(p *process) (*process, error) {
	np, err := startProcessEnv(p.name, p.cmd.Path, p.cmd.Args[1:], c.logDir, p.cmd.Env)
	if err != nil {
		return nil, err
	}
	np.ready = p.ready
	c.add(np)
	return np, nil
}

// newest is the last started process named name (that has not exited, when
// running); nil if none. The caller holds c.mu.
func (c *Cluster) newest(name string, running bool) *process {
	for i := len(c.processes) - 1; i >= 0; i-- {
		p := c.processes[i]
		if p.name != name {
			continue
		}
		if done, _ := p.exited(); !running || !done {
			return p
		}
	}
	return nil
}

// kill sends SIGKILL to the process group and waits up to 10 s for the exit; a
// process that has exited is left alone.
func (p *process) kill() error {
	if done, _ := p.exited(); done {
		return nil
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	select {
	case <-p.done:
		return nil
	case <-time.After(killWait):
		return stopError(p)
	}
}

// PID is the process id of the newest running process named name; 0 when none runs.
func (c *Cluster) PID(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p := c.newest(name, true); p != nil {
		return p.cmd.Process.Pid
	}
	return 0
}

// Running maps the name of each running process to the process id of its newest one.
func (c *Cluster) Running() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	running := map[string]int{}
	for _, p := range c.processes {
		if done, _ := p.exited(); !done {
			running[p.name] = p.cmd.Process.Pid
		}
	}
	return running
}
