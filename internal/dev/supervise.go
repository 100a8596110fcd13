package dev

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"kumodo.io/convoy/internal/localcluster"
)

// readiness keeps <state-dir>/ready true to what runs. The file is written once the
// environment is ready; while a supervised process is down (it exited and waits for its
// restart, or was restarted and is not ready yet) it is removed, and written again once
// every process is ready. It holds the time it was written, then a line per process:
// "<name> pid=<pid> restarts=<n>", where a process of a local cluster is named
// "<cluster>/<process>" (dev-1/kube-apiserver). It also prints what the supervisor
// reports.
type readiness struct {
	path     string
	out      io.Writer
	clusters []supervised

	mu       sync.Mutex
	ready    bool            // the environment became ready (markReady)
	closed   bool            // dev is stopping: no more writes
	down     map[string]bool // processes down now
	restarts map[string]int
}

// supervised is a cluster whose processes the ready file lists, each name prefixed.
type supervised struct {
	prefix  string
	cluster *localcluster.Cluster
}

func newReadiness(path string, out io.Writer) *readiness {
	return &readiness{path: path, out: out, down: map[string]bool{}, restarts: map[string]int{}}
}

// supervise supervises cluster's processes (localcluster.Supervise) until ctx ends; the
// ready file and dev's messages name them with prefix ("" for the host, "dev-1/" for a
// local cluster).
func (r *readiness) supervise(ctx context.Context, prefix string, cluster *localcluster.Cluster) {
	r.mu.Lock()
	r.clusters = append(r.clusters, supervised{prefix: prefix, cluster: cluster})
	r.mu.Unlock()
	cluster.Supervise(ctx, localcluster.SuperviseOptions{OnEvent: func(ev localcluster.Event) {
		ev.Process = prefix + ev.Process
		r.event(ev)
	}})
}

// markReady writes the ready file unless a process is down (then its Ready event will).
func (r *readiness) markReady() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ready = true
	if len(r.down) > 0 {
		return nil
	}
	return r.write()
}

// close removes the ready file for good.
func (r *readiness) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	_ = os.Remove(r.path)
}

// event is localcluster's SuperviseOptions.OnEvent.
func (r *readiness) event(ev localcluster.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	switch ev.Type {
	case localcluster.ProcessExited:
		fmt.Fprintf(r.out, "%s (pid %d) exited (%v); starting it again in %s. The end of its log (%s):\n%s\n",
			ev.Process, ev.PID, ev.Err, ev.Delay, ev.LogFile, indent(ev.LogTail))
		r.down[ev.Process] = true
		if err := os.Remove(r.path); err == nil {
			fmt.Fprintf(r.out, "convoy dev is not ready while %s is down (removed %s)\n", ev.Process, r.path)
		}
	case localcluster.RestartFailed:
		fmt.Fprintf(r.out, "Could not start %s again: %v; trying again in %s\n", ev.Process, ev.Err, ev.Delay)
	case localcluster.ProcessRestarted:
		r.restarts[ev.Process] = ev.Restarts
		fmt.Fprintf(r.out, "Started %s again (pid %d, restart %d)\n", ev.Process, ev.PID, ev.Restarts)
	case localcluster.ProcessReady:
		delete(r.down, ev.Process)
		fmt.Fprintf(r.out, "%s is ready again\n", ev.Process)
		if r.ready && len(r.down) == 0 {
			if err := r.write(); err != nil {
				fmt.Fprintf(r.out, "Could not write %s: %v\n", r.path, err)
				return
			}
			fmt.Fprintf(r.out, "convoy dev is ready again (%s)\n", r.path)
		}
	}
}

// write writes the ready file at once (a reader never sees half of it). The caller
// holds r.mu.
func (r *readiness) write() error {
	if r.closed {
		return errors.New("convoy dev is stopping")
	}
	running := map[string]int{}
	for _, c := range r.clusters {
		for name, pid := range c.cluster.Running() {
			running[c.prefix+name] = pid
		}
	}
	names := make([]string, 0, len(running))
	for name := range running {
		names = append(names, name)
	}
	slices.Sort(names)
	var b strings.Builder
	b.WriteString(time.Now().UTC().Format(time.RFC3339) + "\n")
	for _, name := range names {
		fmt.Fprintf(&b, "%s pid=%d restarts=%d\n", name, running[name], r.restarts[name])
	}
	tmp := r.path + ".tmp"
	if err := os.WriteFile(tmp, []byte(b.String()), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, r.path)
}

// indent indents each line of s by four spaces.
func indent(s string) string {
	if s == "" {
		return "    (empty)"
	}
	return "    " + strings.ReplaceAll(s, "\n", "\n    ")
}
