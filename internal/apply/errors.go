package apply

import (
	"context"
	"errors"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"

	"kumodo.io/convoy/api/v1alpha1"
)

// Error is a failure of the dry run, an apply, a prune or a deletion, with
// the Release reason it maps to. Its message names every object that failed
// and the server's message for it; it says nothing that changes between two
// attempts of the same render, so a condition built from it does not flap.
type Error struct {
	// Reason is v1alpha1.ReasonUnappliable, ReasonDeployFailed or ReasonPruneFailed.
	Reason string
	// Objects are the objects that failed, in the order they were tried.
	Objects []v1alpha1.ObjectReference
	// Errs are the failures, each naming the objects it concerns.
	Errs []error
}

// Error joins the failures' messages with "; ".
func (e *Error) Error() string {
	msgs := make([]string, 0, len(e.Errs))
	for _, err := range e.Errs {
		msgs = append(msgs, err.Error())
	}
	return strings.Join(msgs, "; ")
}

// Unwrap returns the per-object failures.
func (e *Error) Unwrap() []error { return e.Errs }

// Reason returns the Release reason of err: the Reason of the first *Error
// in its chain, or "" when there is none.
func Reason(err error) string {
	if e, ok := errors.AsType[*Error](err); ok {
		return e.Reason
	}
	return ""
}

// objectError is one object's failure.
type objectError struct {
	ref v1alpha1.ObjectReference
	err error
}

// newError builds an *Error of reason from failures; nil when there are none.
func newError(reason string, failures []objectError) error {
	if len(failures) == 0 {
		return nil
	}
	e := &Error{Reason: reason}
	for _, f := range failures {
		e.Objects = append(e.Objects, f.ref)
		e.Errs = append(e.Errs, f.err)
	}
	return e
}

// IsRejection reports whether err, from a dry run, means the server rejects
// the object as it stands, so that retrying the same render cannot succeed:
// an invalid object, an unknown kind, a changed immutable field, a denial by
// an admission webhook or policy, a missing namespace. Timeouts, 5xx,
// conflicts, throttling, lost connections, and authorization failures (a
// permission can be granted without changing the render) are not.
func IsRejection(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	if meta.IsNoMatchError(err) {
		return true // the target does not serve the kind
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return false // a connection error, or a failure on this side
	}
	switch {
	case apierrors.IsInvalid(err), apierrors.IsBadRequest(err), apierrors.IsNotFound(err),
		apierrors.IsMethodNotSupported(err), apierrors.IsRequestEntityTooLargeError(err),
		apierrors.IsNotAcceptable(err):
		return true
	case apierrors.IsForbidden(err):
		return isAdmissionDenial(err)
	}
	return false
}

// isAdmissionDenial tells an admission webhook's or a ValidatingAdmissionPolicy's
// denial (403) from an authorization failure, a quota or a terminating namespace.
func isAdmissionDenial(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "admission webhook") ||
		strings.Contains(msg, "denied request") ||
		strings.Contains(msg, "denied the request")
}
