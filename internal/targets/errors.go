package targets

import (
	"errors"

	"kumodo.io/convoy/api/v1alpha1"
)

// NotReadyKind says which check of a target failed, so that callers tell the
// failures apart without reading messages. It is set where the error is made.
type NotReadyKind string

const (
	// HostReadFailed means the Cluster, its kubeconfig Secret or the Release's
	// namespace could not be read on the host (an error of the host, not of the
	// target; a retry may do).
	HostReadFailed NotReadyKind = "HostReadFailed"
	// ClusterMissing means spec.cluster names a Cluster that does not exist.
	ClusterMissing NotReadyKind = "ClusterMissing"
	// NotAdmitted means the Cluster's namespaceSelector does not select the
	// Release's namespace, or cannot be parsed.
	NotAdmitted NotReadyKind = "NotAdmitted"
	// KubeconfigNotReady means the kubeconfig Secret or its key is missing, or the
	// kubeconfig cannot be used (unparsable, not inline credentials).
	KubeconfigNotReady NotReadyKind = "KubeconfigNotReady"
	// Unreachable means the target does not answer (its /version or discovery) with
	// the kubeconfig's server and credentials.
	Unreachable NotReadyKind = "Unreachable"
	// ServiceAccountMissing means the ServiceAccount the Release acts as
	// (spec.serviceAccountName, or the default of the lockdown) does not exist.
	ServiceAccountMissing NotReadyKind = "ServiceAccountMissing"
)

// NotReadyError says why a Release's target cannot be used. Its message is
// for people: what is wrong and what to do; it carries no time or changing
// number, so a condition built from it does not flap.
type NotReadyError struct {
	// Kind says which check failed.
	Kind NotReadyKind
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

// Reason is the Release reason of the failure (a reasons.Carrier):
// ServiceAccountNotFound for a missing ServiceAccount, else ClusterNotReady.
func (e *NotReadyError) Reason() string {
	if e.Kind == ServiceAccountMissing {
		return v1alpha1.ReasonServiceAccountNotFound
	}
	return v1alpha1.ReasonClusterNotReady
}

// IsNotReady reports whether err is, or wraps, a *NotReadyError.
func IsNotReady(err error) bool {
	_, ok := errors.AsType[*NotReadyError](err)
	return ok
}
