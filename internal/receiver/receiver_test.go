package receiver_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/controller"
	"kumodo.io/convoy/internal/localcluster"
	"kumodo.io/convoy/internal/receiver"
	"kumodo.io/convoy/internal/render/gittest"
	"kumodo.io/convoy/internal/testenv"
	"kumodo.io/convoy/internal/wiring"
)

const (
	gitUser     = "deploy"
	gitPassword = "s3cret-git-password"
	// hour is the interval of the tests' Releases: only a receiver's refresh
	// explains a new commit rendered within a test.
	hour = time.Hour
)

// env is a test's namespaces, an admin client, and the controller (with its
// receiver server) on those namespaces.
type env struct {
	t       *testing.T
	ctx     context.Context
	ns      string
	client  client.Client
	url     string // of the receiver server
	metrics *prometheus.Registry
	git     *gittest.Server
	repo    *gittest.Repo
}

// noServer as Options.BindAddress starts no receiver server; otherwise newEnv serves
// on a free loopback port.
const noServer = "none"

// newEnv makes the test's namespace (and the others it asks for, by prefix) and a Git
// repository with the chart web 1.0.0 on main, and starts the controller.
func newEnv(t *testing.T, o receiver.Options, others ...string) (*env, []string) {
	t.Helper()
	testenv.Integration(t)
	ctx := testenv.Context(t, 3*time.Minute)
	scheme, err := controller.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	c := testenv.Client(t, host.RestConfig(), scheme)
	e := &env{t: t, ctx: ctx, client: c, metrics: prometheus.NewRegistry()}
	e.ns = testenv.Namespace(t, ctx, c, "rcv", nil)
	namespaces := []string{e.ns}
	for _, p := range others {
		namespaces = append(namespaces, testenv.Namespace(t, ctx, c, p, nil))
	}
	e.git = gittest.NewServer(t, gitUser, gitPassword)
	e.repo = e.git.Repo(t, "charts")
	e.createSecret(e.ns, "git-creds", map[string][]byte{"username": []byte(gitUser), "password": []byte(gitPassword), "caFile": e.git.CA()})

	if o.BindAddress == noServer {
		o.BindAddress = ""
	} else {
		ports, err := localcluster.FreePorts(1)
		if err != nil {
			t.Fatal(err)
		}
		o.BindAddress = "127.0.0.1:" + strconv.Itoa(ports[0])
		e.url = "http://" + o.BindAddress
	}
	mgr, err := controller.NewManager(host.RestConfig(), controller.ManagerOptions{
		Resync: 10 * time.Minute, MetricsBindAddress: "0", HealthProbeBindAddress: "0", Namespaces: namespaces,
	})
	if err != nil {
		t.Fatal(err)
	}
	fetcher := testenv.Fetcher(t)
	if _, err := wiring.Setup(ctx, mgr, wiring.Options{Release: controller.Options{Source: fetcher, Metrics: e.metrics,
		SkipNameValidation: true, AssessmentOverdueAfter: -1}, Receiver: o}); err != nil {
		t.Fatal(err)
	}
	testenv.StartManager(t, ctx, "manager", mgr)
	return e, namespaces[1:]
}

func (e *env) createSecret(ns, name string, data map[string][]byte) {
	e.t.Helper()
	if err := e.client.Create(e.ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: data}); err != nil {
		e.t.Fatalf("create Secret %s/%s: %v", ns, name, err)
	}
}

// createRelease creates a Release of the chart web on main, reconciled every hour,
// labelled app=web; automatic applies without /sync.
func (e *env) createRelease(name string, automatic bool) {
	e.t.Helper()
	rel := &v1.Release{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name, Labels: map[string]string{"app": "web"}},
		Spec: v1.ReleaseSpec{Chart: v1.ChartSource{Git: &v1.GitChartSource{URL: e.git.RepoURL("charts"),
			Ref: v1.GitRef{Branch: "main"}, Path: "web", SecretRef: &v1.LocalObjectReference{Name: "git-creds"}}}},
	}
	rel.Spec.SyncPolicy.Interval = &metav1.Duration{Duration: hour}
	if automatic {
		rel.Spec.SyncPolicy.Automatic = ptr.To(true)
	}
	if err := e.client.Create(e.ctx, rel); err != nil {
		e.t.Fatalf("create Release %s: %v", name, err)
	}
}

// createReceiver creates a Receiver of typ with the Secret secret (created in the
// test's namespace with token unless token is nil) selecting app=web, and returns
// its webhook path once the controller wrote it.
func (e *env) createReceiver(name string, typ v1.ReceiverType, secret string, token []byte) *v1.Receiver {
	e.t.Helper()
	if token != nil {
		e.createSecret(e.ns, secret, map[string][]byte{v1.SecretKeyToken: token})
	}
	rcv := &v1.Receiver{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name}, Spec: v1.ReceiverSpec{
		Type: typ, SecretRef: v1.LocalObjectReference{Name: secret},
		Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
	}}
	if err := e.client.Create(e.ctx, rcv); err != nil {
		e.t.Fatalf("create Receiver %s: %v", name, err)
	}
	return rcv
}

// waitServed waits until the receiver server finds path (its cache has the
// Receiver's status): a GET is 405 there, 404 elsewhere.
func (e *env) waitServed(path string) {
	e.t.Helper()
	testenv.Eventually(e.t, e.ctx, "the receiver server serves "+path, 10*time.Second, func() (bool, string) {
		req, _ := http.NewRequestWithContext(e.ctx, http.MethodGet, e.url+path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false, err.Error()
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusMethodNotAllowed, resp.Status
	})
}

func (e *env) receiver(name string) *v1.Receiver {
	e.t.Helper()
	rcv := &v1.Receiver{}
	if err := e.client.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: name}, rcv); err != nil {
		e.t.Fatalf("get Receiver %s: %v", name, err)
	}
	return rcv
}

// waitReady waits for the Receiver's Ready condition to have status and reason.
func (e *env) waitReady(name, status, reason string) *v1.Receiver {
	e.t.Helper()
	var rcv *v1.Receiver
	testenv.Eventually(e.t, e.ctx, fmt.Sprintf("Receiver %s Ready=%s/%s", name, status, reason), 30*time.Second, func() (bool, string) {
		rcv = e.receiver(name)
		c := apimeta.FindStatusCondition(rcv.Status.Conditions, v1.ConditionReady)
		if c == nil {
			return false, "no Ready condition"
		}
		return string(c.Status) == status && c.Reason == reason && rcv.Status.ObservedGeneration == rcv.Generation,
			fmt.Sprintf("Ready=%s/%s (%s), observedGeneration %d", c.Status, c.Reason, c.Message, rcv.Status.ObservedGeneration)
	})
	return rcv
}

func (e *env) release(name string) *v1.Release {
	e.t.Helper()
	return testenv.Release(e.t, e.ctx, e.client, e.ns, name)
}

func renderCommit(rel *v1.Release) string {
	if rel.Status.Render == nil {
		return ""
	}
	return rel.Status.Render.Commit
}

// waitRendered waits, for at most within, until the Release's status.render names commit.
func (e *env) waitRendered(name, commit string, within time.Duration) *v1.Release {
	e.t.Helper()
	var rel *v1.Release
	testenv.Eventually(e.t, e.ctx, fmt.Sprintf("Release %s rendered at %s", name, commit), within, func() (bool, string) {
		rel = e.release(name)
		return renderCommit(rel) == commit, fmt.Sprintf("status.render %+v", rel.Status.Render)
	})
	return rel
}

// stillRendered checks for d that the Release's render stays at commit.
func (e *env) stillRendered(name, commit string, d time.Duration) {
	e.t.Helper()
	testenv.Consistently(e.t, e.ctx, fmt.Sprintf("Release %s still rendered at %s", name, commit), d, func() (bool, string) {
		rel := e.release(name)
		return renderCommit(rel) == commit, fmt.Sprintf("status.render %+v", rel.Status.Render)
	})
}

func (e *env) waitApplied(name, status, reason string) *v1.Release {
	e.t.Helper()
	return testenv.WaitApplied(e.t, e.ctx, e.client, e.ns, name, status, reason, time.Minute)
}

// call POSTs body to path of the receiver server with the headers and returns the
// status and the answer.
func (e *env) call(path string, body []byte, h map[string]string) (int, string) {
	e.t.Helper()
	req, err := http.NewRequestWithContext(e.ctx, http.MethodPost, e.url+path, bytes.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	for k, v := range h {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(b))
}

func sign(token, body []byte) string {
	return v1.SignaturePrefix + hex.EncodeToString(receiver.Sign(token, body))
}

// calls is the count of the receiver server's calls of type and result.
func (e *env) calls(typ v1.ReceiverType, result string) float64 {
	e.t.Helper()
	return testenv.Counter(e.t, e.metrics, "convoy_receiver_calls_total", map[string]string{"type": string(typ), "result": result})
}

// TestReceiverRefreshesOnSignedCalls: a Release reconciled every hour renders a newly
// pushed commit within seconds of a signed call: GitHub's push (X-Hub-Signature-256),
// GitLab's (X-Gitlab-Token), a generic call (X-Convoy-Signature); a GitHub ping is
// answered and recorded but refreshes nothing. A call with a wrong signature is
// refused with 401, counted, not recorded, and refreshes nothing; an unknown path is
// 404. Each authenticated call is status.lastCall.
func TestReceiverRefreshesOnSignedCalls(t *testing.T) {
	e, _ := newEnv(t, receiver.Options{})
	c1 := e.repo.Commit(t, "main", "web 1.0.0", gittest.Chart("web", "web", "1.0.0", nil))
	e.createRelease("web", true)
	e.waitApplied("web", "True", v1.ReasonApplied)
	if got := renderCommit(e.release("web")); got != c1 {
		t.Fatalf("render commit %s, want %s", got, c1)
	}
	ghToken, glToken, genToken := []byte("gh-token"), []byte("gl-token"), []byte("generic-token")
	e.createReceiver("github", v1.ReceiverGitHub, "github-token", ghToken)
	e.createReceiver("gitlab", v1.ReceiverGitLab, "gitlab-token", glToken)
	e.createReceiver("generic", v1.ReceiverGeneric, "generic-token", genToken)
	gh := e.waitReady("github", "True", v1.ReasonServing).Status.WebhookPath
	gl := e.waitReady("gitlab", "True", v1.ReasonServing).Status.WebhookPath
	gen := e.waitReady("generic", "True", v1.ReasonServing).Status.WebhookPath
	for _, p := range []string{gh, gl, gen} {
		e.waitServed(p)
	}
	if want := v1.ReceiverWebhookPath(ghToken, "github", e.ns); gh != want {
		t.Errorf("webhookPath %s, want %s", gh, want)
	}

	body := []byte(`{"ref":"refs/heads/main"}`)
	// A ping: 200, recorded, nothing refreshed.
	if code, msg := e.call(gh, body, map[string]string{"X-Hub-Signature-256": sign(ghToken, body), "X-GitHub-Event": "ping"}); code != 200 {
		t.Fatalf("ping: %d %s, want 200", code, msg)
	}
	testenv.Eventually(t, e.ctx, "the ping in lastCall", 10*time.Second, func() (bool, string) {
		lc := e.receiver("github").Status.LastCall
		return lc != nil && lc.Result == "ping: nothing to refresh", fmt.Sprintf("lastCall %+v", lc)
	})

	steps := []struct {
		name    string
		path    string
		typ     v1.ReceiverType
		headers func(body []byte) map[string]string
	}{
		{"github", gh, v1.ReceiverGitHub, func(b []byte) map[string]string {
			return map[string]string{"X-Hub-Signature-256": sign(ghToken, b), "X-GitHub-Event": "push"}
		}},
		{"gitlab", gl, v1.ReceiverGitLab, func([]byte) map[string]string {
			return map[string]string{"X-Gitlab-Token": string(glToken), "X-Gitlab-Event": "Push Hook"}
		}},
		{"generic", gen, v1.ReceiverGeneric, func(b []byte) map[string]string {
			return map[string]string{v1.HeaderSignature: sign(genToken, b)}
		}},
	}
	for i, s := range steps {
		version := fmt.Sprintf("1.%d.0", i+1)
		commit := e.repo.Commit(t, "main", "web "+version, gittest.Chart("web", "web", version, nil))
		code, msg := e.call(s.path, body, s.headers(body))
		if code != 200 {
			t.Fatalf("%s call: %d %s, want 200", s.name, code, msg)
		}
		start := time.Now()
		e.waitRendered("web", commit, 15*time.Second)
		t.Logf("%s: commit rendered %s after the call", s.name, time.Since(start).Round(time.Millisecond))
		lc := e.receiver(s.name).Status.LastCall
		if lc == nil || !strings.Contains(lc.Result, "refreshing 1 Release and 0 ReleaseSets") {
			t.Errorf("%s: lastCall %+v, want a refresh of 1 Release", s.name, lc)
		}
		if got := e.calls(s.typ, receiver.ResultAccepted); got != 1 {
			t.Errorf("%s: %v accepted calls counted, want 1", s.name, got)
		}
	}
	head := renderCommit(e.release("web"))

	// A wrong signature: 401, counted, not recorded, nothing refreshed.
	before := e.receiver("github").Status.LastCall
	e.repo.Commit(t, "main", "web 2.0.0", gittest.Chart("web", "web", "2.0.0", nil))
	code, _ := e.call(gh, body, map[string]string{"X-Hub-Signature-256": sign([]byte("guess"), body), "X-GitHub-Event": "push"})
	if code != http.StatusUnauthorized {
		t.Errorf("wrong signature: %d, want 401", code)
	}
	code, _ = e.call(gen, body, map[string]string{v1.HeaderSignature: sign(ghToken, body)})
	if code != http.StatusUnauthorized {
		t.Errorf("generic call signed with another token: %d, want 401", code)
	}
	e.stillRendered("web", head, 3*time.Second)
	if got := e.calls(v1.ReceiverGitHub, receiver.ResultUnauthorized); got != 1 {
		t.Errorf("%v unauthorized GitHub calls counted, want 1", got)
	}
	if after := e.receiver("github").Status.LastCall; !after.Time.Equal(&before.Time) || after.Result != before.Result {
		t.Errorf("lastCall changed on a refused call: %+v, was %+v", after, before)
	}
	// An unknown event: 400.
	if code, _ := e.call(gh, body, map[string]string{"X-Hub-Signature-256": sign(ghToken, body), "X-GitHub-Event": "issues"}); code != http.StatusBadRequest {
		t.Errorf("issues event: %d, want 400", code)
	}
	// An unknown path, and a path that is not a webhook path: 404.
	unknown := v1.ReceiverWebhookPath([]byte("nobody"), "github", e.ns)
	if code, _ := e.call(unknown, body, map[string]string{"X-Hub-Signature-256": sign(ghToken, body), "X-GitHub-Event": "push"}); code != http.StatusNotFound {
		t.Errorf("unknown path: %d, want 404", code)
	}
	if code, _ := e.call("/metrics", nil, nil); code != http.StatusNotFound {
		t.Errorf("/metrics: %d, want 404", code)
	}
	if got := e.calls("", receiver.ResultNotFound); got != 2 {
		t.Errorf("%v calls of unknown paths counted, want 2", got)
	}
	e.stillRendered("web", head, time.Second)
}
