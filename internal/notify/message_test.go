package notify

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

var waitingEvent = Event{Type: v1.AlertEventApprovalWaiting, Object: webObject,
	Render: Render{Ref: refA, ChartVersion: "1.2.3", Commit: "0123456789abcdef0123"},
	Reason: v1.ReasonWaitingForSync, Message: "render <aaaaaaaaaa> & co waits", Time: t1}

func TestBody(t *testing.T) {
	for _, tc := range []struct {
		name  string
		t     v1.AlertProviderType
		e     Event
		uiURL string
		want  string
	}{
		{
			name: "webhook: the documented fields, the full ref, the command", t: v1.AlertProviderWebhook, e: waitingEvent,
			want: `{"event":"ApprovalWaiting","object":{"kind":"Release","namespace":"shop","name":"web"},` +
				`"render":{"ref":"` + refA + `","chartVersion":"1.2.3","commit":"0123456789abcdef0123"},` +
				`"reason":"WaitingForSync","message":"render <aaaaaaaaaa> & co waits","time":"2026-12-01T10:01:00Z",` +
				`"action":"kubectl convoy release sync web -n shop --render aaaaaaaaaa"}`,
		},
		{
			name: "slack: text, a section with title, render and reason (escaped), the command, the link", t: v1.AlertProviderSlack,
			e: waitingEvent, uiURL: "https://convoy.example.com/",
			want: `{"text":"Release shop/web: render aaaaaaaaaa waits for approval","blocks":[` +
				`{"type":"section","text":{"type":"mrkdwn","text":"*Release shop/web: render aaaaaaaaaa waits for approval*\nrender aaaaaaaaaa, chart 1.2.3, commit 0123456789ab\nWaitingForSync: render &lt;aaaaaaaaaa&gt; &amp; co waits"}},` +
				`{"type":"section","text":{"type":"mrkdwn","text":"To act: ` + "`kubectl convoy release sync web -n shop --render aaaaaaaaaa`" + `"}},` +
				`{"type":"context","elements":[{"type":"mrkdwn","text":"<https://convoy.example.com/#/releases/shop/web|Open in convoy>"}]}]}`,
		},
		{
			name: "slack without uiURL: no link", t: v1.AlertProviderSlack,
			e: Event{Type: v1.AlertEventHalted, Object: Object{Kind: KindReleaseSet, Namespace: "shop", Name: "fleet"},
				Render: Render{Ref: refA}, Reason: v1.ReasonReleaseFailed, Message: "Release fleet-a failed"},
			want: `{"text":"ReleaseSet shop/fleet halted its rollout","blocks":[` +
				`{"type":"section","text":{"type":"mrkdwn","text":"*ReleaseSet shop/fleet halted its rollout*\nrevision aaaaaaaaaa\nReleaseFailed: Release fleet-a failed"}},` +
				`{"type":"section","text":{"type":"mrkdwn","text":"To act: ` + "`kubectl convoy releaseset status fleet -n shop`" + `"}}]}`,
		},
		{
			name: "msteams: an Adaptive Card with facts, message, command and an Open button", t: v1.AlertProviderMSTeams,
			e: waitingEvent, uiURL: "https://convoy.example.com",
			want: `{"type":"message","attachments":[{"contentType":"application/vnd.microsoft.card.adaptive","contentUrl":null,"content":{` +
				`"$schema":"http://adaptivecards.io/schemas/adaptive-card.json","type":"AdaptiveCard","version":"1.4","body":[` +
				`{"type":"TextBlock","text":"Release shop/web: render aaaaaaaaaa waits for approval","weight":"Bolder","size":"Medium","wrap":true},` +
				`{"type":"FactSet","facts":[{"title":"Object","value":"Release shop/web"},{"title":"Render","value":"render aaaaaaaaaa, chart 1.2.3, commit 0123456789ab"},{"title":"Reason","value":"WaitingForSync"}]},` +
				`{"type":"TextBlock","text":"render <aaaaaaaaaa> & co waits","wrap":true},` +
				`{"type":"TextBlock","text":"To act: kubectl convoy release sync web -n shop --render aaaaaaaaaa","fontType":"Monospace","wrap":true}],` +
				`"actions":[{"type":"Action.OpenUrl","title":"Open in convoy","url":"https://convoy.example.com/#/releases/shop/web"}]}}]}`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Body(tc.t, tc.e, tc.uiURL)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, string(got)); diff != "" {
				t.Errorf("Body (-want +got):\n%s", diff)
			}
		})
	}
	if _, err := Body("pager", waitingEvent, ""); err == nil {
		t.Error("Body of an unknown provider type: no error")
	}
}

func TestTitleAndAction(t *testing.T) {
	rel := func(e v1.AlertEvent) Event { return Event{Type: e, Object: webObject, Render: Render{Ref: refB}} }
	set := func(e v1.AlertEvent, reason string) Event {
		return Event{Type: e, Object: Object{Kind: KindReleaseSet, Namespace: "shop", Name: "fleet"}, Stage: "main", Reason: reason}
	}
	for _, tc := range []struct {
		e             Event
		title, action string
	}{
		{rel(v1.AlertEventApprovalWaiting), "Release shop/web: render bbbbbbbbbb waits for approval", "kubectl convoy release sync web -n shop --render bbbbbbbbbb"},
		{set(v1.AlertEventPromotionWaiting, v1.ReasonWaitingForApproval), "ReleaseSet shop/fleet: stage main waits for promotion", "kubectl convoy releaseset promote fleet -n shop"},
		{rel(v1.AlertEventApplied), "Release shop/web: render bbbbbbbbbb applied and Ready", "kubectl convoy release status web -n shop"},
		{rel(v1.AlertEventRolledBack), "Release shop/web: render bbbbbbbbbb failed its rollout and was rolled back", "kubectl convoy release status web -n shop"},
		{rel(v1.AlertEventRolloutFailed), "Release shop/web: the rollout of render bbbbbbbbbb failed", "kubectl convoy release status web -n shop"},
		{set(v1.AlertEventHalted, v1.ReasonReleaseFailed), "ReleaseSet shop/fleet halted its rollout", "kubectl convoy releaseset status fleet -n shop"},
		{set(v1.AlertEventHalted, v1.ReasonMassRemoval), "ReleaseSet shop/fleet halted its rollout", "kubectl convoy releaseset promote fleet -n shop"},
		{rel(v1.AlertEventHookFailed), "Release shop/web: a hook of render bbbbbbbbbb failed", "kubectl convoy release status web -n shop"},
		{rel(v1.AlertEventDriftDetected), "Release shop/web: drift on the cluster", "kubectl convoy release diff web -n shop"},
		{rel(v1.AlertEventAssessmentOverdue), "Release shop/web: the observer's assessment is overdue", "kubectl convoy release status web -n shop"},
		{rel(v1.AlertEventVerificationFailed), "Release shop/web: the chart failed its verification", "kubectl convoy release status web -n shop"},
	} {
		if got := Title(tc.e); got != tc.title {
			t.Errorf("Title(%s) = %q, want %q", tc.e.Type, got, tc.title)
		}
		if got := Action(tc.e); got != tc.action {
			t.Errorf("Action(%s %s) = %q, want %q", tc.e.Type, tc.e.Reason, got, tc.action)
		}
	}
}

func TestSignature(t *testing.T) {
	// RFC 4231, test case 2.
	got := Signature([]byte("what do ya want for nothing?"), []byte("Jefe"))
	if want := "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"; got != want {
		t.Errorf("Signature = %s, want %s", got, want)
	}
}

func TestSelects(t *testing.T) {
	alert := func(ns string, sel *metav1.LabelSelector, events ...v1.AlertEvent) *v1.Alert {
		return &v1.Alert{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "a"}, Spec: v1.AlertSpec{Selector: sel, Events: events}}
	}
	e := rel(v1.ReleaseStatus{})
	ev := Event{Type: v1.AlertEventApplied, Object: objectOf(KindRelease, e.ObjectMeta)}
	for _, tc := range []struct {
		name  string
		alert *v1.Alert
		want  bool
	}{
		{"no selector: every object of the namespace", alert("shop", nil, v1.AlertEventApplied), true},
		{"empty selector: every object", alert("shop", &metav1.LabelSelector{}, v1.AlertEventApplied), true},
		{"matching labels", alert("shop", &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "web"}}, v1.AlertEventHalted, v1.AlertEventApplied), true},
		{"other labels", alert("shop", &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "db"}}, v1.AlertEventApplied), false},
		{"another event", alert("shop", nil, v1.AlertEventRolledBack), false},
		{"another namespace", alert("other", nil, v1.AlertEventApplied), false},
		{"an invalid selector selects nothing", alert("shop", &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: "Near"}}}, v1.AlertEventApplied), false},
	} {
		if got := Selects(tc.alert, ev); got != tc.want {
			t.Errorf("%s: Selects = %v, want %v", tc.name, got, tc.want)
		}
	}
}
