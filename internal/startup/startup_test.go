package startup

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/google/go-cmp/cmp"
)

// The attempts come 250 ms, 500 ms, 1 s, … apart, never more than 10 s.
func TestBackoffDoublesUpTo10s(t *testing.T) {
	b := Backoff()
	var got []time.Duration
	for range 9 {
		got = append(got, b.Step())
	}
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	want := []time.Duration{ms(250), ms(500), ms(1000), ms(2000), ms(4000), ms(8000), ms(10000), ms(10000), ms(10000)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("delays (-want +got):\n%s", diff)
	}
}

// The first two failures are quiet; from the third on a failure is logged unless one
// was logged less than 10 s before.
func TestShouldLog(t *testing.T) {
	cases := map[string]struct {
		attempt      int
		loggedBefore bool
		since        time.Duration
		want         bool
	}{
		"first failure":                          {attempt: 1, want: false},
		"second failure":                         {attempt: 2, want: false},
		"third failure, nothing logged yet":      {attempt: 3, want: true},
		"fourth, logged 1 s ago":                 {attempt: 4, loggedBefore: true, since: time.Second, want: false},
		"fifth, logged 9.9 s ago":                {attempt: 5, loggedBefore: true, since: 9900 * time.Millisecond, want: false},
		"sixth, logged 10 s ago":                 {attempt: 6, loggedBefore: true, since: 10 * time.Second, want: true},
		"a late attempt at the cap, 10 s apart":  {attempt: 30, loggedBefore: true, since: 10 * time.Second, want: true},
		"a late attempt, first logged (no gaps)": {attempt: 30, want: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := shouldLog(tc.attempt, tc.loggedBefore, tc.since); got != tc.want {
				t.Errorf("shouldLog(%d, %v, %s) = %v, want %v", tc.attempt, tc.loggedBefore, tc.since, got, tc.want)
			}
		})
	}
}

// A wait returns once an attempt succeeds, having logged what it waited for from the
// third failure on.
func TestUntilReturnsOnceAnAttemptSucceeds(t *testing.T) {
	var lines []string
	log := funcr.New(func(prefix, args string) { lines = append(lines, args) }, funcr.Options{})
	w := Wait{Process: "convoy test", For: "the thing", Check: "the thing's switch", Timeout: time.Minute, Log: log}
	attempts := 0
	err := w.Until(t.Context(), func(context.Context) error {
		attempts++
		if attempts < 4 {
			return errors.New("connection refused")
		}
		return nil
	})
	if err != nil {
		t.Fatalf("Until: %v", err)
	}
	if attempts != 4 {
		t.Errorf("%d attempts, want 4", attempts)
	}
	// Failures 1 and 2 are quiet, 3 is logged, then the success.
	if len(lines) != 2 || !strings.Contains(lines[0], `"msg"="Waiting" "for"="the thing" "attempt"=3`) ||
		!strings.Contains(lines[0], "connection refused") || !strings.Contains(lines[1], `"msg"="Done waiting"`) {
		t.Errorf("log lines:\n%s\nwant a Waiting line for attempt 3 with the error, then Done waiting", strings.Join(lines, "\n"))
	}
}

// Past its bound a wait gives up with an error that names the process, what it waited
// for, the bound and its flag, what to check, and the last failure.
func TestUntilGivesUpWithAClearError(t *testing.T) {
	w := Wait{Process: "convoy test", For: "the thing at https://127.0.0.1:1", Check: "that the thing runs",
		Timeout: 1500 * time.Millisecond, Log: logr.Discard()}
	start := time.Now()
	err := w.Until(t.Context(), func(context.Context) error { return errors.New("dial tcp 127.0.0.1:1: connection refused") })
	if err == nil {
		t.Fatal("no error from a wait whose attempts all fail")
	}
	if took := time.Since(start); took < 1500*time.Millisecond || took > 5*time.Second {
		t.Errorf("gave up after %s, want about 1.5 s", took)
	}
	want := "convoy test gave up after 1.5s (--startup-timeout) waiting for the thing at https://127.0.0.1:1; " +
		"check that the thing runs: dial tcp 127.0.0.1:1: connection refused"
	if diff := cmp.Diff(want, err.Error()); diff != "" {
		t.Errorf("error (-want +got):\n%s", diff)
	}
}

// A wait whose context ends (SIGTERM) returns the context's error at once.
func TestUntilEndsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	w := Wait{Process: "convoy test", For: "the thing", Timeout: time.Minute, Log: logr.Discard()}
	attempts := 0
	err := w.Until(ctx, func(context.Context) error {
		attempts++
		if attempts == 3 {
			cancel()
		}
		return errors.New("not yet")
	})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Until after cancel = %v, want context.Canceled", err)
	}
}
