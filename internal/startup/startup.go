// Package startup decides how convoy's processes (apiserver, controller, observer) wait
// at start for what they need of the host cluster: kube-apiserver, its discovery,
// convoy's API. As kube-controller-manager does, they retry with a back-off and log what
// they wait for instead of exiting, and give up only after a bound (--startup-timeout)
// with an error that says what they waited for and what to check. The package paces and
// decides; what an attempt does is the caller's.
package startup

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/clock"
)

// DefaultTimeout is the default of --startup-timeout: how long a process waits at start
// for the host before it exits. The startupProbe of deploy/ and the chart allows a
// little more (36 × 10 s), so that the kubelet does not kill a process that waits on
// purpose.
const DefaultTimeout = 5 * time.Minute

// FlagName is the flag of the bound, named in the error at the end of a wait.
const FlagName = "startup-timeout"

// Backoff is the pace of the attempts: the first retry after 250 ms, then twice as long
// each time, at most 10 s apart (kube-apiserver back after an outage is seen within 10 s).
func Backoff() wait.Backoff {
	return wait.Backoff{Duration: 250 * time.Millisecond, Factor: 2, Cap: 10 * time.Second, Steps: math.MaxInt32}
}

// quietAttempts are the failed attempts that are not logged: a process started together
// with kube-apiserver or convoy apiserver commonly fails one or two (about 0.75 s).
const quietAttempts = 2

// logEvery is the least time between two logged failures.
const logEvery = 10 * time.Second

// shouldLog decides whether the failure of attempt (counted from 1) is logged, given
// whether one was logged before and how long ago.
func shouldLog(attempt int, loggedBefore bool, sinceLogged time.Duration) bool {
	if attempt <= quietAttempts {
		return false
	}
	return !loggedBefore || sinceLogged >= logEvery
}

// Wait says what a process waits for at start and for how long.
type Wait struct {
	// Process names the process: "convoy controller".
	Process string
	// For says what it waits for: "convoy.kumodo.io/v1alpha1 in the discovery of https://…".
	For string
	// Check says what to check when it gives up.
	Check string
	// Timeout bounds the wait (--startup-timeout); 0: DefaultTimeout.
	Timeout time.Duration
	// Log receives a line per logged failure (shouldLog).
	Log logr.Logger
	// Clock paces the attempts; nil: the real clock.
	Clock clock.Clock
}

// Until calls attempt until it returns nil, with Backoff between failures, and returns
// nil then. Each attempt's context ends with the wait. When Timeout has passed it
// returns an error naming the process, what it waited for, the last failure, what to
// check and the flag; when ctx ends first, ctx's error.
func (w Wait) Until(ctx context.Context, attempt func(context.Context) error) error {
	clk := w.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	timeout := w.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	start := clk.Now()
	deadline := start.Add(timeout)
	actx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	backoff := Backoff()
	var logged time.Time
	for n := 1; ; n++ {
		err := attempt(actx)
		if err == nil {
			if n > 1 {
				w.Log.Info("Done waiting", "for", w.For, "attempts", n, "waited", clk.Since(start).Round(time.Millisecond).String())
			}
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		now := clk.Now()
		if !now.Before(deadline) {
			return w.gaveUp(timeout, err)
		}
		delay := min(backoff.Step(), deadline.Sub(now))
		if shouldLog(n, !logged.IsZero(), now.Sub(logged)) {
			w.Log.Info("Waiting", "for", w.For, "attempt", n, "retryIn", delay.Round(time.Millisecond).String(),
				"waited", now.Sub(start).Round(time.Second).String(), "giveUpIn", deadline.Sub(now).Round(time.Second).String(), "error", err.Error())
			logged = now
		}
		t := clk.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C():
		}
	}
}

// gaveUp is the error at the end of a wait.
func (w Wait) gaveUp(timeout time.Duration, last error) error {
	if errors.Is(last, context.DeadlineExceeded) {
		last = fmt.Errorf("the last attempt did not finish in time: %w", last)
	}
	return fmt.Errorf("%s gave up after %s (--%s) waiting for %s; check %s: %w",
		w.Process, timeout, FlagName, w.For, w.Check, last)
}
