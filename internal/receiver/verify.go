package receiver

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// Headers the receiver types read.
const (
	headerGitHubSignature = "X-Hub-Signature-256"
	headerGitHubEvent     = "X-GitHub-Event"
	headerGitLabToken     = "X-Gitlab-Token"
	headerGitLabEvent     = "X-Gitlab-Event"
	headerAuthorization   = "Authorization"
)

// Events that refresh, per type; a GitHub ping is answered and refreshes nothing.
const (
	gitHubPush       = "push"
	gitHubPing       = "ping"
	gitLabPush       = "Push Hook"
	gitLabTagPush    = "Tag Push Hook"
	harborPush       = "PUSH_ARTIFACT"
	genericEventName = "call"
)

// Verdict is what verify decides of a call.
type Verdict struct {
	// Status is the HTTP status of the answer: 200 (refresh, or a ping), 401 (not
	// authenticated), 400 (an event that refreshes nothing).
	Status int
	// Event names the caller's event (push, Push Hook, PUSH_ARTIFACT, call, ping).
	Event string
	// Refresh: the call asks for the sources to be refreshed.
	Refresh bool
	// Result is the metric's result label: accepted, ping, unauthorized, bad_event.
	Result string
	// Message says why, for the answer's body and the log.
	Message string
}

// Results of the calls, the result label of convoy_receiver_calls_total.
const (
	ResultAccepted      = "accepted"
	ResultPing          = "ping"
	ResultUnauthorized  = "unauthorized"
	ResultBadEvent      = "bad_event"
	ResultNotFound      = "not_found"
	ResultRateLimited   = "rate_limited"
	ResultTooLarge      = "too_large"
	ResultBadMethod     = "method_not_allowed"
	ResultError         = "error"
	resultUnknownTypeOf = "unknown type %q"
)

func unauthorized(msg string) Verdict {
	return Verdict{Status: http.StatusUnauthorized, Result: ResultUnauthorized, Message: msg}
}

func badEvent(event, msg string) Verdict {
	return Verdict{Status: http.StatusBadRequest, Event: event, Result: ResultBadEvent, Message: msg}
}

func accepted(event string) Verdict {
	return Verdict{Status: http.StatusOK, Event: event, Refresh: true, Result: ResultAccepted, Message: "refreshing"}
}

// Verify decides a call of a Receiver of type typ whose Secret holds token: first
// whether the call is authenticated (401 if not), then whether its event refreshes
// (400 if it is unknown). It is pure: the body is read and bounded by the caller.
func Verify(typ v1.ReceiverType, token []byte, h http.Header, body []byte) Verdict {
	switch typ {
	case v1.ReceiverGitHub:
		if !validHMAC(token, body, h.Get(headerGitHubSignature)) {
			return unauthorized(headerGitHubSignature + " is missing or is not the HMAC-SHA256 of the body with the token")
		}
		switch ev := h.Get(headerGitHubEvent); ev {
		case gitHubPush:
			return accepted(ev)
		case gitHubPing:
			return Verdict{Status: http.StatusOK, Event: ev, Result: ResultPing, Message: "pong: the webhook reaches convoy"}
		default:
			return badEvent(ev, fmt.Sprintf("event %q refreshes nothing; send only push events", ev))
		}
	case v1.ReceiverGitLab:
		if !equalToken(token, h.Get(headerGitLabToken)) {
			return unauthorized(headerGitLabToken + " is missing or is not the token")
		}
		switch ev := h.Get(headerGitLabEvent); ev {
		case gitLabPush, gitLabTagPush:
			return accepted(ev)
		default:
			return badEvent(ev, fmt.Sprintf("event %q refreshes nothing; send only push and tag push events", ev))
		}
	case v1.ReceiverHarbor:
		if !equalToken(token, h.Get(headerAuthorization)) {
			return unauthorized(headerAuthorization + " is missing or is not the token")
		}
		var payload struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(body, &payload); err != nil {
			return badEvent("", "the body is not a Harbor event (JSON with a type)")
		}
		if payload.Type != harborPush {
			return badEvent(payload.Type, fmt.Sprintf("event %q refreshes nothing; send only %s events", payload.Type, harborPush))
		}
		return accepted(payload.Type)
	case v1.ReceiverGeneric:
		if !validHMAC(token, body, h.Get(v1.HeaderSignature)) {
			return unauthorized(v1.HeaderSignature + " is missing or is not the HMAC-SHA256 of the body with the token")
		}
		return accepted(genericEventName)
	default:
		return Verdict{Status: http.StatusInternalServerError, Result: ResultError, Message: fmt.Sprintf(resultUnknownTypeOf, typ)}
	}
}

// validHMAC reports whether header is "sha256=<hex>" of the HMAC-SHA256 of body with
// token, compared in constant time.
func validHMAC(token, body []byte, header string) bool {
	digest, ok := strings.CutPrefix(header, v1.SignaturePrefix)
	if !ok || len(token) == 0 {
		return false
	}
	got, err := hex.DecodeString(digest)
	if err != nil {
		return false
	}
	return hmac.Equal(got, Sign(token, body))
}

// Sign is the HMAC-SHA256 of body with token.
func Sign(token, body []byte) []byte {
	m := hmac.New(sha256.New, token)
	m.Write(body)
	return m.Sum(nil)
}

// equalToken compares a header with the token in constant time (of the token's
// length); an empty token never matches.
func equalToken(token []byte, header string) bool {
	return len(token) > 0 && subtle.ConstantTimeCompare(token, []byte(header)) == 1
}
