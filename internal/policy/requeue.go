package policy

import (
	"math"
	"time"
)

const (
	// DefaultBackoffMax caps the retry delay when retryBackoff.max is unset.
	DefaultBackoffMax = 1000 * time.Second
	// DefaultBackoffFactor replaces a retryBackoff.factor below 1.
	DefaultBackoffFactor = 2.0
	// DefaultHealthTimeout is failurePolicy.healthTimeout when unset.
	DefaultHealthTimeout = 5 * time.Minute
)

// Requeue says when to reconcile the Release again. The controller turns it into its
// return value: ReturnError → (Result{}, err); else Result{RequeueAfter: After}.
type Requeue struct {
	// After is the delay of the next scheduled reconcile; 0 means none (only the
	// informer resync and events start one).
	After time.Duration
	// ReturnError asks the controller to return the failure as an error, so that the
	// work queue's default rate limiter (5 ms doubling up to 1000 s) schedules the retry:
	// a transient failure without retryBackoff.initial.
	ReturnError bool
}

// Delay is the delay before retry number n (n ≥ 1; the n-th consecutive transient
// failure): initial × factor^(n−1), factor < 1 meaning 2, at most max (1000 s when
// unset).
func (b Backoff) Delay(n int) time.Duration {
	factor := b.Factor
	if !(factor >= 1) { // also NaN
		factor = DefaultBackoffFactor
	}
	limit := b.Max
	if limit <= 0 {
		limit = DefaultBackoffMax
	}
	if n < 1 {
		n = 1
	}
	d := float64(b.Initial) * math.Pow(factor, float64(n-1))
	if d >= float64(limit) || math.IsInf(d, 0) || math.IsNaN(d) {
		return limit
	}
	return time.Duration(d)
}

// requeueFor decides the next reconcile after a reconcile of kind k. deadline is the
// deadline of a Progressing rollout, or zero.
func requeueFor(in Input, k Kind, deadline time.Time) Requeue {
	var r Requeue
	if k == KindTransient {
		if in.Policy.Backoff == nil || in.Policy.Backoff.Initial <= 0 {
			// The work queue's rate limiter decides; RequeueAfter would be ignored.
			return Requeue{ReturnError: true}
		}
		r.After = in.Policy.Backoff.Delay(in.Failures + 1)
	} else if in.Policy.Interval > 0 {
		r.After = in.Policy.Interval
	}
	if !deadline.IsZero() {
		if until := deadline.Sub(in.Now); until > 0 && (r.After == 0 || until < r.After) {
			r.After = until
		}
	}
	return r
}
