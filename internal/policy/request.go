package policy

import (
	"fmt"
	"strings"
	"time"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// Request is the state of a /sync request (or a forced one) at the start of a reconcile.
type Request struct {
	// At is the annotation's time, truncated to the second, in UTC; nil when the
	// annotation is absent or not a valid time.
	At *time.Time
	// Pending says that At is later than the last handled request, compared to the
	// second, or that no request was handled yet; for a request bound to a render,
	// also that the render is still current (Bound, Stale).
	Pending bool
	// Bound is the render the /sync approved (sync-requested-render); empty for a
	// plain /sync and for a forced one.
	Bound string
	// Stale says that the request would be pending, but it is bound to a render that
	// is neither the current render nor the pinned one: it is neither applied nor
	// handled, and the Release waits for a /sync of the current render.
	Stale bool
}

// Warning is something wrong with the Release that the decisions ignored; the
// controller emits it as a Warning event.
type Warning struct {
	// Annotation is the key of the annotation concerned.
	Annotation string
	// Message says what is wrong and what convoy did about it.
	Message string
}

// ParseRequestTime parses the value of a sync annotation: any RFC 3339 time, with or
// without fractions of a second, with any offset, "T" and "Z" in either case. The
// result is in UTC and truncated to the second, since convoy compares these times to
// the second.
func ParseRequestTime(value string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, strings.ToUpper(strings.TrimSpace(value)))
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is not an RFC 3339 time", value)
	}
	return toSecond(t), nil
}

// toSecond drops what is below the second and returns UTC.
func toSecond(t time.Time) time.Time { return t.Truncate(time.Second).UTC() }

// EvaluateRequest tells whether the request in annotation value is pending against the
// last handled one: it is when its time is later than lastHandled, both to the second,
// or when lastHandled is nil and the annotation is set. An empty value is no request;
// an invalid value is no request and an error.
func EvaluateRequest(value string, lastHandled *time.Time) (Request, error) {
	if value == "" {
		return Request{}, nil
	}
	at, err := ParseRequestTime(value)
	if err != nil {
		return Request{}, err
	}
	pending := lastHandled == nil || at.After(toSecond(*lastHandled))
	return Request{At: &at, Pending: pending}, nil
}

// requests evaluates both sync annotations. In automatic mode lastHandledSyncAt is not
// read: a /sync is never pending, it only started this reconcile.
func requests(in Input) (syncReq, force Request, warnings []Warning) {
	var lastHandledSync *time.Time
	if !in.Policy.Automatic {
		lastHandledSync = in.Requests.LastHandledSyncAt
	}
	syncReq, err := EvaluateRequest(in.Requests.SyncRequestedAt, lastHandledSync)
	if err != nil {
		warnings = append(warnings, invalidAnnotation(v1.AnnotationSyncRequestedAt, err))
	}
	if in.Policy.Automatic {
		syncReq.Pending = false
	} else if syncReq.At != nil {
		syncReq.Bound = in.Requests.SyncRequestedRender
	}
	force, err = EvaluateRequest(in.Requests.ForceRequestedAt, in.Requests.LastHandledForceSyncAt)
	if err != nil {
		warnings = append(warnings, invalidAnnotation(v1.AnnotationSyncForceRequestedAt, err))
	}
	return syncReq, force, warnings
}

func invalidAnnotation(key string, err error) Warning {
	return Warning{
		Annotation: key,
		Message: fmt.Sprintf("Annotation %s is ignored: %v. Set it with kubectl convoy release sync, "+
			"or to a time such as 2026-12-02T10:04:05Z.", key, err),
	}
}

// bindRequest marks a pending /sync bound to a render that is no longer current as
// stale: not pending. A bound request approves its render, not the time it was made;
// while its render is the current render (or the pinned one, which a pinned Release
// applies) it is pending as a plain one is. It is decided once the render is known.
func bindRequest(in Input, req Request) Request {
	if !req.Pending || req.Bound == "" || approves(req.Bound, in) {
		return req
	}
	req.Pending, req.Stale = false, true
	return req
}

// approves says whether a request bound to render approves what in would apply:
// render is the current render, or the pinned render of a pinned Release.
func approves(render string, in Input) bool {
	if v1.RenderRef(render).Names(in.CurrentRender) {
		return true
	}
	return in.Pin != nil && v1.RenderRef(render).Names(in.Pin.RenderRef)
}
