package clusters

import (
	"errors"

	"kumodo.io/convoy/api/v1alpha1"
)

// NotReadyError says why a Release's target cannot be used. Its message is
// for people: what is wrong and what to do; it carries no time or changing
// number, so a condition built from it does not flap.
type NotReadyError struct {
	// Cluster is the Cluster's name; empty for the host cluster.
	Cluster string
	// Message says what is wrong and what to do.
	Message string
	// Err is the underlying error, if any.
	Err error
}

// Error is the message, then the underlying error.
func (e *NotReadyError) Error() string {
	if e.Err == nil {
		return e.Message
	}
	return e.Message + ": " + e.Err.Error()
}

// Unwrap returns the underlying error.
func (e *NotReadyError) Unwrap() error { return e.Err }

// Reason is the Release reason of the failure, ClusterNotReady.
func (e *NotReadyError) Reason() string { return v1alpha1.ReasonClusterNotReady }

// IsNotReady reports whether err is, or wraps, a *NotReadyError.
func IsNotReady(err error) bool {
	_, ok := errors.AsType[*NotReadyError](err)
	return ok
}
