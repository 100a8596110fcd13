package cli

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// Exit codes of kubectl-convoy.
const (
	// ExitOK: the command did what was asked.
	ExitOK = 0
	// ExitFailure: the command or what it waited for failed (or --wait timed out).
	ExitFailure = 1
	// ExitUsage: the command line is wrong (unknown command or flag, bad argument).
	ExitUsage = 2
)

// UsageError is a wrong command line: exit code 2.
type UsageError struct{ Err error }

// Error is the message of the wrapped error.
func (e *UsageError) Error() string { return e.Err.Error() }

// Unwrap returns the wrapped error.
func (e *UsageError) Unwrap() error { return e.Err }

// usageErrorf returns a *UsageError.
func usageErrorf(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...)}
}

// ExitCode maps the error a command returned to the process exit code.
func ExitCode(err error) int {
	var usage *UsageError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &usage):
		return ExitUsage
	default:
		return ExitFailure
	}
}

// RequestError is a failed API request, explained for the person at the terminal.
type RequestError struct {
	// Verb, Resource, Subresource, Namespace and Name say what was asked (RBAC terms).
	Verb, Resource, Subresource, Namespace, Name string
	// Err is the API error.
	Err error
	// APIMissing: the cluster does not serve convoy.kumodo.io/v1alpha1 at all.
	APIMissing bool
	// ResourceMissing: the cluster serves convoy.kumodo.io/v1alpha1 without Resource
	// (a convoy older than the kind).
	ResourceMissing bool
	// Suggestions are similar names, for a Release or ReleaseSet not found.
	Suggestions []string
}

// Unwrap returns the API error.
func (e *RequestError) Unwrap() error { return e.Err }

// installHint says how to install convoy's API.
const installHint = "convoy is not installed on this cluster: the API group " + v1.GroupName + "/" + v1.Version +
	" is not served. Install convoy (kubectl apply -k deploy/ from the convoy repository; see deploy/README.md), " +
	"then check that `kubectl get apiservice " + v1.Version + "." + v1.GroupName + "` is Available"

// Error says what failed and what to do: install convoy, ask for an RBAC rule, or
// use another name.
func (e *RequestError) Error() string {
	qualified := e.Resource
	if e.Subresource != "" {
		qualified += "/" + e.Subresource
	}
	switch {
	case e.APIMissing:
		return installHint
	case e.ResourceMissing:
		return fmt.Sprintf("this cluster's convoy does not serve %s.%s (%s): it is older than that kind; upgrade convoy (see docs/operations.md), "+
			"then check `kubectl api-resources --api-group=%s`", e.Resource, v1.GroupName, kindOf(e.Resource), v1.GroupName)
	case apierrors.IsForbidden(e.Err):
		return e.forbidden(qualified)
	case apierrors.IsNotFound(e.Err) && e.Name != "":
		msg := fmt.Sprintf("%s %q not found in namespace %q", kindOf(e.Resource), e.Name, e.Namespace)
		if e.Namespace == "" {
			msg = fmt.Sprintf("%s %q not found", kindOf(e.Resource), e.Name)
		}
		switch {
		case len(e.Suggestions) > 0:
			msg += "; did you mean " + orList(e.Suggestions) + "?"
		case e.Resource == v1.ResourceReleases:
			msg += " (kubectl convoy release list shows the namespace's Releases; -n selects another namespace)"
		case e.Resource == v1.ResourceReleaseSets:
			msg += " (kubectl convoy releaseset list shows the namespace's ReleaseSets; -n selects another namespace)"
		case e.Resource == v1.ResourceAlerts:
			msg += " (kubectl convoy alert list shows the namespace's Alerts; -n selects another namespace)"
		case e.Resource == v1.ResourceReceivers:
			msg += " (kubectl convoy receiver list shows the namespace's Receivers; -n selects another namespace)"
		}
		return msg
	case apierrors.IsConflict(e.Err) && e.Subresource == v1.SubresourcePromote:
		return e.promoteConflict()
	case apierrors.IsServiceUnavailable(e.Err) || statusCode(e.Err) == http.StatusServiceUnavailable:
		return fmt.Sprintf("the convoy API server is not available (%v): check `kubectl get apiservice %s.%s` and the convoy-apiserver pods",
			apierrors.ReasonForError(e.Err), v1.Version, v1.GroupName)
	case apierrors.IsInvalid(e.Err):
		return fmt.Sprintf("the server rejected the %s of %s: %v", e.Verb, e.target(qualified), e.Err)
	default:
		return fmt.Sprintf("%s %s: %v", e.Verb, e.target(qualified), e.Err)
	}
}

func (e *RequestError) target(qualified string) string {
	s := qualified + "." + v1.GroupName
	if e.Name != "" {
		s += " " + e.Name
	}
	if e.Namespace != "" {
		s += " in namespace " + e.Namespace
	}
	return s
}

// forbidden names the RBAC rule that is missing.
func (e *RequestError) forbidden(qualified string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "you may not %s %s: missing RBAC rule apiGroups: [%s], resources: [%s], verbs: [%s]",
		e.Verb, e.target(qualified), v1.GroupName, qualified, e.Verb)
	if e.Namespace != "" {
		b.WriteString(" (in a Role of the namespace or a ClusterRole)")
	}
	switch e.Subresource {
	case v1.SubresourceSync:
		b.WriteString("; ask an administrator to bind the ClusterRole convoy-sync, which grants only that")
	case v1.SubresourcePromote:
		b.WriteString("; promoting a stage is its own permission, apart from editing the ReleaseSet: ask an administrator to bind the ClusterRole convoy-promote, which grants only that and reading ReleaseSets")
	default:
		b.WriteString("; ask an administrator for a Role or ClusterRole with it")
	}
	if msg := apiMessage(e.Err); msg != "" {
		fmt.Fprintf(&b, " (server: %s)", msg)
	}
	return b.String()
}

// promoteConflict explains a 409 of /promote: no stage waits for approval, or the
// rollout is halted, and what to do in each case.
func (e *RequestError) promoteConflict() string {
	msg := fmt.Sprintf("cannot promote ReleaseSet %q in namespace %q", e.Name, e.Namespace)
	if m := apiMessage(e.Err); m != "" {
		msg += ": " + m
	}
	return msg + ". promote approves only a stage whose phase is WaitingForApproval, at the current revision; " +
		"`kubectl convoy releaseset status " + e.Name + "` shows the stages. A Halted rollout is not resumed by promote: " +
		"fix the failed Release's cause and change spec.template, which starts a new revision"
}

func apiMessage(err error) string {
	var s apierrors.APIStatus
	if errors.As(err, &s) {
		return s.Status().Message
	}
	return ""
}

func statusCode(err error) int {
	var s apierrors.APIStatus
	if errors.As(err, &s) {
		return int(s.Status().Code)
	}
	return 0
}

func kindOf(resource string) string {
	switch resource {
	case v1.ResourceReleases:
		return "Release"
	case v1.ResourceRenders:
		return "Render"
	case v1.ResourceReleaseInventories:
		return "ReleaseInventory"
	case v1.ResourceClusters:
		return "Cluster"
	case v1.ResourceReleaseSets:
		return "ReleaseSet"
	case v1.ResourceAlerts:
		return "Alert"
	case v1.ResourceReceivers:
		return "Receiver"
	}
	return resource
}

// orList quotes names and joins them with commas and "or".
func orList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}
