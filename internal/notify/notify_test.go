package notify_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/controller"
	"kumodo.io/convoy/internal/dev/inprocess"
	"kumodo.io/convoy/internal/hostmanager"
	"kumodo.io/convoy/internal/notify"
	"kumodo.io/convoy/internal/observer"
	"kumodo.io/convoy/internal/observer/drift"
	"kumodo.io/convoy/internal/testenv"
)

func appRelease(ns, name, values string, automatic bool) *v1.Release {
	return &v1.Release{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"tier": "web"}},
		Spec: v1.ReleaseSpec{
			Chart:      v1.ChartSource{Repository: chartsURL, Name: "app", Version: "0.1.0"},
			Values:     &runtime.RawExtension{Raw: []byte(values)},
			SyncPolicy: v1.SyncPolicy{Automatic: ptr.To(automatic), Interval: &metav1.Duration{Duration: time.Second}},
		},
	}
}

// startConvoy runs the controller (with its notifier) and the observer (with its drift
// checks, as `convoy observer` runs it) on the test's namespace until the end of the
// test.
func (e *env) startConvoy() { e.startConvoyWith(notify.Options{BaseDelay: 200 * time.Millisecond}) }

// startConvoyWith is startConvoy with the notifier's options no.
func (e *env) startConvoyWith(no notify.Options) {
	e.t.Helper()
	p, err := inprocess.Start(e.ctx, controlPlane.RestConfig(), inprocess.Options{
		Manager: hostmanager.Options{Namespaces: []string{e.ns}}, ChartCacheDir: e.t.TempDir(),
		Controller: controller.Options{Metrics: prometheus.NewRegistry(), AssessmentOverdueAfter: -1},
		Notify:     no,
		Observer:   observer.Options{Metrics: prometheus.NewRegistry(), Drift: drift.New(drift.Options{})},
	})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() {
		if err := p.Stop(); err != nil {
			e.t.Errorf("controller and observer: %v", err)
		}
	})
}

func (e *env) release(name string) *v1.Release {
	e.t.Helper()
	r := &v1.Release{}
	if err := e.c.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: name}, r); err != nil {
		e.t.Fatal(err)
	}
	return r
}

// An approval gate people hear about: a manual Release's new render makes the
// controller's notifier post ApprovalWaiting to Slack, with the render and the command
// that approves it; after /sync, the render reaching Ready posts Applied. The real
// controller and observer make the transitions.
func TestSlackApprovalWaitingThenApplied(t *testing.T) {
	e := newEnv(t)
	slack := newTarget(t)
	e.secret(e.ns, "slack", slack.url+"\n", "")
	e.alert("approvals", v1.AlertProviderSlack, "slack", "https://convoy.example.com", v1.AlertEventApprovalWaiting, v1.AlertEventApplied)
	e.startConvoy()
	e.create(appRelease(e.ns, "web", `{}`, false))

	got := e.waitRequests(slack, 1)
	rel := e.release("web")
	ref := v1.RenderRef(rel.Status.Render.Ref).Short()
	want := `{"text":"Release ` + e.ns + `/web: render ` + ref + ` waits for approval","blocks":[` +
		`{"type":"section","text":{"type":"mrkdwn","text":"*Release ` + e.ns + `/web: render ` + ref + ` waits for approval*\nrender ` + ref + `, chart 0.1.0\nWaitingForSync: ` +
		apimeta.FindStatusCondition(rel.Status.Conditions, v1.ConditionApplied).Message + `"}},` +
		`{"type":"section","text":{"type":"mrkdwn","text":"To act: ` + "`kubectl convoy release sync web -n " + e.ns + " --render " + ref + "`" + `"}},` +
		`{"type":"context","elements":[{"type":"mrkdwn","text":"<https://convoy.example.com/#/releases/` + e.ns + `/web|Open in convoy>"}]}]}`
	if diff := cmp.Diff(want, got[0].body); diff != "" {
		t.Errorf("ApprovalWaiting body (-want +got):\n%s", diff)
	}
	if ct := got[0].header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
	a := e.waitAlertReady("approvals", v1.ReasonDelivered)
	if d := a.Status.LastDelivery; d == nil || d.Event != v1.AlertEventApprovalWaiting || d.Object != (v1.AlertObjectReference{Kind: "Release", Name: "web"}) || d.Result != "200 OK" {
		t.Errorf("lastDelivery %+v, want ApprovalWaiting of Release web, 200 OK", a.Status.LastDelivery)
	}
	if a.Status.ObservedGeneration != a.Generation {
		t.Errorf("observedGeneration %d, want %d", a.Status.ObservedGeneration, a.Generation)
	}

	// The approval: the render is applied and becomes Ready.
	testenv.PostBoundSync(t, e.ctx, controlPlane.RestConfig(), e.ns, "web", ref, false)
	got = e.waitRequests(slack, 2)
	if !strings.HasPrefix(got[1].body, `{"text":"Release `+e.ns+`/web: render `+ref+` applied and Ready"`) {
		t.Errorf("second message %s, want Applied of render %s", got[1].body, ref)
	}
	// Nothing more: the periodic reconciles (every second) keep the state, and the
	// Alert's status is not written again (steady state).
	testenv.Eventually(t, e.ctx, "lastDelivery Applied", time.Minute, func() (bool, string) {
		a = e.getAlert("approvals")
		return a.Status.LastDelivery != nil && a.Status.LastDelivery.Event == v1.AlertEventApplied, fmt.Sprintf("%+v", a.Status)
	})
	testenv.Consistently(t, e.ctx, "no more messages, no status write", 3*time.Second, func() (bool, string) {
		rv := e.getAlert("approvals").ResourceVersion
		return len(slack.requests()) == 2 && rv == a.ResourceVersion, fmt.Sprintf("%v, resourceVersion %s (was %s)", slack.events(), rv, a.ResourceVersion)
	})
}

// A render whose Deployment never becomes Available fails its rollout at the
// failurePolicy's deadline and is rolled back: the webhook gets RolledBack, with the
// documented body and its HMAC-SHA256 signature.
func TestWebhookRolledBack(t *testing.T) {
	e := newEnv(t)
	hook := newTarget(t)
	e.secret(e.ns, "hook", hook.url, "s3cret")
	e.alert("rollouts", v1.AlertProviderWebhook, "hook", "", v1.AlertEventRolledBack)
	e.startConvoy()
	rel := appRelease(e.ns, "web", `{}`, true)
	rel.Spec.FailurePolicy = &v1.FailurePolicy{HealthTimeout: &metav1.Duration{Duration: 4 * time.Second}}
	e.create(rel)
	testenv.Eventually(t, e.ctx, "the first rollout succeeds", 2*time.Minute, func() (bool, string) {
		r := e.release("web")
		return r.Status.Rollout != nil && r.Status.Rollout.Phase == v1.RolloutSucceeded, fmt.Sprintf("%+v", r.Status.Rollout)
	})
	r := e.release("web")
	r.Spec.Values = &runtime.RawExtension{Raw: []byte(`{"nodeSelector":{"convoy.kumodo.io/test":"no-such-node"}}`)}
	if err := e.c.Update(e.ctx, r); err != nil {
		t.Fatal(err)
	}
	got := e.waitRequests(hook, 1)
	r = e.release("web")
	ro := r.Status.Rollout
	if ro == nil || ro.Phase != v1.RolloutRolledBack {
		t.Fatalf("rollout %+v when the webhook was called, want RolledBack", ro)
	}
	applied := apimeta.FindStatusCondition(r.Status.Conditions, v1.ConditionApplied)
	at := applied.LastTransitionTime.UTC()
	if ro.StartedAt.After(at) {
		at = ro.StartedAt.UTC()
	}
	want := `{"event":"RolledBack","object":{"kind":"Release","namespace":"` + e.ns + `","name":"web"},` +
		`"render":{"ref":"` + ro.RenderRef + `","chartVersion":"0.1.0","commit":""},` +
		`"reason":"RolledBack","message":` + jsonString(ro.Message) + `,"time":"` + at.Format(time.RFC3339) + `",` +
		`"action":"kubectl convoy release status web -n ` + e.ns + `"}`
	if diff := cmp.Diff(want, got[0].body); diff != "" {
		t.Errorf("RolledBack body (-want +got):\n%s", diff)
	}
	if sig, want := got[0].header.Get(v1.HeaderSignature), notify.Signature([]byte(got[0].body), []byte("s3cret")); sig != want {
		t.Errorf("%s: %q, want %q", v1.HeaderSignature, sig, want)
	}
}

func jsonString(s string) string {
	b := strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s)
	return `"` + b + `"`
}

// halt writes a Halted status to the ReleaseSet name (no set controller runs: the
// test writes what it would).
func (e *env) halt(name, reason, message string) { e.haltAt(name, reason, message, time.Now()) }

// haltAt is halt with the condition's lastTransitionTime at.
func (e *env) haltAt(name, reason, message string, at time.Time) {
	e.t.Helper()
	s := &v1.ReleaseSet{}
	if err := e.c.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: name}, s); err != nil {
		e.t.Fatal(err)
	}
	s.Status.Revision = "sha256:5d41402abc0000000000000000000000000000000000000000000000000000ab"
	s.Status.Source = &v1.ReleaseSetSource{ChartVersion: "0.1.0"}
	s.Status.Conditions = []metav1.Condition{{Type: v1.ConditionHalted, Status: metav1.ConditionTrue,
		Reason: reason, Message: message, LastTransitionTime: metav1.NewTime(at)}}
	if err := e.c.Status().Update(e.ctx, s); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) releaseSet(name string) {
	e.t.Helper()
	e.create(&v1.ReleaseSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name, Labels: map[string]string{"tier": "web"}},
		Spec: v1.ReleaseSetSpec{
			ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"fleet": "none"}},
			Template: v1.ReleaseTemplate{Spec: v1.ReleaseSpec{
				Chart: v1.ChartSource{Repository: chartsURL, Name: "app", Version: "0.1.0"}}},
		},
	})
}

// A halted ReleaseSet: the webhook answers 500, then 200; the notification is retried
// with backoff and delivered, the failure is visible meanwhile (metric, Event); a
// restart of the notifier does not send it again, and a new halt after the restart is
// sent.
func TestHaltedRetriedAndNotRepeatedAfterRestart(t *testing.T) {
	e := newEnv(t)
	hook := newTarget(t, 500)
	e.secret(e.ns, "hook", hook.url, "tok")
	e.alert("fleet", v1.AlertProviderWebhook, "hook", "", v1.AlertEventHalted)
	e.releaseSet("fleet")
	n := e.startNotifier()
	e.halt("fleet", v1.ReasonReleaseFailed, "Release fleet-a failed its rollout")

	got := e.waitRequests(hook, 2)
	if got[0].body != got[1].body || got[0].header.Get(v1.HeaderSignature) != got[1].header.Get(v1.HeaderSignature) {
		t.Errorf("the retry differs from the first attempt:\n%s\n%s", got[0].body, got[1].body)
	}
	if !strings.Contains(got[1].body, `"event":"Halted"`) || !strings.Contains(got[1].body, `"action":"kubectl convoy releaseset status fleet -n `+e.ns+`"`) {
		t.Errorf("body %s, want Halted with the releaseset status command", got[1].body)
	}
	a := e.waitAlertReady("fleet", v1.ReasonDelivered)
	if d := a.Status.LastDelivery; d == nil || d.Event != v1.AlertEventHalted || d.Result != "200 OK" || d.Object.Kind != "ReleaseSet" {
		t.Errorf("lastDelivery %+v, want Halted of ReleaseSet fleet, 200 OK", d)
	}
	if f, d := n.count(v1.AlertProviderWebhook, "failed"), n.count(v1.AlertProviderWebhook, "delivered"); f != 1 || d != 1 {
		t.Errorf("convoy_alert_deliveries_total: failed %d, delivered %d; want 1 and 1", f, d)
	}
	evs := &corev1.EventList{}
	testenv.Eventually(t, e.ctx, "a DeliveryFailed Event on the Alert", 30*time.Second, func() (bool, string) {
		if err := e.c.List(e.ctx, evs, client.InNamespace(e.ns)); err != nil {
			return false, err.Error()
		}
		for _, ev := range evs.Items {
			if ev.InvolvedObject.Kind == "Alert" && ev.InvolvedObject.Name == "fleet" && ev.Reason == v1.ReasonDeliveryFailed {
				return true, ""
			}
		}
		return false, fmt.Sprintf("%d events", len(evs.Items))
	})

	// A restart: the new notifier finds the set halted as the old one left it.
	n.stop()
	n = e.startNotifier()
	testenv.Consistently(t, e.ctx, "no duplicate after the restart", 3*time.Second, func() (bool, string) {
		return len(hook.requests()) == 2, fmt.Sprint(hook.events())
	})
	// It does notify: a new halt (another reason) is sent.
	e.halt("fleet", v1.ReasonStageDeadlineExceeded, "stage main did not complete within 10m")
	got = e.waitRequests(hook, 3)
	if !strings.Contains(got[2].body, `"reason":"StageDeadlineExceeded"`) {
		t.Errorf("third body %s, want the new halt", got[2].body)
	}

	// Catch-up: what happens while no notifier runs is sent by the next one, as the
	// status dates it after the Alert's last delivery.
	last := e.waitAlertReady("fleet", v1.ReasonDelivered).Status.LastDelivery.Time.Time
	n.stop()
	e.haltAt("fleet", v1.ReasonMassRemoval, "3 Releases would be deleted at once", last.Add(2*time.Second))
	e.startNotifier()
	got = e.waitRequests(hook, 4)
	if !strings.Contains(got[3].body, `"reason":"MassRemoval"`) || !strings.Contains(got[3].body, `"action":"kubectl convoy releaseset promote fleet -n `+e.ns+`"`) {
		t.Errorf("fourth body %s, want the halt of the downtime, with the promote command", got[3].body)
	}
	testenv.Consistently(t, e.ctx, "nothing else after the second restart", 2*time.Second, func() (bool, string) {
		return len(hook.requests()) == 4, fmt.Sprint(hook.events())
	})
}

// Tenancy: an Alert reads the Secret of its own namespace only. The Secret it names
// exists in another namespace (pointing to a server that records calls): the Alert
// reports SecretNotFound and nothing reaches that server; once the Secret exists in
// the Alert's namespace, the retried notification is delivered there.
func TestSecretOfItsOwnNamespaceOnly(t *testing.T) {
	e := newEnv(t)
	other := testenv.Namespace(t, e.ctx, e.c, "notify-other", nil)
	foreign := newTarget(t)
	e.secret(other, "hook", foreign.url, "")
	e.alert("mine", v1.AlertProviderWebhook, "hook", "", v1.AlertEventApprovalWaiting)
	e.startNotifier(e.ns, other)

	// The Alert's Secret is checked when the Alert is created.
	a := e.waitAlertReady("mine", v1.ReasonSecretNotFound)
	c := apimeta.FindStatusCondition(a.Status.Conditions, v1.ConditionReady)
	if c.Status != metav1.ConditionFalse || !strings.Contains(c.Message, "Secret "+e.ns+"/hook not found") {
		t.Errorf("Ready %+v, want False, naming Secret %s/hook", c, e.ns)
	}

	// A manual Release's render waits for /sync (the test writes the status).
	rel := appRelease(e.ns, "web", `{}`, false)
	e.create(rel)
	rel = e.release("web")
	now := metav1.Now()
	rel.Status.Render = &v1.RenderStatus{Ref: "sha256:" + strings.Repeat("ab", 32), ChartVersion: "0.1.0", RenderedAt: &now}
	rel.Status.Conditions = []metav1.Condition{{Type: v1.ConditionApplied, Status: metav1.ConditionFalse,
		Reason: v1.ReasonWaitingForSync, Message: "render abababab waits for /sync", LastTransitionTime: now}}
	if err := e.c.Status().Update(e.ctx, rel); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, e.ctx, "a SecretNotFound delivery", time.Minute, func() (bool, string) {
		a = e.getAlert("mine")
		d := a.Status.LastDelivery
		return d != nil && d.Event == v1.AlertEventApprovalWaiting && strings.Contains(d.Result, "not found"), fmt.Sprintf("%+v", a.Status)
	})
	if n := len(foreign.requests()); n != 0 {
		t.Fatalf("the server of the other namespace's Secret got %d requests", n)
	}

	// The Secret in the Alert's namespace: the retry delivers.
	mine := newTarget(t)
	e.secret(e.ns, "hook", mine.url, "")
	got := e.waitRequests(mine, 1)
	if !strings.Contains(got[0].body, `"event":"ApprovalWaiting"`) || got[0].header.Get(v1.HeaderSignature) != "" {
		t.Errorf("body %s, signature %q: want ApprovalWaiting, unsigned (no token)", got[0].body, got[0].header.Get(v1.HeaderSignature))
	}
	e.waitAlertReady("mine", v1.ReasonDelivered)
	if n := len(foreign.requests()); n != 0 {
		t.Errorf("the server of the other namespace's Secret got %d requests", n)
	}
}

// Microsoft Teams: a Release whose new render reached Ready (the test writes the
// status) posts Applied as an Adaptive Card, exactly.
func TestTeamsApplied(t *testing.T) {
	e := newEnv(t)
	teams := newTarget(t)
	e.secret(e.ns, "teams", teams.url, "")
	e.alert("team", v1.AlertProviderMSTeams, "teams", "https://convoy.example.com/", v1.AlertEventApplied)
	e.create(appRelease(e.ns, "web", `{}`, true))
	e.startNotifier()

	rel := e.release("web")
	ref := "sha256:9a2b0c1d2e" + strings.Repeat("0", 54)
	now := metav1.Now()
	rel.Status.Render = &v1.RenderStatus{Ref: ref, ChartVersion: "0.1.0", Commit: "4f2c0d9e8b7a6f5e4d3c", RenderedAt: &now}
	rel.Status.LastSuccessful = &v1.LastSuccessful{RenderRef: ref, ChartVersion: "0.1.0", Commit: "4f2c0d9e8b7a6f5e4d3c", AppliedAt: &now}
	rel.Status.Conditions = []metav1.Condition{
		{Type: v1.ConditionApplied, Status: metav1.ConditionTrue, Reason: v1.ReasonApplied, Message: "render 9a2b0c1d2e is applied", LastTransitionTime: now},
		{Type: v1.ConditionHealthy, Status: metav1.ConditionTrue, Reason: v1.ReasonHealthy, Message: "every object is healthy", LastTransitionTime: now},
		{Type: v1.ConditionReady, Status: metav1.ConditionTrue, Reason: "Ready", Message: "Applied and Healthy", LastTransitionTime: now},
	}
	if err := e.c.Status().Update(e.ctx, rel); err != nil {
		t.Fatal(err)
	}
	got := e.waitRequests(teams, 1)
	obj := "Release " + e.ns + "/web"
	want := `{"type":"message","attachments":[{"contentType":"application/vnd.microsoft.card.adaptive","contentUrl":null,"content":{` +
		`"$schema":"http://adaptivecards.io/schemas/adaptive-card.json","type":"AdaptiveCard","version":"1.4","body":[` +
		`{"type":"TextBlock","text":"` + obj + `: render 9a2b0c1d2e applied and Ready","weight":"Bolder","size":"Medium","wrap":true},` +
		`{"type":"FactSet","facts":[{"title":"Object","value":"` + obj + `"},{"title":"Render","value":"render 9a2b0c1d2e, chart 0.1.0, commit 4f2c0d9e8b7a"},{"title":"Reason","value":"Ready"}]},` +
		`{"type":"TextBlock","text":"Applied and Healthy","wrap":true},` +
		`{"type":"TextBlock","text":"To act: kubectl convoy release status web -n ` + e.ns + `","fontType":"Monospace","wrap":true}],` +
		`"actions":[{"type":"Action.OpenUrl","title":"Open in convoy","url":"https://convoy.example.com/#/releases/` + e.ns + `/web"}]}}]}`
	if diff := cmp.Diff(want, got[0].body); diff != "" {
		t.Errorf("Teams body (-want +got):\n%s", diff)
	}
	e.waitAlertReady("team", v1.ReasonDelivered)
}
