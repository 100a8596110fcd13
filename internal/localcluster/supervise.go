package localcluster

import (
	"context"
	"errors"
	"sync"
	"time"

	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/utils/clock"
)

// Restart back-off of a supervised process, the kubelet's for a container (10 s,
// doubling up to 5 minutes, reset once the container ran 10 minutes) scaled down by ten
// for a laptop: the first restart after a second, then 2 s, 4 s, … up to 30 s, and
// again after a second once a process exits more than a minute after its previous exit
// (flowcontrol.Backoff, as the kubelet's, resets after twice the cap).
const (
	RestartInitial = time.Second
	RestartMax     = 30 * time.Second
)

// RestartBackoff is the back-off of Supervise by default: RestartInitial doubling up to
// RestartMax per process name.
func RestartBackoff() *flowcontrol.Backoff { return flowcontrol.NewBackOff(RestartInitial, RestartMax) }

// EventType says what happened to a supervised process.
type EventType string

const (
	// ProcessExited: the process exited although nothing stopped it; it is started
	// again after Event.Delay.
	ProcessExited EventType = "Exited"
	// ProcessRestarted: it was started again (Event.PID).
	ProcessRestarted EventType = "Restarted"
	// ProcessReady: the restarted process is ready (its readiness check passed, or it
	// has none).
	ProcessReady EventType = "Ready"
	// RestartFailed: it could not be started again (Event.Err); another try follows
	// after Event.Delay.
	RestartFailed EventType = "RestartFailed"
)

// Event is what a supervisor reports.
type Event struct {
	Type    EventType
	Process string
	// PID is the exited process's (Exited) or the new one's (Restarted, Ready).
	PID int
	// Err is how the process exited (Exited) or why it could not start (RestartFailed).
	Err error
	// LogTail is the end of its log (Exited), and LogFile the log's path.
	LogTail, LogFile string
	// Delay is the wait before the next start (Exited, RestartFailed).
	Delay time.Duration
	// Restarts counts the restarts of this process name so far, this one included
	// (Restarted, Ready).
	Restarts int
}

// SuperviseOptions configure Supervise.
type SuperviseOptions struct {
	// Backoff paces the restarts per process name; default RestartBackoff().
	Backoff *flowcontrol.Backoff
	// OnEvent receives the events, one at a time; may be nil.
	OnEvent func(Event)
	// LogLines is how many lines of the log an Exited event carries (default 10).
	LogLines int
}

// Supervise starts every process of the cluster (those running now and those started
// later) again when it exits although nothing stopped it: a crash, a kill -9, an exit on
// an error. Restarts are paced by opts.Backoff and reported to opts.OnEvent; a
// restarted process keeps its arguments, environment, log file and readiness check.
// Stop, Restart and a newer process of the same name end a process without a restart.
// Supervision ends with ctx. Call it once.
func (c *Cluster) Supervise(ctx context.Context, opts SuperviseOptions) {
	if opts.Backoff == nil {
		opts.Backoff = RestartBackoff()
	}
	if opts.LogLines <= 0 {
		opts.LogLines = 10
	}
	s := &supervisor{c: c, ctx: ctx, opts: opts, clock: clock.RealClock{}, restarts: map[string]int{}}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.supervisor = s
	for _, p := range c.processes {
		if done, _ := p.exited(); !done {
			s.watch(p)
		}
	}
}

// supervisor restarts the processes of a cluster.
type supervisor struct {
	c     *Cluster
	ctx   context.Context
	opts  SuperviseOptions
	clock clock.Clock

	mu       sync.Mutex // serialises OnEvent and guards restarts
	restarts map[string]int
}

// watch waits in the background for p to exit and then restarts it. The caller holds
// c.mu.
func (s *supervisor) watch(p *process) {
	go func() {
		select {
		case <-s.ctx.Done():
		case <-p.done:
			s.restart(p)
		}
	}()
}

// current reports whether p is still the process of its name that the cluster means
// to run: not stopped, and not replaced by a newer one (Restart, an earlier restart).
func (s *supervisor) current(p *process) bool {
	return !s.c.stopped && s.c.newest(p.name, false) == p
}

// restart starts the exited p again after the back-off, until a start succeeds, the
// process is no longer current or supervision ends; then it waits for the new process
// to be ready.
func (s *supervisor) restart(p *process) {
	s.c.mu.Lock()
	current := s.current(p)
	s.c.mu.Unlock()
	if !current {
		return
	}
	err := p.err
	if err == nil {
		err = errors.New("exit status 0")
	}
	ev := Event{Type: ProcessExited, Process: p.name, PID: p.cmd.Process.Pid, Err: err,
		LogTail: logTail(p, s.opts.LogLines), LogFile: p.log.Name()}
	for {
		s.opts.Backoff.Next(p.name, s.opts.Backoff.Clock.Now())
		ev.Delay = s.opts.Backoff.Get(p.name)
		s.emit(ev)
		t := s.clock.NewTimer(ev.Delay)
		select {
		case <-s.ctx.Done():
			t.Stop()
			return
		case <-t.C():
		}
		s.c.mu.Lock()
		if !s.current(p) {
			s.c.mu.Unlock()
			return
		}
		np, err := s.c.startAgain(p)
		s.c.mu.Unlock()
		if err != nil {
			ev = Event{Type: RestartFailed, Process: p.name, Err: err}
			continue
		}
		s.mu.Lock()
		s.restarts[p.name]++
		n := s.restarts[p.name]
		s.mu.Unlock()
		pid := np.cmd.Process.Pid
		s.emit(Event{Type: ProcessRestarted, Process: p.name, PID: pid, Restarts: n})
		if np.ready != nil {
			// An exit meanwhile is np's own watch's to restart.
			if err := waitFor(s.ctx, p.name, []*process{np}, np.ready); err != nil {
				return
			}
		}
		s.emit(Event{Type: ProcessReady, Process: p.name, PID: pid, Restarts: n})
		return
	}
}

func (s *supervisor) emit(ev Event) {
	if s.opts.OnEvent == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.opts.OnEvent(ev)
}
