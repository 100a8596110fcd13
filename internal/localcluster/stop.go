package localcluster

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"time"
)

// StopGrace is how long Stop waits for a process to exit after SIGTERM before it
// sends SIGKILL. A local control plane keeps no state a kill could lose that a
// graceful stop would keep (etcd's data is written as it goes), and a person who
// presses Ctrl-C expects every cluster to be gone in seconds: a kube-apiserver
// under load drains its requests for up to a minute, a controller for 30 s.
const StopGrace = 5 * time.Second

// killWait bounds the wait for a process's exit after SIGKILL.
const killWait = 10 * time.Second

// stopTiers are the order in which StopClusters stops the processes of its clusters:
// every process in a tier stops at once, and a tier begins when the one before it has
// ended. The clients first (convoy's processes, the controllers, kwok), then the
// kube-apiservers they talk to, then the etcds the kube-apiservers (and an aggregated
// API server) keep their data in, also another cluster's shared etcd.
var stopTiers = [][]string{nil, {"kube-apiserver"}, {"etcd"}}

// tierOf is the index in stopTiers of the process name; the first tier holds every
// name no other tier lists.
func tierOf(name string) int {
	for i, names := range stopTiers {
		if slices.Contains(names, name) {
			return i
		}
	}
	return 0
}

// Stop stops every process of the cluster and, when Start made the folder, removes
// it (StopClusters). It is safe to call more than once; a call while another stops
// the cluster returns once that one is done.
func (c *Cluster) Stop() error {
	return StopClusters(c)
}

// StopClusters stops the clusters together, so that stopping several takes about
// as long as stopping one: the processes of all of them stop in parallel, tier by
// tier (stopTiers: the clients, then the kube-apiservers, then the etcds, so that a
// cluster on another's shared etcd may be stopped with it), each sent SIGTERM and,
// if it has not exited after StopGrace, SIGKILL. A cluster already stopped, or being
// stopped by another call, is waited for; nil entries are skipped. It removes the
// folders that Start made.
func StopClusters(clusters ...*Cluster) error {
	tiers := make([][]*process, len(stopTiers))
	var mine, others []*Cluster
	for _, c := range clusters {
		if c == nil || slices.Contains(mine, c) || slices.Contains(others, c) {
			continue
		}
		c.mu.Lock()
		if c.stopped {
			c.mu.Unlock()
			others = append(others, c)
			continue
		}
		// From here on nothing starts in c (Run, Restart, a supervisor's restart): the
		// processes listed are all there are.
		c.stopped = true
		c.stopDone = make(chan struct{})
		procs := slices.Clone(c.processes)
		c.mu.Unlock()
		mine = append(mine, c)
		for _, p := range procs {
			t := tierOf(p.name)
			tiers[t] = append(tiers[t], p)
		}
	}
	var errs []error
	for _, tier := range tiers {
		errs = append(errs, stopAll(tier, StopGrace)...)
	}
	for _, c := range mine {
		if c.ownsDir && c.dir != "" {
			if err := os.RemoveAll(c.dir); err != nil {
				errs = append(errs, err)
			}
		}
		close(c.stopDone)
	}
	for _, c := range others {
		c.mu.Lock()
		done := c.stopDone
		c.mu.Unlock()
		if done != nil {
			<-done
		}
	}
	return errors.Join(errs...)
}

// stopAll stops the processes in parallel (process.stop) and returns the errors.
func stopAll(procs []*process, grace time.Duration) []error {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for _, p := range procs {
		wg.Go(func() {
			if err := p.stop(grace); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return errs
}

// stopError says which process did not exit, with its log (which names its cluster's
// folder).
func stopError(p *process) error {
	return fmt.Errorf("%s (pid %d, log %s) did not exit after SIGKILL", p.name, p.cmd.Process.Pid, p.log.Name())
}
