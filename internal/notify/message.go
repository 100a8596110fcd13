package notify

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/labels"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// Selects says whether alert takes e: the object is in the Alert's namespace, its
// labels match spec.selector (empty or unset: every object) and spec.events lists the
// event. An invalid selector selects nothing (validation refuses one anyway).
func Selects(alert *v1.Alert, e Event) bool {
	if alert.Namespace != e.Object.Namespace || alert.DeletionTimestamp != nil {
		return false
	}
	found := false
	for _, ev := range alert.Spec.Events {
		found = found || ev == e.Type
	}
	if !found {
		return false
	}
	if alert.Spec.Selector == nil {
		return true
	}
	sel, err := metav1.LabelSelectorAsSelector(alert.Spec.Selector)
	if err != nil {
		return false
	}
	return sel.Matches(labels.Set(e.Object.Labels))
}

// Title is the first line of a message: what happened to which object.
func Title(e Event) string {
	obj := e.Object.Kind + " " + e.Object.Namespace + "/" + e.Object.Name
	short := v1.RenderRef(e.Render.Ref).Short()
	switch e.Type {
	case v1.AlertEventApprovalWaiting:
		return fmt.Sprintf("%s: render %s waits for approval", obj, short)
	case v1.AlertEventPromotionWaiting:
		return fmt.Sprintf("%s: stage %s waits for promotion", obj, e.Stage)
	case v1.AlertEventApplied:
		return fmt.Sprintf("%s: render %s applied and Ready", obj, short)
	case v1.AlertEventRolledBack:
		return fmt.Sprintf("%s: render %s failed its rollout and was rolled back", obj, short)
	case v1.AlertEventRolloutFailed:
		return fmt.Sprintf("%s: the rollout of render %s failed", obj, short)
	case v1.AlertEventHalted:
		return fmt.Sprintf("%s halted its rollout", obj)
	case v1.AlertEventHookFailed:
		return fmt.Sprintf("%s: a hook of render %s failed", obj, short)
	case v1.AlertEventDriftDetected:
		return fmt.Sprintf("%s: drift on the cluster", obj)
	case v1.AlertEventAssessmentOverdue:
		return fmt.Sprintf("%s: the observer's assessment is overdue", obj)
	case v1.AlertEventVerificationFailed:
		return fmt.Sprintf("%s: the chart failed its verification", obj)
	}
	return fmt.Sprintf("%s: %s", obj, e.Type)
}

// RenderLine says which render: short ref, chart version, commit ("" when none is
// known). A ReleaseSet's is its revision and the source it resolved.
func RenderLine(e Event) string {
	var parts []string
	if e.Render.Ref != "" {
		what := "render"
		if e.Object.Kind == KindReleaseSet {
			what = "revision"
		}
		parts = append(parts, what+" "+v1.RenderRef(e.Render.Ref).Short())
	}
	if e.Render.ChartVersion != "" {
		parts = append(parts, "chart "+e.Render.ChartVersion)
	}
	if e.Render.Commit != "" {
		parts = append(parts, "commit "+shortCommit(e.Render.Commit))
	}
	return strings.Join(parts, ", ")
}

func shortCommit(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return c
}

// Action is the command that acts on e: approve the render, promote the stage, or
// look closer.
func Action(e Event) string {
	ns, name := e.Object.Namespace, e.Object.Name
	switch {
	case e.Type == v1.AlertEventApprovalWaiting:
		return fmt.Sprintf("kubectl convoy release sync %s -n %s --render %s", name, ns, v1.RenderRef(e.Render.Ref).Short())
	case e.Type == v1.AlertEventPromotionWaiting, e.Type == v1.AlertEventHalted && e.Reason == v1.ReasonMassRemoval:
		return fmt.Sprintf("kubectl convoy releaseset promote %s -n %s", name, ns)
	case e.Object.Kind == KindReleaseSet:
		return fmt.Sprintf("kubectl convoy releaseset status %s -n %s", name, ns)
	case e.Type == v1.AlertEventDriftDetected:
		return fmt.Sprintf("kubectl convoy release diff %s -n %s", name, ns)
	}
	return fmt.Sprintf("kubectl convoy release status %s -n %s", name, ns)
}

// Link is the object's page in the UI at base (spec.uiURL); "" without a base.
func Link(base string, e Event) string {
	if base == "" {
		return ""
	}
	page := "releases"
	if e.Object.Kind == KindReleaseSet {
		page = "releasesets"
	}
	return strings.TrimRight(base, "/") + "/#/" + page + "/" + url.PathEscape(e.Object.Namespace) + "/" + url.PathEscape(e.Object.Name)
}

// reasonLine is "Reason: message".
func reasonLine(e Event) string {
	switch {
	case e.Reason == "":
		return e.Message
	case e.Message == "":
		return e.Reason
	}
	return e.Reason + ": " + e.Message
}

// WebhookBody is the JSON body a webhook Alert posts.
type WebhookBody struct {
	Event   v1.AlertEvent `json:"event"`
	Object  WebhookObject `json:"object"`
	Render  WebhookRender `json:"render"`
	Reason  string        `json:"reason"`
	Message string        `json:"message"`
	Time    string        `json:"time"`
	Action  string        `json:"action"`
}

// WebhookObject is the object of a WebhookBody.
type WebhookObject struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

// WebhookRender is the render of a WebhookBody: the full ref (a ReleaseSet's revision).
type WebhookRender struct {
	Ref          string `json:"ref"`
	ChartVersion string `json:"chartVersion"`
	Commit       string `json:"commit"`
}

// Body is what an Alert of provider type t posts for e, with uiURL its spec.uiURL.
func Body(t v1.AlertProviderType, e Event, uiURL string) ([]byte, error) {
	var v any
	switch t {
	case v1.AlertProviderSlack:
		v = slackBody(e, uiURL)
	case v1.AlertProviderMSTeams:
		v = teamsBody(e, uiURL)
	case v1.AlertProviderWebhook:
		at := ""
		if !e.Time.IsZero() {
			at = e.Time.UTC().Format(time.RFC3339)
		}
		v = WebhookBody{Event: e.Type, Object: WebhookObject{Kind: e.Object.Kind, Namespace: e.Object.Namespace, Name: e.Object.Name},
			Render: WebhookRender{Ref: e.Render.Ref, ChartVersion: e.Render.ChartVersion, Commit: e.Render.Commit},
			Reason: e.Reason, Message: e.Message, Time: at, Action: Action(e)}
	default:
		return nil, fmt.Errorf("unknown provider type %q", t)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// Signature is the value of the header X-Convoy-Signature for body with token:
// sha256= and the lowercase hex of HMAC-SHA256(token, body).
func Signature(body, token []byte) string {
	m := hmac.New(sha256.New, token)
	m.Write(body)
	return v1.SignaturePrefix + hex.EncodeToString(m.Sum(nil))
}

// slackEscape escapes the three characters Slack's mrkdwn reserves.
func slackEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

type slackText struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type slackBlock struct {
	Type     string      `json:"type"`
	Text     *slackText  `json:"text,omitempty"`
	Elements []slackText `json:"elements,omitempty"`
}

type slackMessage struct {
	Text   string       `json:"text"`
	Blocks []slackBlock `json:"blocks"`
}

// slackBody is a Slack incoming-webhook message: text (the notification's fallback)
// and blocks: the title in bold with the render, the reason and message, the command,
// and the UI link.
func slackBody(e Event, uiURL string) slackMessage {
	head := "*" + slackEscape(Title(e)) + "*"
	if r := RenderLine(e); r != "" {
		head += "\n" + slackEscape(r)
	}
	if l := reasonLine(e); l != "" {
		head += "\n" + slackEscape(l)
	}
	blocks := []slackBlock{
		{Type: "section", Text: &slackText{Type: "mrkdwn", Text: head}},
		{Type: "section", Text: &slackText{Type: "mrkdwn", Text: "To act: `" + slackEscape(Action(e)) + "`"}},
	}
	if link := Link(uiURL, e); link != "" {
		blocks = append(blocks, slackBlock{Type: "context", Elements: []slackText{{Type: "mrkdwn", Text: "<" + link + "|Open in convoy>"}}})
	}
	return slackMessage{Text: Title(e), Blocks: blocks}
}

type teamsMessage struct {
	Type        string            `json:"type"`
	Attachments []teamsAttachment `json:"attachments"`
}

type teamsAttachment struct {
	ContentType string    `json:"contentType"`
	ContentURL  *string   `json:"contentUrl"`
	Content     teamsCard `json:"content"`
}

type teamsCard struct {
	Schema  string        `json:"$schema"`
	Type    string        `json:"type"`
	Version string        `json:"version"`
	Body    []teamsItem   `json:"body"`
	Actions []teamsAction `json:"actions,omitempty"`
}

type teamsItem struct {
	Type     string      `json:"type"`
	Text     string      `json:"text,omitempty"`
	Weight   string      `json:"weight,omitempty"`
	Size     string      `json:"size,omitempty"`
	FontType string      `json:"fontType,omitempty"`
	Wrap     bool        `json:"wrap,omitempty"`
	Facts    []teamsFact `json:"facts,omitempty"`
}

type teamsFact struct {
	Title string `json:"title"`
	Value string `json:"value"`
}

type teamsAction struct {
	Type  string `json:"type"`
	Title string `json:"title"`
	URL   string `json:"url"`
}

// teamsBody is a message for a Microsoft Teams workflow webhook: one Adaptive Card
// with the title, facts (object, render, reason), the message and the command, and an
// Open in convoy button when uiURL is set.
func teamsBody(e Event, uiURL string) teamsMessage {
	facts := []teamsFact{{Title: "Object", Value: e.Object.Kind + " " + e.Object.Namespace + "/" + e.Object.Name}}
	if r := RenderLine(e); r != "" {
		facts = append(facts, teamsFact{Title: "Render", Value: r})
	}
	if e.Reason != "" {
		facts = append(facts, teamsFact{Title: "Reason", Value: e.Reason})
	}
	body := []teamsItem{
		{Type: "TextBlock", Text: Title(e), Weight: "Bolder", Size: "Medium", Wrap: true},
		{Type: "FactSet", Facts: facts},
	}
	if e.Message != "" {
		body = append(body, teamsItem{Type: "TextBlock", Text: e.Message, Wrap: true})
	}
	body = append(body, teamsItem{Type: "TextBlock", Text: "To act: " + Action(e), FontType: "Monospace", Wrap: true})
	card := teamsCard{Schema: "http://adaptivecards.io/schemas/adaptive-card.json", Type: "AdaptiveCard", Version: "1.4", Body: body}
	if link := Link(uiURL, e); link != "" {
		card.Actions = []teamsAction{{Type: "Action.OpenUrl", Title: "Open in convoy", URL: link}}
	}
	return teamsMessage{Type: "message", Attachments: []teamsAttachment{{
		ContentType: "application/vnd.microsoft.card.adaptive", Content: card}}}
}
