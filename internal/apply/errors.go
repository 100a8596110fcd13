package apply

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"

	"kumodo.io/convoy/api/v1alpha1"
)

// Error is a failure of the dry run, an apply, a prune or a deletion, with
// the Release reason it maps to (a reasons.Carrier). Its message names every
// object that failed and the server's message for it; it says nothing that
// changes between two attempts of the same render, so a condition built from it
// does not flap.
type Error struct {
	// reason is v1alpha1.ReasonUnappliable, ReasonDeployFailed or ReasonPruneFailed.
	reason string
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

// Reason is the Release reason of the failure: v1alpha1.ReasonUnappliable,
// ReasonDeployFailed or ReasonPruneFailed. Callers read it with reasons.Of.
func (e *Error) Reason() string { return e.reason }

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
	e := &Error{reason: reason}
	for _, f := range failures {
		e.Objects = append(e.Objects, f.ref)
		e.Errs = append(e.Errs, f.err)
	}
	return e
}

// IsRejection reports whether err, from a dry run, means the server rejects
// the object as it stands, so that retrying the same render cannot succeed:
// an invalid object, an unknown kind, a changed immutable field, a denial by
// an admission webhook or policy, a missing namespace, a value the server
// cannot convert to the type of its field (see IsConversionFailure). Timeouts,
// other 5xx, conflicts, throttling, lost connections, and authorization
// failures (a permission can be granted without changing the render) are not.
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
	case IsConversionFailure(err):
		return true
	case apierrors.IsInvalid(err), apierrors.IsBadRequest(err), apierrors.IsNotFound(err),
		apierrors.IsMethodNotSupported(err), apierrors.IsRequestEntityTooLargeError(err),
		apierrors.IsNotAcceptable(err):
		return true
	case apierrors.IsForbidden(err):
		return isAdmissionDenial(err)
	}
	return false
}

// IsRefused reports whether err, from an apply, means the server refuses the object
// as rendered, so that every retry of the same render fails the same way: 422 Invalid
// (a field value its validation refuses, such as a label value that is no label value
// or a changed immutable field), 400 BadRequest, or a value it cannot convert
// (IsConversionFailure). What may change between two attempts is left out, unlike
// IsRejection of a dry run: a missing namespace (the render's own may be on its way),
// an admission denial (a policy can change), authorization, conflicts, 5xx, timeouts.
func IsRefused(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return false
	}
	return IsConversionFailure(err) || apierrors.IsInvalid(err) || apierrors.IsBadRequest(err)
}

// ApplyFailure is the *Error of the failed apply of one object outside the sync waves
// (a hook object or hook Job, which RunHookStep applies): Reason
// ReasonUnappliable when the server refused the object (IsRefused), else
// ReasonDeployFailed; the message names the object and the server's message, as the
// failures of ApplyWave do.
func ApplyFailure(ref v1alpha1.ObjectReference, err error) error {
	f := applyFailure(ref, err)
	return newError(applyReason([]objectError{f}), []objectError{f})
}

// applyFailure is the failure of the apply of ref with err, explained.
func applyFailure(ref v1alpha1.ObjectReference, err error) objectError {
	return objectError{ref: ref, err: fmt.Errorf("apply of %s failed: %w", Describe(ref), explain(err))}
}

// IsAuthorizationFailure reports whether err, or one of the failures it
// joins, is a refusal by the target's authorization (403 Forbidden that no
// admission webhook or policy gave): the identity the request was made as
// lacks the permission that the server's message names.
func IsAuthorizationFailure(err error) bool {
	switch e := err.(type) { //nolint:errorlint // walks the chain itself, joined errors included
	case nil:
		return false
	case apierrors.APIStatus:
		return e.Status().Code == http.StatusForbidden && !isAdmissionDenial(err)
	case interface{ Unwrap() []error }:
		return slices.ContainsFunc(e.Unwrap(), IsAuthorizationFailure)
	case interface{ Unwrap() error }:
		return IsAuthorizationFailure(e.Unwrap())
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

// typedPatchFailure starts the message of kube-apiserver's failure to convert
// the object of a server-side apply to the schema of its kind
// (k8s.io/apimachinery's managedfields, structuredMergeManager.Apply). It is not
// an API status error there, so the server answers 500 with reason Unknown.
const typedPatchFailure = "failed to create typed patch object"

// IsConversionFailure reports whether err is the API server's failure to
// convert an applied object to the schema of its kind: a value of the wrong
// type (an unquoted number in a ConfigMap's data, a quoted number where an
// integer is expected) or a duplicate entry in a list keyed by name. The
// server answers such an apply with 500, but the object as rendered is at
// fault: no retry of the same render can succeed.
func IsConversionFailure(err error) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return false
	}
	s := status.Status()
	return s.Code == http.StatusInternalServerError && strings.Contains(s.Message, typedPatchFailure)
}

// conversionError explains a conversion failure: which fields, and what to do.
// It wraps the server's error.
type conversionError struct {
	err error
	// fields are the server's complaints, one per field (".data.n: expected
	// string, got 3"), sorted.
	fields []string
}

func (e *conversionError) Error() string {
	return fmt.Sprintf("the API server cannot convert it to the schema of its kind: %s; %s",
		strings.Join(e.fields, "; "), conversionHint(e.fields))
}

func (e *conversionError) Unwrap() error { return e.err }

// refusedError is a 422 Invalid or 400 BadRequest of the server, with what to do.
// It wraps the server's error.
type refusedError struct{ err error }

func (e *refusedError) Error() string {
	return e.err.Error() + "; the API server refuses the object as rendered, so no retry of this render can succeed: " +
		"change it in the chart's template, values or mutations"
}

func (e *refusedError) Unwrap() error { return e.err }

// explain returns err with a message that names the fields and says what to
// do when it is a conversion failure or a refusal (422, 400), and err itself
// otherwise.
func explain(err error) error {
	if !IsConversionFailure(err) {
		if IsRefused(err) {
			return &refusedError{err: err}
		}
		return err
	}
	var status apierrors.APIStatus
	_ = errors.As(err, &status)
	msg := status.Status().Message
	// "failed to create typed patch object (ns/name; /v1, Kind=ConfigMap): <errors>",
	// the errors one per line after "errors:" when there are several.
	if i := strings.Index(msg, "): "); i >= 0 {
		msg = msg[i+len("): "):]
	}
	var fields []string
	for _, line := range strings.Split(msg, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line == "errors:" {
			continue
		}
		fields = append(fields, unstructuredValue.ReplaceAllString(line, "$1"))
	}
	slices.Sort(fields)
	return &conversionError{err: err, fields: fields}
}

// unstructuredValue is how structured-merge-diff prints, at the end of a
// complaint, a value it could not convert: "&value.valueUnstructured{Value:3}"
// says 3.
var unstructuredValue = regexp.MustCompile(`&value\.value\w*\{Value:(.*)\}$`)

// conversionHint says what to change in the chart for the server's complaints.
func conversionHint(fields []string) string {
	msg := strings.Join(fields, " ")
	switch {
	case strings.Contains(msg, "expected string"):
		return "quote the value in the chart's template or values (the field takes a string, not a number, boolean, list or map; in a template, use | quote)"
	case strings.Contains(msg, "expected numeric"), strings.Contains(msg, "expected boolean"):
		return "remove the quotes around the value in the chart's template or values (the field takes a number or a boolean)"
	case strings.Contains(msg, "duplicate entries"):
		return "remove the duplicate entry from the list in the chart's template or values"
	default:
		return "change the value in the chart's template or values to the type the field takes"
	}
}
