package receiver_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/receiver"
	"kumodo.io/convoy/internal/render/gittest"
	"kumodo.io/convoy/internal/testenv"
)

// TestReceiverManualMode: in manual mode a refresh renders the new commit and reports
// it (WaitingForSync), and applies nothing: lastSuccessful keeps the commit synced.
func TestReceiverManualMode(t *testing.T) {
	e, _ := newEnv(t, receiver.Options{})
	c1 := e.repo.Commit(t, "main", "web 1.0.0", gittest.Chart("web", "web", "1.0.0", nil))
	e.createRelease("web", false)
	e.waitApplied("web", "False", v1.ReasonWaitingForSync)
	testenv.PostSync(t, e.ctx, host.RestConfig(), e.ns, "web", false)
	if rel := e.waitApplied("web", "True", v1.ReasonApplied); rel.Status.LastSuccessful == nil || rel.Status.LastSuccessful.Commit != c1 {
		t.Fatalf("lastSuccessful %+v, want commit %s", rel.Status.LastSuccessful, c1)
	}
	token := []byte("gh-token")
	e.createReceiver("github", v1.ReceiverGitHub, "github-token", token)
	path := e.waitReady("github", "True", v1.ReasonServing).Status.WebhookPath
	e.waitServed(path)

	c2 := e.repo.Commit(t, "main", "web 1.1.0", gittest.Chart("web", "web", "1.1.0", nil))
	body := []byte(`{"ref":"refs/heads/main"}`)
	if code, msg := e.call(path, body, map[string]string{"X-Hub-Signature-256": sign(token, body), "X-GitHub-Event": "push"}); code != 200 {
		t.Fatalf("push: %d %s", code, msg)
	}
	rel := e.waitRendered("web", c2, 15*time.Second)
	rel = e.waitApplied("web", "False", v1.ReasonWaitingForSync)
	if renderCommit(rel) != c2 || rel.Status.LastSuccessful == nil || rel.Status.LastSuccessful.Commit != c1 {
		t.Errorf("render %+v, lastSuccessful %+v: want %s rendered and waiting, %s applied", rel.Status.Render, rel.Status.LastSuccessful, c2, c1)
	}
	testenv.Consistently(t, e.ctx, "the new commit waits for /sync", 2*time.Second, func() (bool, string) {
		rel := e.release("web")
		c := apimeta.FindStatusCondition(rel.Status.Conditions, v1.ConditionApplied)
		return c != nil && c.Reason == v1.ReasonWaitingForSync && rel.Status.LastSuccessful.Commit == c1,
			fmt.Sprintf("Applied %+v, lastSuccessful %+v", c, rel.Status.LastSuccessful)
	})
}

// TestReceiverTenancy: a Receiver's secretRef names a Secret of its own namespace: a
// Secret of that name in another namespace is not read (SecretNotFound, no path), and
// a call signed with that Secret's token at the path it would give is 404 and
// refreshes nothing. A Receiver selects only the Releases of its namespace.
func TestReceiverTenancy(t *testing.T) {
	e, others := newEnv(t, receiver.Options{}, "rcv-other")
	other := others[0]
	c1 := e.repo.Commit(t, "main", "web 1.0.0", gittest.Chart("web", "web", "1.0.0", nil))
	e.createRelease("web", true)
	e.waitApplied("web", "True", v1.ReasonApplied)

	token := []byte("their-token")
	e.createSecret(other, "shared", map[string][]byte{v1.SecretKeyToken: token})
	e.createReceiver("github", v1.ReceiverGitHub, "shared", nil)
	rcv := e.waitReady("github", "False", v1.ReasonSecretNotFound)
	if rcv.Status.WebhookPath != "" {
		t.Errorf("webhookPath %q without a Secret in the namespace, want none", rcv.Status.WebhookPath)
	}
	if c := apimeta.FindStatusCondition(rcv.Status.Conditions, v1.ConditionReady); !strings.Contains(c.Message, e.ns) {
		t.Errorf("Ready message %q does not name the Receiver's namespace", c.Message)
	}
	e.repo.Commit(t, "main", "web 1.1.0", gittest.Chart("web", "web", "1.1.0", nil))
	body := []byte(`{"ref":"refs/heads/main"}`)
	for _, path := range []string{v1.ReceiverWebhookPath(token, "github", e.ns), v1.ReceiverWebhookPath(token, "github", other)} {
		if code, _ := e.call(path, body, map[string]string{"X-Hub-Signature-256": sign(token, body), "X-GitHub-Event": "push"}); code != http.StatusNotFound {
			t.Errorf("call at %s: %d, want 404", path, code)
		}
	}
	e.stillRendered("web", c1, 3*time.Second)
}

// TestReceiverLimits: a Receiver's calls beyond its rate are 429 (counted) before the
// Secret is read; a body beyond the bound is 413; another method than POST is 405.
func TestReceiverLimits(t *testing.T) {
	e, _ := newEnv(t, receiver.Options{Rate: 1, Burst: 3, MaxBodyBytes: 1024})
	token := []byte("tok")
	e.createReceiver("generic", v1.ReceiverGeneric, "generic-token", token)
	path := e.waitReady("generic", "True", v1.ReasonServing).Status.WebhookPath
	e.waitServed(path)

	big := []byte(strings.Repeat("x", 2048))
	if code, _ := e.call(path, big, map[string]string{v1.HeaderSignature: sign(token, big)}); code != http.StatusRequestEntityTooLarge {
		t.Errorf("a 2 KiB body: %d, want 413", code)
	}
	codes := map[int]int{}
	for range 6 {
		code, _ := e.call(path, []byte("{}"), map[string]string{v1.HeaderSignature: "sha256=00"})
		codes[code]++
	}
	if codes[http.StatusTooManyRequests] == 0 || codes[http.StatusUnauthorized] == 0 {
		t.Errorf("answers of 6 quick calls after one (burst 3): %v, want 401s then 429s", codes)
	}
	if got := e.calls(v1.ReceiverGeneric, receiver.ResultRateLimited); got != float64(codes[http.StatusTooManyRequests]) {
		t.Errorf("%v rate-limited calls counted, want %d", got, codes[http.StatusTooManyRequests])
	}
	// waitServed saw the GET answered 405.
	if got := e.calls(v1.ReceiverGeneric, receiver.ResultBadMethod); got == 0 {
		t.Error("no GET counted as method_not_allowed")
	}
}

// TestReceiverServerDisabled: without --receiver-bind-address a Receiver has its path
// and is Ready=False ReceiverServerDisabled (the other test environments run the
// server).
func TestReceiverServerDisabled(t *testing.T) {
	e, _ := newEnv(t, receiver.Options{BindAddress: noServer})
	token := []byte("tok")
	e.createReceiver("github", v1.ReceiverGitHub, "github-token", token)
	rcv := e.waitReady("github", "False", v1.ReasonReceiverServerDisabled)
	if want := v1.ReceiverWebhookPath(token, "github", e.ns); rcv.Status.WebhookPath != want {
		t.Errorf("webhookPath %q, want %q", rcv.Status.WebhookPath, want)
	}
}
