package policy

import (
	"time"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// Result is how a reconcile, or one step of it, ended: a reason of the Applied
// condition and a message for people. Reason ReasonApplied means success.
type Result struct {
	// Reason is one of the Applied reasons in api/v1alpha1.
	Reason string
	// Message says what happened and what to do; no changing timestamps or numbers (the
	// start of an overdue wait, fixed while it lasts, is the one time it may name).
	Message string
	// AfterApply: the render was applied before the step that stopped (the PostApply
	// hook batches). Finish then counts the apply as done (lastSuccessful, a new
	// rollout) and reports Reason. Only for an attempt's Result.
	AfterApply bool
	// WavesApplied: the render's first sync waves were applied before the step that
	// stopped (WaitingForSyncWave). Finish then starts the render's rollout, but the
	// apply is not done: no lastSuccessful, a pending /sync stays pending. Only for an
	// attempt's Result.
	WavesApplied bool
	// RecheckAfter, when > 0, is when the step that stopped wants to look again (the
	// earliest timeout of a running hook batch). Only for an attempt's Result.
	RecheckAfter time.Duration
	// InventoryGeneration, when > 0, is the generation of the ReleaseInventory as the
	// attempt's writes left it: the observer's health of an older generation does not
	// count for the Outcome (AssessedHealth). Only for an attempt's Result.
	InventoryGeneration int64
}

// Succeeded is the Result of an apply attempt that applied everything the Plan asked
// for. Finish writes the message.
func Succeeded() Result {
	return Result{Reason: v1.ReasonApplied}
}

// Stopped is the Result of a step that ended the reconcile with reason (a failure or a
// hold) and a message for people.
func Stopped(reason, message string) Result {
	return Result{Reason: reason, Message: message}
}

// Kind sorts the reasons by what they mean for the failure count and the requeue.
type Kind string

const (
	// KindSuccess means the render the sync policy asks for is applied (reason Applied).
	KindSuccess Kind = "Success"
	// KindHold means convoy waits on purpose (the waiting reasons, Pinned, RolledBack). It
	// resets the failure count, like a success.
	KindHold Kind = "Hold"
	// KindTransient means a failure that may go away by itself; retried with backoff.
	KindTransient Kind = "Transient"
	// KindFailure means a failure that will not go away by retrying (Unsupported,
	// Unappliable, HookFailed); checked again at the next periodic reconcile. It leaves
	// the failure count as it is.
	KindFailure Kind = "Failure"
)

// kinds lists every Applied reason of docs/reference/api.md with its kind.
var kinds = map[string]Kind{
	v1.ReasonApplied: KindSuccess,

	v1.ReasonSourceNotReady:  KindTransient,
	v1.ReasonValuesNotReady:  KindTransient,
	v1.ReasonClusterNotReady: KindTransient,
	v1.ReasonDeployFailed:    KindTransient,
	v1.ReasonPruneFailed:     KindTransient,
	v1.ReasonDeleteFailed:    KindTransient,

	v1.ReasonUnsupported: KindFailure,
	v1.ReasonUnappliable: KindFailure,
	v1.ReasonHookFailed:  KindFailure,

	v1.ReasonServiceAccountNotFound: KindFailure,
	v1.ReasonForbidden:              KindFailure,
	v1.ReasonVerificationFailed:     KindFailure,

	v1.ReasonPinned:                KindHold,
	v1.ReasonRolledBack:            KindHold,
	v1.ReasonWaitingForSync:        KindHold,
	v1.ReasonWaitingForClusterWave: KindHold,
	v1.ReasonWaitingForSyncWave:    KindHold,
	v1.ReasonWaitingForHooks:       KindHold,
}

// KindOf returns the kind of an Applied reason. A reason convoy does not know (a bug:
// every step must use a reason of api.md) counts as transient, so that it is retried
// rather than left until a periodic reconcile that may never come.
func KindOf(reason string) Kind {
	if k, ok := kinds[reason]; ok {
		return k
	}
	return KindTransient
}

// Transient reports whether reason is a transient failure (SP-34).
func Transient(reason string) bool { return KindOf(reason) == KindTransient }
