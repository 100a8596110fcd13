package receiver

import (
	"encoding/hex"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

func headers(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i < len(kv); i += 2 {
		h.Set(kv[i], kv[i+1])
	}
	return h
}

// TestVerify: each type authenticates the call with the token (401 otherwise), then
// refreshes on its push events, answers a GitHub ping without a refresh, and refuses
// other events (400).
func TestVerify(t *testing.T) {
	token := []byte("s3cret")
	body := []byte(`{"ref":"refs/heads/main"}`)
	sig := v1.SignaturePrefix + hex.EncodeToString(Sign(token, body))
	wrongSig := v1.SignaturePrefix + hex.EncodeToString(Sign([]byte("other"), body))
	harborPushBody := []byte(`{"type":"PUSH_ARTIFACT","event_data":{}}`)
	for _, tc := range []struct {
		name  string
		typ   v1.ReceiverType
		token []byte
		h     http.Header
		body  []byte
		want  Verdict
	}{
		{"github push", v1.ReceiverGitHub, token, headers(headerGitHubSignature, sig, headerGitHubEvent, "push"), body,
			Verdict{Status: 200, Event: "push", Refresh: true, Result: ResultAccepted}},
		{"github ping", v1.ReceiverGitHub, token, headers(headerGitHubSignature, sig, headerGitHubEvent, "ping"), body,
			Verdict{Status: 200, Event: "ping", Result: ResultPing}},
		{"github other event", v1.ReceiverGitHub, token, headers(headerGitHubSignature, sig, headerGitHubEvent, "issues"), body,
			Verdict{Status: 400, Event: "issues", Result: ResultBadEvent}},
		{"github wrong signature", v1.ReceiverGitHub, token, headers(headerGitHubSignature, wrongSig, headerGitHubEvent, "push"), body,
			Verdict{Status: 401, Result: ResultUnauthorized}},
		{"github signature of another body", v1.ReceiverGitHub, token, headers(headerGitHubSignature, sig, headerGitHubEvent, "push"), []byte(`{}`),
			Verdict{Status: 401, Result: ResultUnauthorized}},
		{"github sha1 signature only", v1.ReceiverGitHub, token, headers("X-Hub-Signature", "sha1="+hex.EncodeToString(Sign(token, body)), headerGitHubEvent, "push"), body,
			Verdict{Status: 401, Result: ResultUnauthorized}},
		{"github signature not hex", v1.ReceiverGitHub, token, headers(headerGitHubSignature, "sha256=zz", headerGitHubEvent, "push"), body,
			Verdict{Status: 401, Result: ResultUnauthorized}},
		{"github unknown event before authentication", v1.ReceiverGitHub, token, headers(headerGitHubEvent, "issues"), body,
			Verdict{Status: 401, Result: ResultUnauthorized}},
		{"empty token never authenticates", v1.ReceiverGitHub, nil,
			headers(headerGitHubSignature, v1.SignaturePrefix+hex.EncodeToString(Sign(nil, body)), headerGitHubEvent, "push"), body,
			Verdict{Status: 401, Result: ResultUnauthorized}},
		{"gitlab push", v1.ReceiverGitLab, token, headers(headerGitLabToken, "s3cret", headerGitLabEvent, "Push Hook"), body,
			Verdict{Status: 200, Event: "Push Hook", Refresh: true, Result: ResultAccepted}},
		{"gitlab tag push", v1.ReceiverGitLab, token, headers(headerGitLabToken, "s3cret", headerGitLabEvent, "Tag Push Hook"), body,
			Verdict{Status: 200, Event: "Tag Push Hook", Refresh: true, Result: ResultAccepted}},
		{"gitlab merge request", v1.ReceiverGitLab, token, headers(headerGitLabToken, "s3cret", headerGitLabEvent, "Merge Request Hook"), body,
			Verdict{Status: 400, Event: "Merge Request Hook", Result: ResultBadEvent}},
		{"gitlab wrong token", v1.ReceiverGitLab, token, headers(headerGitLabToken, "s3cre", headerGitLabEvent, "Push Hook"), body,
			Verdict{Status: 401, Result: ResultUnauthorized}},
		{"gitlab no token", v1.ReceiverGitLab, token, headers(headerGitLabEvent, "Push Hook"), body,
			Verdict{Status: 401, Result: ResultUnauthorized}},
		{"harbor push", v1.ReceiverHarbor, token, headers(headerAuthorization, "s3cret"), harborPushBody,
			Verdict{Status: 200, Event: "PUSH_ARTIFACT", Refresh: true, Result: ResultAccepted}},
		{"harbor pull", v1.ReceiverHarbor, token, headers(headerAuthorization, "s3cret"), []byte(`{"type":"PULL_ARTIFACT"}`),
			Verdict{Status: 400, Event: "PULL_ARTIFACT", Result: ResultBadEvent}},
		{"harbor not JSON", v1.ReceiverHarbor, token, headers(headerAuthorization, "s3cret"), []byte(`push`),
			Verdict{Status: 400, Result: ResultBadEvent}},
		{"harbor wrong token", v1.ReceiverHarbor, token, headers(headerAuthorization, "Bearer s3cret"), harborPushBody,
			Verdict{Status: 401, Result: ResultUnauthorized}},
		{"generic", v1.ReceiverGeneric, token, headers(v1.HeaderSignature, sig), body,
			Verdict{Status: 200, Event: "call", Refresh: true, Result: ResultAccepted}},
		{"generic wrong signature", v1.ReceiverGeneric, token, headers(v1.HeaderSignature, wrongSig), body,
			Verdict{Status: 401, Result: ResultUnauthorized}},
		{"generic without the prefix", v1.ReceiverGeneric, token, headers(v1.HeaderSignature, sig[len(v1.SignaturePrefix):]), body,
			Verdict{Status: 401, Result: ResultUnauthorized}},
		{"generic with GitHub's header", v1.ReceiverGeneric, token, headers(headerGitHubSignature, sig), body,
			Verdict{Status: 401, Result: ResultUnauthorized}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Verify(tc.typ, tc.token, tc.h, tc.body)
			if diff := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(Verdict{}, "Message")); diff != "" {
				t.Errorf("Verify (-want +got):\n%s", diff)
			}
			if got.Message == "" {
				t.Error("Verify gave no message")
			}
		})
	}
}

// TestIndexReceiverPath: a Receiver is found by its status.webhookPath, one without a
// path by none.
func TestIndexReceiverPath(t *testing.T) {
	p := v1.ReceiverWebhookPath([]byte("t"), "r", "ns")
	for _, tc := range []struct {
		name string
		path string
		want []string
	}{{"with a path", p, []string{p}}, {"without", "", nil}} {
		t.Run(tc.name, func(t *testing.T) {
			got := indexReceiverPath(&v1.Receiver{Status: v1.ReceiverStatus{WebhookPath: tc.path}})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestRefreshes: a lastCall asks for a refresh when it says "refreshing", not for a
// ping or without a call.
func TestRefreshes(t *testing.T) {
	for _, tc := range []struct {
		call *v1.ReceiverCall
		want bool
	}{
		{nil, false},
		{&v1.ReceiverCall{Result: "ping: nothing to refresh"}, false},
		{&v1.ReceiverCall{Result: "push" + refreshing + "1 Release and 0 ReleaseSets"}, true},
	} {
		if got := refreshes(tc.call); got != tc.want {
			t.Errorf("refreshes(%+v) = %v, want %v", tc.call, got, tc.want)
		}
	}
}
