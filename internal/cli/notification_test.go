package cli

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// createAlert creates an Alert and writes its status through /status, as convoy
// controller would.
func createAlert(t *testing.T, ns, name string, status v1.AlertStatus) *v1.Alert {
	t.Helper()
	a := &v1.Alert{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1.AlertSpec{
			Events:   []v1.AlertEvent{v1.AlertEventApplied, v1.AlertEventRolledBack},
			Provider: v1.AlertProvider{Type: v1.AlertProviderSlack, SecretRef: v1.LocalObjectReference{Name: "slack-webhook"}},
		},
	}
	c := admin(t)
	out := &v1.Alert{}
	if err := c.rest.Post().Namespace(ns).Resource(v1.ResourceAlerts).Body(a).Do(testCtx(t)).Into(out); err != nil {
		t.Fatalf("creating Alert %s/%s: %v", ns, name, err)
	}
	out.Status = status
	out.Status.ObservedGeneration = out.Generation
	if err := c.rest.Put().Namespace(ns).Resource(v1.ResourceAlerts).Name(name).SubResource("status").Body(out).Do(testCtx(t)).Into(out); err != nil {
		t.Fatalf("writing the status of Alert %s/%s: %v", ns, name, err)
	}
	return out
}

// createReceiver creates a Receiver and writes its status through /status.
func createReceiver(t *testing.T, ns, name string, status v1.ReceiverStatus) *v1.Receiver {
	t.Helper()
	r := &v1.Receiver{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       v1.ReceiverSpec{Type: v1.ReceiverGitHub, SecretRef: v1.LocalObjectReference{Name: "github-webhook"}},
	}
	c := admin(t)
	out := &v1.Receiver{}
	if err := c.rest.Post().Namespace(ns).Resource(v1.ResourceReceivers).Body(r).Do(testCtx(t)).Into(out); err != nil {
		t.Fatalf("creating Receiver %s/%s: %v", ns, name, err)
	}
	out.Status = status
	out.Status.ObservedGeneration = out.Generation
	if err := c.rest.Put().Namespace(ns).Resource(v1.ResourceReceivers).Name(name).SubResource("status").Body(out).Do(testCtx(t)).Into(out); err != nil {
		t.Fatalf("writing the status of Receiver %s/%s: %v", ns, name, err)
	}
	return out
}

// recordDeliveryFailure records a Warning Event on the Alert as convoy controller
// does for a failed attempt.
func recordDeliveryFailure(t *testing.T, a *v1.Alert, msg string) {
	t.Helper()
	kube := kubernetes.NewForConfigOrDie(env.admin)
	ts := metav1.Now()
	e := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{Namespace: a.Namespace, GenerateName: a.Name + "."},
		InvolvedObject: corev1.ObjectReference{Kind: "Alert", APIVersion: v1.SchemeGroupVersion.String(),
			Namespace: a.Namespace, Name: a.Name, UID: a.UID},
		Type: corev1.EventTypeWarning, Reason: v1.ReasonDeliveryFailed, Message: msg, Action: "Deliver",
		EventTime: metav1.NewMicroTime(ts.Time), ReportingController: "convoy.kumodo.io/notifier", ReportingInstance: "test",
	}
	if _, err := kube.CoreV1().Events(a.Namespace).Create(testCtx(t), e, metav1.CreateOptions{}); err != nil {
		t.Fatalf("recording a Warning Event on Alert %s: %v", a.Name, err)
	}
}

// alert list and get show what the Alert's status and Warning Events say on the
// real API: the last delivery with its result, the failed attempts and their reason.
func TestAlertListAndGetShowLastDeliveryAndFailures(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	delivered := time.Now().Add(-3 * time.Minute).Truncate(time.Second)
	failedMsg := "Applied of Release api: the provider answered 503 Service Unavailable; check the URL in key address of Secret slack-webhook (attempt 2 of 8, retried with backoff)"
	failing := createAlert(t, ns, "on-call", v1.AlertStatus{
		Conditions: []metav1.Condition{{Type: v1.ConditionReady, Status: metav1.ConditionFalse, Reason: v1.ReasonDeliveryFailed,
			Message: failedMsg, LastTransitionTime: metav1.Now()}},
		LastDelivery: &v1.AlertDelivery{Time: metav1.NewTime(delivered), Event: v1.AlertEventApplied,
			Object: v1.AlertObjectReference{Kind: "Release", Name: "api"}, Result: "503 Service Unavailable"},
	})
	recordDeliveryFailure(t, failing, failedMsg)
	recordDeliveryFailure(t, failing, failedMsg)
	createAlert(t, ns, "audit", v1.AlertStatus{})

	res := plugin(t, nil, "alert", "list", "-n", ns)
	if res.code != 0 {
		t.Fatalf("alert list: exit %d, stderr %s", res.code, res.stderr)
	}
	for column, want := range map[string]map[string]string{
		"TARGET":        {"on-call": "slack", "audit": "slack"},
		"EVENTS":        {"on-call": "Applied,RolledBack", "audit": "Applied,RolledBack"},
		"READY":         {"on-call": "False (DeliveryFailed)", "audit": "-"},
		"LAST DELIVERY": {"on-call": "3m ago Applied: 503 Service Unavailable", "audit": "never"},
		"FAILED":        {"on-call": "2 (DeliveryFailed)", "audit": "0"},
	} {
		got := tableCells(t, res.stdout, column)
		for name, w := range want {
			if got[name] != w {
				t.Errorf("alert list %s of %s: %q, want %q\n%s", column, name, got[name], w, res.stdout)
			}
		}
	}

	res = plugin(t, nil, "alert", "get", "on-call", "-n", ns)
	if res.code != 0 {
		t.Fatalf("alert get: exit %d, stderr %s", res.code, res.stderr)
	}
	for _, want := range []string{
		"Last delivery:  Applied of Release api, 3m ago (" + delivered.UTC().Format(time.RFC3339) + ")",
		"Result:         503 Service Unavailable",
		"Failed:         2 attempt(s) in the Events the cluster keeps",
		failedMsg,
		"Next: check the URL in key address of Secret slack-webhook",
	} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("alert get lacks %q:\n%s", want, res.stdout)
		}
	}

	res = plugin(t, nil, "alert", "get", "on-cal", "-n", ns)
	if want := `Alert "on-cal" not found in namespace "` + ns + `"; did you mean "on-call"?`; res.code != ExitFailure || !strings.Contains(res.stderr, want) {
		t.Errorf("alert get on-cal: exit %d, stderr %q, want 1 and %q", res.code, res.stderr, want)
	}
	res = plugin(t, nil, "alert", "get", "pager", "-n", ns)
	if want := "kubectl convoy alert list shows the namespace's Alerts"; res.code != ExitFailure || !strings.Contains(res.stderr, want) {
		t.Errorf("alert get pager: exit %d, stderr %q, want 1 and %q", res.code, res.stderr, want)
	}
}

// receiver list and get show the path and the last call on the real API.
func TestReceiverListAndGetShowPathAndLastCall(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	path := v1.ReceiverWebhookPath([]byte("s3cret"), "github", ns)
	createReceiver(t, ns, "github", v1.ReceiverStatus{
		Conditions: []metav1.Condition{{Type: v1.ConditionReady, Status: metav1.ConditionTrue, Reason: v1.ReasonServing,
			Message: "serving", LastTransitionTime: metav1.Now()}},
		WebhookPath: path,
		LastCall:    &v1.ReceiverCall{Time: metav1.NewTime(time.Now().Add(-2 * time.Minute)), Result: "push: refreshing 1 Release and 0 ReleaseSets"},
	})
	createReceiver(t, ns, "gitlab", v1.ReceiverStatus{})

	res := plugin(t, nil, "receiver", "list", "-n", ns)
	if res.code != 0 {
		t.Fatalf("receiver list: exit %d, stderr %s", res.code, res.stderr)
	}
	for column, want := range map[string]map[string]string{
		"TYPE":      {"github": "github", "gitlab": "github"},
		"READY":     {"github": "True (Serving)", "gitlab": "-"},
		"PATH":      {"github": path, "gitlab": "-"},
		"LAST CALL": {"github": "2m ago: push: refreshing 1 Release and 0 Releas…", "gitlab": "never"},
	} {
		got := tableCells(t, res.stdout, column)
		for name, w := range want {
			if got[name] != w {
				t.Errorf("receiver list %s of %s: %q, want %q\n%s", column, name, got[name], w, res.stdout)
			}
		}
	}
	res = plugin(t, nil, "receiver", "get", "github", "-n", ns)
	for _, want := range []string{"Path:           " + path, "Result:         push: refreshing 1 Release and 0 ReleaseSets"} {
		if res.code != 0 || !strings.Contains(res.stdout, want) {
			t.Errorf("receiver get: exit %d, stdout lacks %q:\n%s%s", res.code, want, res.stdout, res.stderr)
		}
	}
	res = plugin(t, nil, "receiver", "get", "gitlabb", "-n", ns)
	if want := `Receiver "gitlabb" not found in namespace "` + ns + `"; did you mean "gitlab"?`; res.code != ExitFailure || !strings.Contains(res.stderr, want) {
		t.Errorf("receiver get gitlabb: exit %d, stderr %q, want 1 and %q", res.code, res.stderr, want)
	}

	// -o json prints the objects as the server sent them; an empty namespace is said on stderr.
	for _, args := range [][]string{{"receiver", "list", "-n", ns, "-o", "json"}, {"receiver", "get", "github", "-n", ns, "-o", "json"}, {"alert", "list", "-A", "-o", "json"}} {
		res := plugin(t, nil, args...)
		var obj map[string]any
		if err := json.Unmarshal([]byte(res.stdout), &obj); res.code != 0 || err != nil || obj["apiVersion"] != v1.SchemeGroupVersion.String() {
			t.Errorf("%v: exit %d, %v, apiVersion %v\n%s", args, res.code, err, obj["apiVersion"], res.stdout)
		}
	}
	if res := plugin(t, nil, "alert", "list", "-n", ns); res.code != 0 || res.stdout != "" || res.stderr != "No Alerts found in namespace "+ns+".\n" {
		t.Errorf("alert list of a namespace without Alerts: exit %d, stdout %q, stderr %q", res.code, res.stdout, res.stderr)
	}
}
