package source

import (
	"fmt"

	"kumodo.io/convoy/api/v1alpha1"
)

// Error is an error of a chart source, classified by the reason of the Release's
// Applied condition it leads to (a reasons.Carrier): v1alpha1.ReasonSourceNotReady,
// ReasonUnsupported, ReasonUnappliable (a chart folder whose .helmignore does not
// parse) or ReasonVerificationFailed (a Git commit no trusted key signed; the
// *verify.Error is in its chain).
type Error struct {
	// reason is the condition reason the controller reports.
	reason string
	// Err is what happened, with the source it concerns.
	Err error
	// notFound: the server answered 404 Not Found.
	notFound bool
}

// Error returns the message of the wrapped error.
func (e *Error) Error() string { return e.Err.Error() }

// Unwrap returns the wrapped error.
func (e *Error) Unwrap() error { return e.Err }

// Reason is the condition reason the controller reports; callers read it with
// reasons.Of.
func (e *Error) Reason() string { return e.reason }

// Transient says whether the cause may go away by itself, so that retrying with a
// backoff makes sense (SourceNotReady).
func (e *Error) Transient() bool {
	return e.reason == v1alpha1.ReasonSourceNotReady
}

func newError(reason string, format string, args ...any) *Error {
	return &Error{reason: reason, Err: fmt.Errorf(format, args...)}
}

func sourceNotReady(format string, args ...any) *Error {
	return newError(v1alpha1.ReasonSourceNotReady, format, args...)
}

func unsupported(format string, args ...any) *Error {
	return newError(v1alpha1.ReasonUnsupported, format, args...)
}

func unappliable(format string, args ...any) *Error {
	return newError(v1alpha1.ReasonUnappliable, format, args...)
}

func verificationFailed(format string, args ...any) *Error {
	return newError(v1alpha1.ReasonVerificationFailed, format, args...)
}
