package chaos

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// eventLog writes what the harness does, each line with the time since the run began,
// and counts the faults by kind for the report.
type eventLog struct {
	mu     sync.Mutex
	out    io.Writer
	start  time.Time
	faults map[string]int
}

func newEventLog(out io.Writer) *eventLog {
	return &eventLog{out: out, start: time.Now(), faults: map[string]int{}}
}

func (l *eventLog) since() time.Duration { return time.Since(l.start).Truncate(time.Millisecond) }

func (l *eventLog) printf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.out, "[%9s] %s\n", l.since(), fmt.Sprintf(format, args...))
}

// fault logs a fault of kind with its moment and counts it.
func (l *eventLog) fault(kind, format string, args ...any) {
	l.mu.Lock()
	l.faults[kind]++
	l.mu.Unlock()
	l.printf("FAULT %s: %s", kind, fmt.Sprintf(format, args...))
}

// faultCounts is a copy of the faults by kind.
func (l *eventLog) faultCounts() map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[string]int, len(l.faults))
	for k, v := range l.faults {
		out[k] = v
	}
	return out
}
