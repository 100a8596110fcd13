package validation

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
)

func validAlert() *convoyv1alpha1.Alert {
	return &convoyv1alpha1.Alert{
		ObjectMeta: metav1.ObjectMeta{Name: "on-call", Namespace: "team-a"},
		Spec: convoyv1alpha1.AlertSpec{
			Selector: selector("tier", "web"),
			Events:   []convoyv1alpha1.AlertEvent{convoyv1alpha1.AlertEventRolledBack, convoyv1alpha1.AlertEventHalted},
			Provider: convoyv1alpha1.AlertProvider{Type: convoyv1alpha1.AlertProviderSlack,
				SecretRef: convoyv1alpha1.LocalObjectReference{Name: "slack-url"}},
			UIURL: "https://convoy.example.com/ui/",
		},
	}
}

func TestAlert(t *testing.T) {
	cases := map[string]struct {
		mutate func(*convoyv1alpha1.Alert)
		fields []string // the error fields, none when valid
	}{
		"valid": {mutate: func(*convoyv1alpha1.Alert) {}},
		"every event, no selector, no uiURL": {mutate: func(a *convoyv1alpha1.Alert) {
			a.Spec.Events, a.Spec.Selector, a.Spec.UIURL = convoyv1alpha1.AlertEvents, nil, ""
		}},
		"empty selector":      {mutate: func(a *convoyv1alpha1.Alert) { a.Spec.Selector = &metav1.LabelSelector{} }},
		"msteams":             {mutate: func(a *convoyv1alpha1.Alert) { a.Spec.Provider.Type = convoyv1alpha1.AlertProviderMSTeams }},
		"webhook":             {mutate: func(a *convoyv1alpha1.Alert) { a.Spec.Provider.Type = convoyv1alpha1.AlertProviderWebhook }},
		"http uiURL":          {mutate: func(a *convoyv1alpha1.Alert) { a.Spec.UIURL = "http://127.0.0.1:8080" }},
		"no events":           {mutate: func(a *convoyv1alpha1.Alert) { a.Spec.Events = nil }, fields: []string{"spec.events"}},
		"unknown event":       {mutate: func(a *convoyv1alpha1.Alert) { a.Spec.Events = []convoyv1alpha1.AlertEvent{"Applied", "Deployed"} }, fields: []string{"spec.events[1]"}},
		"event in lower case": {mutate: func(a *convoyv1alpha1.Alert) { a.Spec.Events = []convoyv1alpha1.AlertEvent{"applied"} }, fields: []string{"spec.events[0]"}},
		"duplicate event": {mutate: func(a *convoyv1alpha1.Alert) {
			a.Spec.Events = []convoyv1alpha1.AlertEvent{"Halted", "Applied", "Halted"}
		},
			fields: []string{"spec.events[2]"}},
		"no provider type":      {mutate: func(a *convoyv1alpha1.Alert) { a.Spec.Provider.Type = "" }, fields: []string{"spec.provider.type"}},
		"unknown provider type": {mutate: func(a *convoyv1alpha1.Alert) { a.Spec.Provider.Type = "discord" }, fields: []string{"spec.provider.type"}},
		"provider type in capitals": {mutate: func(a *convoyv1alpha1.Alert) { a.Spec.Provider.Type = "Slack" },
			fields: []string{"spec.provider.type"}},
		"no secret name": {mutate: func(a *convoyv1alpha1.Alert) { a.Spec.Provider.SecretRef.Name = "" },
			fields: []string{"spec.provider.secretRef.name"}},
		"secret name not a name": {mutate: func(a *convoyv1alpha1.Alert) { a.Spec.Provider.SecretRef.Name = "Slack_URL" },
			fields: []string{"spec.provider.secretRef.name"}},
		"secret name too long": {mutate: func(a *convoyv1alpha1.Alert) { a.Spec.Provider.SecretRef.Name = strings.Repeat("a", 254) },
			fields: []string{"spec.provider.secretRef.name"}},
		"relative uiURL":          {mutate: func(a *convoyv1alpha1.Alert) { a.Spec.UIURL = "/ui" }, fields: []string{"spec.uiURL"}},
		"uiURL without host":      {mutate: func(a *convoyv1alpha1.Alert) { a.Spec.UIURL = "https:///ui" }, fields: []string{"spec.uiURL"}},
		"uiURL of another scheme": {mutate: func(a *convoyv1alpha1.Alert) { a.Spec.UIURL = "ftp://convoy.example.com" }, fields: []string{"spec.uiURL"}},
		"uiURL a host alone":      {mutate: func(a *convoyv1alpha1.Alert) { a.Spec.UIURL = "convoy.example.com" }, fields: []string{"spec.uiURL"}},
		"uiURL that does not parse": {mutate: func(a *convoyv1alpha1.Alert) { a.Spec.UIURL = "https://convoy example.com/%zz" },
			fields: []string{"spec.uiURL"}},
		"invalid selector": {mutate: func(a *convoyv1alpha1.Alert) {
			a.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: "Near"}}}
		}, fields: []string{"spec.selector.matchExpressions[0].operator"}},
		"selector value not a label value": {mutate: func(a *convoyv1alpha1.Alert) { a.Spec.Selector = selector("tier", "web app") },
			fields: []string{"spec.selector.matchLabels"}},
		"everything wrong at once": {mutate: func(a *convoyv1alpha1.Alert) {
			a.Spec = convoyv1alpha1.AlertSpec{UIURL: "x"}
		}, fields: []string{"spec.events", "spec.provider.type", "spec.provider.secretRef.name", "spec.uiURL"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			a := validAlert()
			tc.mutate(a)
			if diff := cmp.Diff(tc.fields, errorFields(Alert(a))); diff != "" {
				t.Errorf("error fields (-want +got):\n%s\nerrors: %v", diff, Alert(a))
			}
			old := validAlert()
			a.ResourceVersion, old.ResourceVersion = "1", "1"
			if diff := cmp.Diff(tc.fields, errorFields(AlertUpdate(a, old))); diff != "" {
				t.Errorf("AlertUpdate error fields (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAlertStatusUpdate(t *testing.T) {
	cases := map[string]struct {
		status convoyv1alpha1.AlertStatus
		fields []string
	}{
		"empty": {},
		"delivered": {status: convoyv1alpha1.AlertStatus{
			ObservedGeneration: 1,
			Conditions: []metav1.Condition{{Type: convoyv1alpha1.ConditionReady, Status: metav1.ConditionTrue,
				Reason: convoyv1alpha1.ReasonDelivered, LastTransitionTime: metav1.Now()}},
			LastDelivery: &convoyv1alpha1.AlertDelivery{Time: metav1.Now(), Event: convoyv1alpha1.AlertEventApplied,
				Object: convoyv1alpha1.AlertObjectReference{Kind: "Release", Name: "podinfo"}, Result: "200 OK"},
		}},
		"condition without a reason": {status: convoyv1alpha1.AlertStatus{
			Conditions: []metav1.Condition{{Type: convoyv1alpha1.ConditionReady, Status: metav1.ConditionTrue, LastTransitionTime: metav1.Now()}},
		}, fields: []string{"status.conditions[0].reason"}},
		"unknown event delivered": {status: convoyv1alpha1.AlertStatus{
			LastDelivery: &convoyv1alpha1.AlertDelivery{Event: "Deployed"},
		}, fields: []string{"status.lastDelivery.event"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			old, a := validAlert(), validAlert()
			old.ResourceVersion, a.ResourceVersion = "1", "1"
			a.Status = tc.status
			if diff := cmp.Diff(tc.fields, errorFields(AlertStatusUpdate(a, old))); diff != "" {
				t.Errorf("error fields (-want +got):\n%s", diff)
			}
		})
	}
}

func validReceiver() *convoyv1alpha1.Receiver {
	return &convoyv1alpha1.Receiver{
		ObjectMeta: metav1.ObjectMeta{Name: "github", Namespace: "team-a"},
		Spec: convoyv1alpha1.ReceiverSpec{
			Type:      convoyv1alpha1.ReceiverGitHub,
			SecretRef: convoyv1alpha1.LocalObjectReference{Name: "github-token"},
			Selector:  selector("repo", "podinfo"),
		},
	}
}

func TestReceiver(t *testing.T) {
	cases := map[string]struct {
		mutate func(*convoyv1alpha1.Receiver)
		fields []string
	}{
		"valid":            {mutate: func(*convoyv1alpha1.Receiver) {}},
		"gitlab":           {mutate: func(r *convoyv1alpha1.Receiver) { r.Spec.Type = convoyv1alpha1.ReceiverGitLab }},
		"harbor":           {mutate: func(r *convoyv1alpha1.Receiver) { r.Spec.Type = convoyv1alpha1.ReceiverHarbor }},
		"generic":          {mutate: func(r *convoyv1alpha1.Receiver) { r.Spec.Type = convoyv1alpha1.ReceiverGeneric }},
		"no selector":      {mutate: func(r *convoyv1alpha1.Receiver) { r.Spec.Selector = nil }},
		"no type":          {mutate: func(r *convoyv1alpha1.Receiver) { r.Spec.Type = "" }, fields: []string{"spec.type"}},
		"unknown type":     {mutate: func(r *convoyv1alpha1.Receiver) { r.Spec.Type = "bitbucket" }, fields: []string{"spec.type"}},
		"type in capitals": {mutate: func(r *convoyv1alpha1.Receiver) { r.Spec.Type = "GitHub" }, fields: []string{"spec.type"}},
		"no secret name": {mutate: func(r *convoyv1alpha1.Receiver) { r.Spec.SecretRef.Name = "" },
			fields: []string{"spec.secretRef.name"}},
		"secret name not a name": {mutate: func(r *convoyv1alpha1.Receiver) { r.Spec.SecretRef.Name = "../token" },
			fields: []string{"spec.secretRef.name"}},
		"invalid selector": {mutate: func(r *convoyv1alpha1.Receiver) {
			r.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "repo", Operator: "In"}}}
		}, fields: []string{"spec.selector.matchExpressions[0].values"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := validReceiver()
			tc.mutate(r)
			if diff := cmp.Diff(tc.fields, errorFields(Receiver(r))); diff != "" {
				t.Errorf("error fields (-want +got):\n%s\nerrors: %v", diff, Receiver(r))
			}
			old := validReceiver()
			r.ResourceVersion, old.ResourceVersion = "1", "1"
			if diff := cmp.Diff(tc.fields, errorFields(ReceiverUpdate(r, old))); diff != "" {
				t.Errorf("ReceiverUpdate error fields (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReceiverStatusUpdate(t *testing.T) {
	path := convoyv1alpha1.ReceiverWebhookPath([]byte("token"), "github", "team-a")
	cases := map[string]struct {
		status convoyv1alpha1.ReceiverStatus
		fields []string
	}{
		"empty": {},
		"serving": {status: convoyv1alpha1.ReceiverStatus{
			ObservedGeneration: 1, WebhookPath: path,
			Conditions: []metav1.Condition{{Type: convoyv1alpha1.ConditionReady, Status: metav1.ConditionTrue,
				Reason: convoyv1alpha1.ReasonServing, LastTransitionTime: metav1.Now()}},
			LastCall: &convoyv1alpha1.ReceiverCall{Time: metav1.Now(), Result: "refreshed Release podinfo"},
		}},
		"webhookPath not made by ReceiverWebhookPath": {status: convoyv1alpha1.ReceiverStatus{WebhookPath: "/hooks/github"},
			fields: []string{"status.webhookPath"}},
		"webhookPath without the prefix": {status: convoyv1alpha1.ReceiverStatus{WebhookPath: strings.TrimPrefix(path, "/hooks")},
			fields: []string{"status.webhookPath"}},
		"condition with an invalid status": {status: convoyv1alpha1.ReceiverStatus{
			Conditions: []metav1.Condition{{Type: convoyv1alpha1.ConditionReady, Status: "Maybe", Reason: convoyv1alpha1.ReasonServing,
				LastTransitionTime: metav1.Now()}},
		}, fields: []string{"status.conditions[0].status"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			old, r := validReceiver(), validReceiver()
			old.ResourceVersion, r.ResourceVersion = "1", "1"
			r.Status = tc.status
			if diff := cmp.Diff(tc.fields, errorFields(ReceiverStatusUpdate(r, old))); diff != "" {
				t.Errorf("error fields (-want +got):\n%s", diff)
			}
		})
	}
}

// errorFields are the field paths of errs, in order; nil when there are none.
func errorFields(errs field.ErrorList) []string {
	var fields []string
	for _, e := range errs {
		fields = append(fields, e.Field)
	}
	return fields
}
