package policy

import "time"

// Failed judges a reconcile that a failure ended outside Decide and Finish: the
// deletion of a Release that cannot go on (ClusterNotReady, DeleteFailed), or a step
// before the decision (the finalizer's patch, a read of convoy's own objects). res is
// the failure; healthy is the Healthy condition as the Release reports it, which the
// failure leaves as it is. Only in.Now, in.Policy and in.Failures are read.
//
// The failure is reported as any other: Applied=False with res, Ready computed, the
// count and the retry of its kind (a transient failure is retried after
// retryBackoff's delay, or by the work queue without retryBackoff.initial).
func Failed(in Input, res Result, healthy Condition) Outcome {
	res.AfterApply, res.WavesApplied, res.RecheckAfter, res.InventoryGeneration = false, false, 0, 0
	kind := KindOf(res.Reason)
	out := Outcome{Result: res, Kind: kind, Counter: counterUpdateFor(kind), Healthy: healthy}
	out.Applied = AppliedCondition(res)
	out.Ready = ReadyCondition(out.Applied, out.Healthy)
	out.Requeue = requeueFor(in, kind, time.Time{})
	return out
}

// Unrecorded is the Outcome of a reconcile whose end nothing records: its status
// write failed (there is nothing left to write a condition to), or the Release could
// not be read again. out is what the reconcile decided (its conditions are what it
// tried to write). Whatever out counted, the reconcile is one transient failure: it
// counts once (CounterIncrement, in place of out.Counter, never beside it) and is
// retried as a transient failure with the Release's retryBackoff. Only in.Now,
// in.Policy and in.Failures (the count before this reconcile) are read.
func Unrecorded(in Input, out Outcome) Outcome {
	out.Kind = KindTransient
	out.Counter = CounterIncrement
	out.Requeue = requeueFor(in, KindTransient, time.Time{})
	return out
}
