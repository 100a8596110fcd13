package localcluster

import (
	"context"
	"fmt"
)

// Process describes a program to run beside the control plane, such as one of
// convoy's own processes in `convoy dev`.
type Process struct {
	// Name names the process and its log file, <LogDir>/<Name>.log.
	Name string
	// Path is the program; Args its arguments; Env is added to this process's environment.
	Path string
	Args []string
	Env  []string
	// Ready, when set, is polled until it returns true; Run fails if the
	// process exits first or ctx ends.
	Ready func(context.Context) bool
}

// Run starts p in the cluster's process set: it dies with the cluster's owner
// and Stop stops it before the control plane (newest first).
func (c *Cluster) Run(ctx context.Context, p Process) error {
	c.mu.Lock()
	if c.stopped {
		c.mu.Unlock()
		return fmt.Errorf("start %s: cluster is stopped", p.Name)
	}
	proc, err := startProcess(p.Name, p.Path, p.Args, c.logDir, p.Env...)
	if err == nil {
		c.processes = append(c.processes, proc)
	}
	c.mu.Unlock()
	if err != nil {
		return err
	}
	c.step("Started %s (log: %s/%s.log)", p.Name, c.logDir, p.Name)
	if p.Ready == nil {
		return nil
	}
	return waitFor(ctx, p.Name, []*process{proc}, p.Ready)
}
