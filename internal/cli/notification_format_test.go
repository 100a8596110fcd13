package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

func readyCond(status metav1.ConditionStatus, reason, msg string, since time.Duration) metav1.Condition {
	return metav1.Condition{Type: v1.ConditionReady, Status: status, Reason: reason, Message: msg, LastTransitionTime: *at(since)}
}

func testAlerts() []v1.Alert {
	return []v1.Alert{
		{
			ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "on-call", CreationTimestamp: *at(48 * time.Hour)},
			Spec: v1.AlertSpec{
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "web"}},
				Events:   []v1.AlertEvent{v1.AlertEventRolledBack, v1.AlertEventRolloutFailed, v1.AlertEventHalted, v1.AlertEventApprovalWaiting},
				Provider: v1.AlertProvider{Type: v1.AlertProviderSlack, SecretRef: v1.LocalObjectReference{Name: "slack-webhook"}},
				UIURL:    "https://convoy.example.com/",
			},
			Status: v1.AlertStatus{
				Conditions: []metav1.Condition{readyCond(metav1.ConditionTrue, v1.ReasonDelivered, "RolledBack of Release web delivered: 200 OK", 5*time.Minute)},
				LastDelivery: &v1.AlertDelivery{Time: *at(5 * time.Minute), Event: v1.AlertEventRolledBack,
					Object: v1.AlertObjectReference{Kind: "Release", Name: "web"}, Result: "200 OK"},
			},
		},
		{
			ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "audit", CreationTimestamp: *at(3 * time.Hour)},
			Spec: v1.AlertSpec{
				Events:   v1.AlertEvents,
				Provider: v1.AlertProvider{Type: v1.AlertProviderWebhook, SecretRef: v1.LocalObjectReference{Name: "audit-hook"}},
			},
			Status: v1.AlertStatus{
				Conditions: []metav1.Condition{readyCond(metav1.ConditionFalse, v1.ReasonDeliveryFailed,
					"Applied of Release api: the provider answered 503 Service Unavailable; check the URL in key address of Secret audit-hook (attempt 3 of 8, retried with backoff)", 2*time.Minute)},
				LastDelivery: &v1.AlertDelivery{Time: *at(2 * time.Minute), Event: v1.AlertEventApplied,
					Object: v1.AlertObjectReference{Kind: "Release", Name: "api"}, Result: "503 Service Unavailable"},
			},
		},
		{
			ObjectMeta: metav1.ObjectMeta{Namespace: "team-b", Name: "teams", CreationTimestamp: *at(time.Minute)},
			Spec: v1.AlertSpec{
				Events:   []v1.AlertEvent{v1.AlertEventPromotionWaiting},
				Provider: v1.AlertProvider{Type: v1.AlertProviderMSTeams, SecretRef: v1.LocalObjectReference{Name: "teams-url"}},
			},
			Status: v1.AlertStatus{Conditions: []metav1.Condition{readyCond(metav1.ConditionFalse, v1.ReasonSecretNotFound,
				`Secret "teams-url" not found in namespace team-b`, time.Minute)}},
		},
		{
			ObjectMeta: metav1.ObjectMeta{Namespace: "team-b", Name: "new", CreationTimestamp: *at(10 * time.Second)},
			Spec: v1.AlertSpec{
				Events:   []v1.AlertEvent{v1.AlertEventApplied},
				Provider: v1.AlertProvider{Type: v1.AlertProviderWebhook, SecretRef: v1.LocalObjectReference{Name: "hook"}},
			},
		},
	}
}

// warning is a Warning Event of an Alert as an events.k8s.io/v1 recorder leaves it,
// seen through core/v1.
func warning(ns, alert, reason, msg string, ago time.Duration, series int32) corev1.Event {
	e := corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Namespace: ns, Name: alert + "." + reason, CreationTimestamp: *at(ago + time.Minute)},
		InvolvedObject: corev1.ObjectReference{Kind: "Alert", APIVersion: v1.SchemeGroupVersion.String(), Namespace: ns, Name: alert},
		Type:           corev1.EventTypeWarning, Reason: reason, Message: msg,
		EventTime: metav1.NewMicroTime(now.Add(-ago - time.Minute)),
	}
	if series > 0 {
		e.Series = &corev1.EventSeries{Count: series, LastObservedTime: metav1.NewMicroTime(now.Add(-ago))}
	}
	return e
}

func testWarnings() []corev1.Event {
	return []corev1.Event{
		warning("shop", "audit", v1.ReasonDeliveryFailed, "Applied of Release api: the provider answered 503 Service Unavailable (attempt 1 of 8, retried with backoff)", 4*time.Minute, 0),
		warning("shop", "audit", v1.ReasonDeliveryFailed, "Applied of Release api: the provider answered 503 Service Unavailable (attempt 3 of 8, retried with backoff)", 2*time.Minute, 2),
		warning("shop", "on-call", v1.ReasonSecretNotFound, `Secret "slack-webhook" not found in namespace shop; RolledBack of Release web was not sent`, 40*time.Minute, 0),
	}
}

func testReceivers() []v1.Receiver {
	return []v1.Receiver{
		{
			ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "github", CreationTimestamp: *at(24 * time.Hour)},
			Spec: v1.ReceiverSpec{Type: v1.ReceiverGitHub, SecretRef: v1.LocalObjectReference{Name: "github-webhook"},
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"repo": "podinfo"}}},
			Status: v1.ReceiverStatus{
				Conditions:  []metav1.Condition{readyCond(metav1.ConditionTrue, v1.ReasonServing, "serving the path", time.Hour)},
				WebhookPath: v1.ReceiverWebhookPath([]byte("s3cret"), "github", "shop"),
				LastCall:    &v1.ReceiverCall{Time: *at(3 * time.Minute), Result: "push: refreshing 2 Releases and 0 ReleaseSets"},
			},
		},
		{
			ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "harbor", CreationTimestamp: *at(time.Hour)},
			Spec:       v1.ReceiverSpec{Type: v1.ReceiverHarbor, SecretRef: v1.LocalObjectReference{Name: "harbor-token"}},
			Status: v1.ReceiverStatus{
				Conditions:  []metav1.Condition{readyCond(metav1.ConditionFalse, v1.ReasonReceiverServerDisabled, "the controller runs without --receiver-bind-address", time.Hour)},
				WebhookPath: v1.ReceiverWebhookPath([]byte("t0ken"), "harbor", "shop"),
			},
		},
		{
			ObjectMeta: metav1.ObjectMeta{Namespace: "team-b", Name: "gitlab", CreationTimestamp: *at(time.Minute)},
			Spec:       v1.ReceiverSpec{Type: v1.ReceiverGitLab, SecretRef: v1.LocalObjectReference{Name: "gitlab-token"}},
			Status: v1.ReceiverStatus{Conditions: []metav1.Condition{readyCond(metav1.ConditionFalse, v1.ReasonSecretNotFound,
				`Secret "gitlab-token" not found in namespace team-b`, time.Minute)}},
		},
	}
}

func TestFormatAlertList(t *testing.T) {
	tests := map[string]struct {
		all      bool
		failures map[string]DeliveryFailures
		term     Terminal
	}{
		"alert_list":           {failures: AlertFailures(testWarnings())},
		"alert_list_all":       {all: true, failures: AlertFailures(testWarnings())},
		"alert_list_no_events": {},
		"alert_list_color":     {failures: AlertFailures(testWarnings()), term: Terminal{TTY: true, Color: true}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			golden(t, name, FormatAlertList(testAlerts(), tc.failures, tc.all, now, tc.term))
		})
	}
}

func TestFormatAlert(t *testing.T) {
	alerts := testAlerts()
	tests := map[string]struct {
		alert *v1.Alert
		view  AlertView
	}{
		"alert_get":              {alert: &alerts[0], view: AlertView{Warnings: AlertWarningEvents(testWarnings(), "on-call")}},
		"alert_get_failing":      {alert: &alerts[1], view: AlertView{Warnings: AlertWarningEvents(testWarnings(), "audit")}},
		"alert_get_no_secret":    {alert: &alerts[2], view: AlertView{WarningsErr: errForbiddenEvents}},
		"alert_get_not_seen_yet": {alert: &alerts[3]},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			golden(t, name, FormatAlert(tc.alert, tc.view, now, plain))
		})
	}
}

type testError string

func (e testError) Error() string { return string(e) }

const errForbiddenEvents = testError(`events is forbidden: User "alice" cannot list resource "events" in API group "" in the namespace "team-b"`)

func TestFormatReceiverList(t *testing.T) {
	golden(t, "receiver_list", FormatReceiverList(testReceivers(), false, now, plain))
	golden(t, "receiver_list_all", FormatReceiverList(testReceivers(), true, now, plain))
}

func TestFormatReceiver(t *testing.T) {
	rs := testReceivers()
	for name, r := range map[string]*v1.Receiver{
		"receiver_get": &rs[0], "receiver_get_server_disabled": &rs[1], "receiver_get_no_secret": &rs[2],
	} {
		t.Run(name, func(t *testing.T) { golden(t, name, FormatReceiver(r, now, plain)) })
	}
}

// FAILED sums the failed attempts of each Alert over its Warning Events (a series
// counts each time) and names the last reason; the Ready condition's reason wins
// while it is False; "?" when the Events could not be read.
func TestAlertFailedCell(t *testing.T) {
	alerts := testAlerts()
	failures := AlertFailures(testWarnings())
	got := map[string]string{}
	for i := range alerts {
		got[alerts[i].Name] = failedCell(&alerts[i], failures, plain)
		got[alerts[i].Name+" unknown"] = failedCell(&alerts[i], nil, plain)
	}
	want := map[string]string{
		"on-call": "1 (SecretNotFound)", "on-call unknown": "?",
		"audit": "3 (DeliveryFailed)", "audit unknown": "? (DeliveryFailed)",
		"teams": "0 (SecretNotFound)", "teams unknown": "? (SecretNotFound)",
		"new": "0", "new unknown": "?",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("FAILED (-want +got):\n%s", diff)
	}
}

func TestEventsCell(t *testing.T) {
	tests := []struct {
		events []v1.AlertEvent
		want   string
	}{
		{nil, "-"},
		{[]v1.AlertEvent{v1.AlertEventApplied}, "Applied"},
		{v1.AlertEvents[:3], "ApprovalWaiting,PromotionWaiting,Applied"},
		{v1.AlertEvents[:5], "ApprovalWaiting,PromotionWaiting,Applied,+2"},
		{v1.AlertEvents, "all"},
	}
	for _, tc := range tests {
		if got := eventsCell(tc.events); got != tc.want {
			t.Errorf("eventsCell(%v) = %q, want %q", tc.events, got, tc.want)
		}
	}
}

func TestDeliveredResult(t *testing.T) {
	for result, want := range map[string]bool{
		"200 OK": true, "204 No Content": true, "200": true, "503 Service Unavailable": false, "": false,
		"no answer: context deadline exceeded": false, "2000 odd": false,
	} {
		if got := delivered(result); got != want {
			t.Errorf("delivered(%q) = %v, want %v", result, got, want)
		}
	}
}

func TestNotificationListsHaveNoEscapeCodesWithoutColor(t *testing.T) {
	for name, out := range map[string]string{
		"alerts":    FormatAlertList(testAlerts(), AlertFailures(testWarnings()), true, now, Terminal{TTY: true}),
		"receivers": FormatReceiverList(testReceivers(), true, now, Terminal{TTY: true}),
	} {
		if strings.Contains(out, "\x1b") {
			t.Errorf("%s output has escape codes without colour:\n%q", name, out)
		}
	}
}
