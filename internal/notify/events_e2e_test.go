package notify_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/controller"
	"kumodo.io/convoy/internal/notify"
	"kumodo.io/convoy/internal/policy"
	"kumodo.io/convoy/internal/releaseset"
	"kumodo.io/convoy/internal/source"
	"kumodo.io/convoy/internal/testenv"
	"kumodo.io/convoy/internal/wiring"
)

// webhookBody is the documented body of a webhook notification.
type webhookBody struct {
	Event  string `json:"event"`
	Object struct {
		Kind      string `json:"kind"`
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
	} `json:"object"`
	Render struct {
		Ref          string `json:"ref"`
		ChartVersion string `json:"chartVersion"`
		Commit       string `json:"commit"`
	} `json:"render"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
	Time    string `json:"time"`
	Action  string `json:"action"`
}

// decodeWebhook decodes a webhook body, refusing any field the documentation does not
// name, and checks its signature with token.
func decodeWebhook(t *testing.T, r request, token string) webhookBody {
	t.Helper()
	var b webhookBody
	dec := json.NewDecoder(bytes.NewReader([]byte(r.body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		t.Fatalf("webhook body %s: %v", r.body, err)
	}
	if sig, want := r.header.Get(v1.HeaderSignature), notify.Signature([]byte(r.body), []byte(token)); sig != want {
		t.Errorf("%s of the %s body: %q, want %q", v1.HeaderSignature, b.Event, sig, want)
	}
	return b
}

// wantBody builds the expected webhook body.
func wantBody(event, ns, name, kind, ref, chartVersion, commit, reason, message string, at time.Time, action string) webhookBody {
	var b webhookBody
	b.Event, b.Reason, b.Message, b.Action = event, reason, message, action
	b.Object.Kind, b.Object.Namespace, b.Object.Name = kind, ns, name
	b.Render.Ref, b.Render.ChartVersion, b.Render.Commit = ref, chartVersion, commit
	b.Time = at.UTC().Format(time.RFC3339)
	return b
}

// byEvent waits until tg received a request of each event and returns them by event.
func (e *env) byEvent(tg *target, events ...v1.AlertEvent) map[v1.AlertEvent]request {
	e.t.Helper()
	out := map[v1.AlertEvent]request{}
	testenv.Eventually(e.t, e.ctx, fmt.Sprintf("requests of %v", events), 2*time.Minute, func() (bool, string) {
		for _, r := range tg.requests() {
			var b struct {
				Event v1.AlertEvent `json:"event"`
			}
			_ = json.Unmarshal([]byte(r.body), &b)
			if _, ok := out[b.Event]; !ok {
				out[b.Event] = r
			}
		}
		for _, ev := range events {
			if _, ok := out[ev]; !ok {
				return false, fmt.Sprintf("received %v", tg.events())
			}
		}
		return true, ""
	})
	return out
}

func (e *env) inventory(name string) *v1.ReleaseInventory {
	e.t.Helper()
	inv := &v1.ReleaseInventory{}
	if err := e.c.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: name}, inv); err != nil {
		e.t.Fatal(err)
	}
	return inv
}

// The failures of a Release each reach a webhook end to end, with the documented body
// and its signature, made by the real controller and observer: a PreApply hook Job
// that cannot run (HookFailed), a first render whose Deployment never becomes
// Available (RolloutFailed: there is nothing to roll back to), and the Deployment of a
// manual Release changed on the cluster after its apply (DriftDetected).
func TestWebhookHookFailedRolloutFailedDriftDetected(t *testing.T) {
	e := newEnv(t)
	hook := newTarget(t)
	e.secret(e.ns, "hook", hook.url, "tok")
	e.alert("failures", v1.AlertProviderWebhook, "hook", "",
		v1.AlertEventHookFailed, v1.AlertEventRolloutFailed, v1.AlertEventDriftDetected)
	e.startConvoy()

	hooked := appRelease(e.ns, "hooked", `{}`, true)
	hooked.Lifecycle = &v1.Lifecycle{Hooks: []v1.Hook{{Name: "migrate", Phase: v1.HookPreApply, Timeout: &metav1.Duration{Duration: 2 * time.Second},
		Job: &batchv1.JobSpec{BackoffLimit: ptr.To[int32](0), Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever, NodeSelector: map[string]string{"convoy.kumodo.io/test": "no-such-node"},
			Containers: []corev1.Container{{Name: "migrate", Image: "registry.example/migrate:1"}}}}}}}}
	e.create(hooked)
	broken := appRelease(e.ns, "broken", `{"nodeSelector":{"convoy.kumodo.io/test":"no-such-node"}}`, true)
	broken.Spec.FailurePolicy = &v1.FailurePolicy{HealthTimeout: &metav1.Duration{Duration: 3 * time.Second}}
	e.create(broken)
	// Manual: a drift stays until /sync (automatic mode would put it back at once).
	e.create(appRelease(e.ns, "drifted", `{}`, false))
	testenv.Eventually(t, e.ctx, "Release drifted rendered", time.Minute, func() (bool, string) {
		r := e.release("drifted")
		return r.Status.Render != nil, fmt.Sprintf("%+v", r.Status)
	})
	testenv.PostBoundSync(t, e.ctx, controlPlane.RestConfig(), e.ns, "drifted", v1.RenderRef(e.release("drifted").Status.Render.Ref).Short(), false)
	testenv.Eventually(t, e.ctx, "Release drifted Ready", 2*time.Minute, func() (bool, string) {
		r := e.release("drifted")
		c := apimeta.FindStatusCondition(r.Status.Conditions, v1.ConditionReady)
		return c != nil && c.Status == metav1.ConditionTrue, fmt.Sprintf("%+v", r.Status.Conditions)
	})
	// Someone changes the Deployment on the cluster.
	dep := &appsv1.Deployment{}
	if err := e.c.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: "drifted"}, dep); err != nil {
		t.Fatal(err)
	}
	dep.Spec.Template.Spec.Containers[0].Image = "registry.example/changed-by-hand:1"
	if err := e.c.Update(e.ctx, dep); err != nil {
		t.Fatal(err)
	}

	got := e.byEvent(hook, v1.AlertEventHookFailed, v1.AlertEventRolloutFailed, v1.AlertEventDriftDetected)
	status := func(ns, name string) string { return "kubectl convoy release status " + name + " -n " + ns }

	r := e.release("hooked")
	applied := apimeta.FindStatusCondition(r.Status.Conditions, v1.ConditionApplied)
	want := wantBody("HookFailed", e.ns, "hooked", "Release", r.Status.Render.Ref, "0.1.0", "", v1.ReasonHookFailed,
		applied.Message, applied.LastTransitionTime.Time, status(e.ns, "hooked"))
	if diff := cmp.Diff(want, decodeWebhook(t, got[v1.AlertEventHookFailed], "tok")); diff != "" {
		t.Errorf("HookFailed body (-want +got):\n%s", diff)
	}

	r = e.release("broken")
	ro := r.Status.Rollout
	if ro == nil || ro.Phase != v1.RolloutFailed {
		t.Fatalf("rollout %+v, want Failed", ro)
	}
	at := apimeta.FindStatusCondition(r.Status.Conditions, v1.ConditionApplied).LastTransitionTime.Time
	if ro.StartedAt.After(at) {
		at = ro.StartedAt.Time
	}
	want = wantBody("RolloutFailed", e.ns, "broken", "Release", ro.RenderRef, "0.1.0", "", "RolloutFailed",
		ro.Message, at, status(e.ns, "broken"))
	if diff := cmp.Diff(want, decodeWebhook(t, got[v1.AlertEventRolloutFailed], "tok")); diff != "" {
		t.Errorf("RolloutFailed body (-want +got):\n%s", diff)
	}
	if !strings.Contains(ro.Message, "no previous render") {
		t.Errorf("rollout message %q, want it to say there is nothing to roll back to", ro.Message)
	}

	inv := e.inventory("drifted")
	d := inv.Status.Drift
	if d == nil || len(d.Drifted) != 1 || d.Since == nil {
		t.Fatalf("inventory drift %+v, want the Deployment", d)
	}
	msg := fmt.Sprintf("1 object differs from the render on the cluster: Deployment %s/drifted", e.ns)
	if len(d.Drifted[0].Fields) > 0 {
		msg += " (" + strings.Join(d.Drifted[0].Fields, ", ") + ")"
	}
	want = wantBody("DriftDetected", e.ns, "drifted", "Release", inv.Status.RenderRef, "0.1.0", "", "DriftDetected",
		msg, d.Since.Time, "kubectl convoy release diff drifted -n "+e.ns)
	if diff := cmp.Diff(want, decodeWebhook(t, got[v1.AlertEventDriftDetected], "tok")); diff != "" {
		t.Errorf("DriftDetected body (-want +got):\n%s", diff)
	}
	// Each once.
	testenv.Consistently(t, e.ctx, "no other notification", 2*time.Second, func() (bool, string) {
		return len(hook.requests()) == 3, fmt.Sprint(hook.events())
	})
}

// An approval gate of a fleet: a ReleaseSet whose only stage is Manual waits for
// /promote, and the webhook gets PromotionWaiting with the set's revision and the
// promote command, once; the real controller drives the set over a Cluster that is
// the local control plane.
func TestWebhookPromotionWaiting(t *testing.T) {
	e := newEnv(t)
	hook := newTarget(t)
	e.secret(e.ns, "hook", hook.url, "tok")
	e.alert("gate", v1.AlertProviderWebhook, "hook", "", v1.AlertEventPromotionWaiting)
	kubeconfig, err := os.ReadFile(controlPlane.KubeconfigPath())
	if err != nil {
		t.Fatal(err)
	}
	e.create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "kubeconfig"}, Data: map[string][]byte{"value": kubeconfig}})
	fleet := testenv.RandomSuffix()
	cl := &v1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "notify-" + fleet, Labels: map[string]string{"fleet": fleet}},
		Spec:       v1.ClusterSpec{Kubeconfig: v1.KubeconfigSource{SecretRef: v1.SecretKeyReference{Namespace: e.ns, Name: "kubeconfig"}}},
	}
	e.create(cl)
	t.Cleanup(func() { _ = e.c.Delete(e.ctx, cl) })
	e.startConvoy()
	e.create(&v1.ReleaseSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "fleet"},
		Spec: v1.ReleaseSetSpec{
			ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"fleet": fleet}},
			Template: v1.ReleaseTemplate{Spec: v1.ReleaseSpec{
				Chart:      v1.ChartSource{Repository: chartsURL, Name: "app", Version: "0.1.0"},
				SyncPolicy: v1.SyncPolicy{Automatic: ptr.To(true)}}},
			Strategy: v1.ReleaseSetStrategy{Stages: []v1.Stage{{Name: "all", Approval: v1.ApprovalManual}}},
		},
	})

	got := e.waitRequests(hook, 1)
	s := &v1.ReleaseSet{}
	if err := e.c.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: "fleet"}, s); err != nil {
		t.Fatal(err)
	}
	if len(s.Status.Stages) != 1 || s.Status.Stages[0].Phase != v1.StageWaitingForApproval {
		t.Fatalf("stages %+v, want all WaitingForApproval", s.Status.Stages)
	}
	p := apimeta.FindStatusCondition(s.Status.Conditions, v1.ConditionProgressing)
	if p == nil || p.Reason != v1.ReasonWaitingForApproval {
		t.Fatalf("Progressing %+v, want WaitingForApproval", p)
	}
	want := wantBody("PromotionWaiting", e.ns, "fleet", "ReleaseSet", s.Status.Revision, "0.1.0", "", v1.ReasonWaitingForApproval,
		p.Message, p.LastTransitionTime.Time, "kubectl convoy releaseset promote fleet -n "+e.ns)
	if diff := cmp.Diff(want, decodeWebhook(t, got[0], "tok")); diff != "" {
		t.Errorf("PromotionWaiting body (-want +got):\n%s", diff)
	}
	if !strings.HasPrefix(s.Status.Revision, "sha256:") {
		t.Errorf("revision %q, want sha256:…", s.Status.Revision)
	}
	if rels := (&v1.ReleaseList{}); e.c.List(e.ctx, rels, client.InNamespace(e.ns)) == nil && len(rels.Items) != 0 {
		t.Errorf("%d Releases before the promotion, want none (%s waits)", len(rels.Items), releaseset.ReleaseName("fleet", cl.Name))
	}
	testenv.Consistently(t, e.ctx, "PromotionWaiting sent once", 2*time.Second, func() (bool, string) {
		return len(hook.requests()) == 1, fmt.Sprint(hook.events())
	})
}

// A Release that waits on the observer's assessment longer than the controller's
// bound (no observer runs) posts AssessmentOverdue, with the time the wait started.
func TestWebhookAssessmentOverdue(t *testing.T) {
	e := newEnv(t)
	hook := newTarget(t)
	e.secret(e.ns, "hook", hook.url, "tok")
	e.alert("overdue", v1.AlertProviderWebhook, "hook", "", v1.AlertEventAssessmentOverdue)
	e.startControllerOnly(2 * time.Second)
	e.create(appRelease(e.ns, "web", `{}`, true))

	got := e.waitRequests(hook, 1)
	r := e.release("web")
	var c *metav1.Condition
	var since time.Time
	for _, typ := range []string{v1.ConditionApplied, v1.ConditionHealthy} {
		cc := apimeta.FindStatusCondition(r.Status.Conditions, typ)
		if cc == nil {
			continue
		}
		if s, ok := policy.OverdueSince(cc.Message); ok {
			c, since = cc, s
			break
		}
	}
	if c == nil {
		t.Fatalf("conditions %+v, want one that reports the assessment overdue", r.Status.Conditions)
	}
	want := wantBody("AssessmentOverdue", e.ns, "web", "Release", r.Status.Render.Ref, "0.1.0", "", c.Reason,
		c.Message, since, "kubectl convoy release status web -n "+e.ns)
	if diff := cmp.Diff(want, decodeWebhook(t, got[0], "tok")); diff != "" {
		t.Errorf("AssessmentOverdue body (-want +got):\n%s", diff)
	}
}

// startControllerOnly runs the controller (with its notifier) without an observer on
// the test's namespace, with the bound of an overdue assessment.
func (e *env) startControllerOnly(overdueAfter time.Duration) {
	e.t.Helper()
	mgr, err := controller.NewManager(controlPlane.RestConfig(), controller.ManagerOptions{
		MetricsBindAddress: "0", HealthProbeBindAddress: "0", Namespaces: []string{e.ns},
	})
	if err != nil {
		e.t.Fatal(err)
	}
	fetcher, err := source.New(source.Options{CacheDir: e.t.TempDir()})
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := wiring.Setup(e.ctx, mgr, wiring.Options{Release: controller.Options{Source: fetcher, Metrics: prometheus.NewRegistry(),
		SkipNameValidation: true, AssessmentOverdueAfter: overdueAfter},
		Notify: notify.Options{BaseDelay: 200 * time.Millisecond}}); err != nil {
		e.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(e.ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil {
			e.t.Errorf("controller manager: %v", err)
		}
	}()
	e.t.Cleanup(func() { cancel(); <-done })
}

// newHangingTarget is a target that never answers (until the end of the test): a
// provider that hangs.
func newHangingTarget(t *testing.T) *target {
	tg := &target{}
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		tg.mu.Lock()
		tg.got = append(tg.got, request{body: string(body), header: r.Header.Clone()})
		tg.mu.Unlock()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	tg.url = srv.URL
	return tg
}

// A provider that hangs while many events happen: the notifications beyond the
// queue's bound are dropped, and that is counted (convoy_alert_deliveries_total
// result="dropped"), said on the Alert's Ready condition (NotificationsDropped: how
// many since when) and in a Warning Event on the Alert; the reconciles are not held
// up: every Release reaches Ready as without an Alert.
func TestQueueFullDropsAreCountedAndShownAndReconcilesGoOn(t *testing.T) {
	e := newEnv(t)
	hang := newHangingTarget(t)
	e.secret(e.ns, "hook", hang.url, "")
	e.alert("busy", v1.AlertProviderWebhook, "hook", "", v1.AlertEventApplied)
	reg := prometheus.NewRegistry()
	// A bound of 2: the notification being posted and one waiting behind it.
	e.startConvoyWith(notify.Options{Metrics: reg, QueueBound: 2, BaseDelay: time.Minute,
		HTTPClient: &http.Client{Timeout: 30 * time.Second}})
	const releases = 5
	for i := range releases {
		e.create(appRelease(e.ns, fmt.Sprintf("web-%d", i), `{}`, true))
	}

	testenv.Eventually(t, e.ctx, "every Release Ready", time.Minute, func() (bool, string) {
		var notReady []string
		for i := range releases {
			r := e.release(fmt.Sprintf("web-%d", i))
			if c := apimeta.FindStatusCondition(r.Status.Conditions, v1.ConditionReady); c == nil || c.Status != metav1.ConditionTrue {
				notReady = append(notReady, r.Name)
			}
		}
		return len(notReady) == 0, fmt.Sprintf("not Ready: %v", notReady)
	})
	n := &notifier{t: t, metrics: reg}
	testenv.Eventually(t, e.ctx, "3 drops counted", 10*time.Second, func() (bool, string) {
		d := n.count(v1.AlertProviderWebhook, "dropped")
		return d == releases-2, fmt.Sprintf("%d dropped", d)
	})
	a := e.waitAlertReady("busy", v1.ReasonNotificationsDropped)
	c := apimeta.FindStatusCondition(a.Status.Conditions, v1.ConditionReady)
	if c.Status != metav1.ConditionFalse || !strings.HasPrefix(c.Message, "3 notifications dropped since ") ||
		!strings.Contains(c.Message, "the notifier's queue is full (2 waiting, all Alerts)") {
		t.Errorf("Ready %+v, want False, saying 3 notifications dropped and why", c)
	}
	testenv.Eventually(t, e.ctx, "a NotificationsDropped Event on the Alert", 10*time.Second, func() (bool, string) {
		evs := &corev1.EventList{}
		if err := e.c.List(e.ctx, evs, client.InNamespace(e.ns)); err != nil {
			return false, err.Error()
		}
		for _, ev := range evs.Items {
			if ev.InvolvedObject.Kind == "Alert" && ev.InvolvedObject.Name == "busy" && ev.Reason == v1.ReasonNotificationsDropped &&
				ev.Type == corev1.EventTypeWarning {
				return true, ""
			}
		}
		return false, fmt.Sprintf("%d events", len(evs.Items))
	})
	if got := len(hang.requests()); got != 1 {
		t.Errorf("the provider got %d requests, want 1 (the one it holds)", got)
	}
}
