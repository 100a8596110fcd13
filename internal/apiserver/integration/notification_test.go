package integration_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
)

func alertObject(ns, name string, opts ...func(*convoyv1alpha1.Alert)) *convoyv1alpha1.Alert {
	a := &convoyv1alpha1.Alert{
		TypeMeta:   metav1.TypeMeta{APIVersion: convoyv1alpha1.SchemeGroupVersion.String(), Kind: "Alert"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: convoyv1alpha1.AlertSpec{
			Events:   []convoyv1alpha1.AlertEvent{convoyv1alpha1.AlertEventRolledBack, convoyv1alpha1.AlertEventHalted},
			Provider: convoyv1alpha1.AlertProvider{Type: convoyv1alpha1.AlertProviderSlack, SecretRef: convoyv1alpha1.LocalObjectReference{Name: "slack-url"}},
		},
	}
	for _, o := range opts {
		o(a)
	}
	return a
}

func receiverObject(ns, name string, opts ...func(*convoyv1alpha1.Receiver)) *convoyv1alpha1.Receiver {
	r := &convoyv1alpha1.Receiver{
		TypeMeta:   metav1.TypeMeta{APIVersion: convoyv1alpha1.SchemeGroupVersion.String(), Kind: "Receiver"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: convoyv1alpha1.ReceiverSpec{
			Type: convoyv1alpha1.ReceiverGitHub, SecretRef: convoyv1alpha1.LocalObjectReference{Name: "github-token"},
		},
	}
	for _, o := range opts {
		o(r)
	}
	return r
}

// write POSTs obj (PUTs it with a name, to subresource when given) as the admin and
// decodes the answer into out.
func write(t *testing.T, resource, ns, name, subresource string, obj, out runtime.Object) error {
	t.Helper()
	req := admin(t).Post().Namespace(ns).Resource(resource)
	if name != "" {
		req = admin(t).Put().Namespace(ns).Resource(resource).Name(name).SubResource(subresource)
	}
	return req.Body(obj).Do(ctx(t)).Into(out)
}

func read(t *testing.T, resource, ns, name string, out runtime.Object) {
	t.Helper()
	if err := admin(t).Get().Namespace(ns).Resource(resource).Name(name).Do(ctx(t)).Into(out); err != nil {
		t.Fatalf("get %s %s/%s: %v", resource, ns, name, err)
	}
}

// tableRows GETs resource in ns as a Table: the column names (priority 0, upper case)
// and the cells of each row by name.
func tableRows(t *testing.T, resource, ns string) ([]string, map[string][]interface{}) {
	t.Helper()
	raw, err := admin(t).Get().Namespace(ns).Resource(resource).
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").DoRaw(ctx(t))
	if err != nil {
		t.Fatalf("GET %s as Table: %v", resource, err)
	}
	var table metav1.Table
	if err := json.Unmarshal(raw, &table); err != nil {
		t.Fatal(err)
	}
	var columns []string
	for _, c := range table.ColumnDefinitions {
		if c.Priority == 0 {
			columns = append(columns, strings.ToUpper(c.Name))
		}
	}
	rows := map[string][]interface{}{}
	for _, row := range table.Rows {
		rows[row.Cells[0].(string)] = row.Cells[1:]
	}
	return columns, rows
}

// An Alert is created, read, listed and updated; invalid ones are 422 naming the
// field; its status is written through /status only, which changes nothing else;
// kubectl get alerts prints READY, EVENTS, PROVIDER, LAST DELIVERY.
func TestAlertAPI(t *testing.T) {
	ns := testNamespace(t)
	res := convoyv1alpha1.ResourceAlerts
	created := &convoyv1alpha1.Alert{}
	in := alertObject(ns, "on-call", func(a *convoyv1alpha1.Alert) {
		a.Labels = map[string]string{"team": "a"}
		a.Spec.UIURL = "https://convoy.example.com/"
		a.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "web"}}
		a.Status.ObservedGeneration = 7 // a create writes no status
	})
	if err := write(t, res, ns, "", "", in, created); err != nil {
		t.Fatalf("create: %v", err)
	}
	if created.Generation != 1 || created.UID == "" || created.Status.ObservedGeneration != 0 {
		t.Errorf("created: generation %d, uid %q, status %+v", created.Generation, created.UID, created.Status)
	}
	got := &convoyv1alpha1.Alert{}
	read(t, res, ns, "on-call", got)
	if diff := cmp.Diff(in.Spec, got.Spec); diff != "" {
		t.Errorf("stored spec (-sent +got):\n%s", diff)
	}
	if err := write(t, res, ns, "", "", alertObject(ns, "other"), &convoyv1alpha1.Alert{}); err != nil {
		t.Fatal(err)
	}
	list := func(params ...string) []string { return listNames(t, res, ns, params...) }
	if got := list(); !cmp.Equal(got, []string{"on-call", "other"}) {
		t.Errorf("list = %v, want [on-call other]", got)
	}
	if got := list("labelSelector", "team=a"); !cmp.Equal(got, []string{"on-call"}) {
		t.Errorf("labelSelector team=a: %v, want [on-call]", got)
	}
	if got := list("fieldSelector", "metadata.name=other"); !cmp.Equal(got, []string{"other"}) {
		t.Errorf("fieldSelector metadata.name=other: %v, want [other]", got)
	}

	// Invalid Alerts are refused with the field path, and none is stored.
	for name, tc := range map[string]struct {
		mutate func(*convoyv1alpha1.Alert)
		field  string
	}{
		"no events":             {func(a *convoyv1alpha1.Alert) { a.Spec.Events = nil }, "spec.events"},
		"unknown event":         {func(a *convoyv1alpha1.Alert) { a.Spec.Events = []convoyv1alpha1.AlertEvent{"Halted", "Deployed"} }, "spec.events[1]"},
		"unknown provider type": {func(a *convoyv1alpha1.Alert) { a.Spec.Provider.Type = "discord" }, "spec.provider.type"},
		"secret name not a name": {func(a *convoyv1alpha1.Alert) { a.Spec.Provider.SecretRef.Name = "Slack URL" },
			"spec.provider.secretRef.name"},
		"relative uiURL": {func(a *convoyv1alpha1.Alert) { a.Spec.UIURL = "/ui" }, "spec.uiURL"},
		"invalid selector": {func(a *convoyv1alpha1.Alert) {
			a.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: "Near"}}}
		}, "spec.selector.matchExpressions[0].operator"},
	} {
		t.Run(name, func(t *testing.T) {
			err := write(t, res, ns, "", "", alertObject(ns, "invalid", tc.mutate), &convoyv1alpha1.Alert{})
			requireInvalid(t, err, tc.field)
		})
	}
	if got := list(); len(got) != 2 {
		t.Errorf("after the rejected creates: %v, want [on-call other]", got)
	}

	// An update of the spec raises the generation and keeps status; an invalid one is
	// refused and leaves the stored Alert as it was.
	got.Spec.Events = append(got.Spec.Events, convoyv1alpha1.AlertEventApplied)
	got.Status.ObservedGeneration = 9
	updated := &convoyv1alpha1.Alert{}
	if err := write(t, res, ns, "on-call", "", got, updated); err != nil {
		t.Fatalf("update: %v", err)
	}
	if updated.Generation != 2 || len(updated.Spec.Events) != 3 || updated.Status.ObservedGeneration != 0 {
		t.Errorf("updated: generation %d, events %v, status %+v; want 2, three events, no status",
			updated.Generation, updated.Spec.Events, updated.Status)
	}
	bad := updated.DeepCopy()
	bad.Spec.Provider.Type = "pager"
	requireInvalid(t, write(t, res, ns, "on-call", "", bad, &convoyv1alpha1.Alert{}), "spec.provider.type")

	// /status writes status only: not the spec, labels or generation.
	st := updated.DeepCopy()
	st.Status = convoyv1alpha1.AlertStatus{
		ObservedGeneration: 2,
		Conditions: []metav1.Condition{{Type: convoyv1alpha1.ConditionReady, Status: metav1.ConditionFalse,
			Reason: convoyv1alpha1.ReasonDeliveryFailed, Message: "Slack answered 404 Not Found", LastTransitionTime: metav1.Now()}},
		LastDelivery: &convoyv1alpha1.AlertDelivery{Time: metav1.Now(), Event: convoyv1alpha1.AlertEventRolledBack,
			Object: convoyv1alpha1.AlertObjectReference{Kind: "Release", Name: "podinfo"}, Result: "404 Not Found"},
	}
	st.Spec.Provider.Type = convoyv1alpha1.AlertProviderWebhook
	st.Labels = map[string]string{"team": "b"}
	afterStatus := &convoyv1alpha1.Alert{}
	if err := write(t, res, ns, "on-call", convoyv1alpha1.SubresourceStatus, st, afterStatus); err != nil {
		t.Fatalf("status write: %v", err)
	}
	if afterStatus.Generation != 2 || afterStatus.Spec.Provider.Type != convoyv1alpha1.AlertProviderSlack || afterStatus.Labels["team"] != "a" {
		t.Errorf("/status changed more than status: generation %d, provider %s, labels %v",
			afterStatus.Generation, afterStatus.Spec.Provider.Type, afterStatus.Labels)
	}
	if afterStatus.Status.LastDelivery == nil || afterStatus.Status.LastDelivery.Result != "404 Not Found" || afterStatus.Status.ObservedGeneration != 2 {
		t.Errorf("status not stored: %+v", afterStatus.Status)
	}
	badStatus := afterStatus.DeepCopy()
	badStatus.Status.LastDelivery.Event = "Deployed"
	requireInvalid(t, write(t, res, ns, "on-call", convoyv1alpha1.SubresourceStatus, badStatus, &convoyv1alpha1.Alert{}),
		"status.lastDelivery.event")

	columns, rows := tableRows(t, res, ns)
	if want := []string{"NAME", "READY", "EVENTS", "PROVIDER", "LAST DELIVERY", "AGE"}; !cmp.Equal(columns, want) {
		t.Errorf("columns = %v, want %v", columns, want)
	}
	if got, want := rows["on-call"][:3], []interface{}{"DeliveryFailed", "RolledBack,Halted,Applied", "slack"}; !cmp.Equal(got, want) {
		t.Errorf("READY, EVENTS, PROVIDER of on-call = %v, want %v", got, want)
	}
	if cell, _ := rows["on-call"][3].(string); !strings.HasPrefix(cell, "RolledBack ") || !strings.HasSuffix(cell, " ago") {
		t.Errorf("LAST DELIVERY of on-call = %q, want RolledBack <age> ago", cell)
	}
	if got, want := rows["other"][:4], []interface{}{"", "RolledBack,Halted", "slack", ""}; !cmp.Equal(got, want) {
		t.Errorf("cells of other = %v, want %v", got, want)
	}
}

// A Receiver is created, read, listed and updated; invalid ones are 422 naming the
// field; its status, webhookPath included, is written through /status only; kubectl
// get receivers prints READY, TYPE, PATH.
func TestReceiverAPI(t *testing.T) {
	ns := testNamespace(t)
	res := convoyv1alpha1.ResourceReceivers
	created := &convoyv1alpha1.Receiver{}
	in := receiverObject(ns, "github", func(r *convoyv1alpha1.Receiver) {
		r.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"repo": "podinfo"}}
		r.Status.WebhookPath = "/hooks/forged" // a create writes no status
	})
	if err := write(t, res, ns, "", "", in, created); err != nil {
		t.Fatalf("create: %v", err)
	}
	if created.Generation != 1 || created.Status.WebhookPath != "" {
		t.Errorf("created: generation %d, status %+v", created.Generation, created.Status)
	}
	got := &convoyv1alpha1.Receiver{}
	read(t, res, ns, "github", got)
	if diff := cmp.Diff(in.Spec, got.Spec); diff != "" {
		t.Errorf("stored spec (-sent +got):\n%s", diff)
	}
	l := &convoyv1alpha1.ReceiverList{}
	if err := admin(t).Get().Namespace(ns).Resource(res).Do(ctx(t)).Into(l); err != nil || len(l.Items) != 1 || l.Items[0].Name != "github" {
		t.Errorf("list: %v, %d items, want [github]", err, len(l.Items))
	}

	for name, tc := range map[string]struct {
		mutate func(*convoyv1alpha1.Receiver)
		field  string
	}{
		"no type":        {func(r *convoyv1alpha1.Receiver) { r.Spec.Type = "" }, "spec.type"},
		"unknown type":   {func(r *convoyv1alpha1.Receiver) { r.Spec.Type = "bitbucket" }, "spec.type"},
		"no secret name": {func(r *convoyv1alpha1.Receiver) { r.Spec.SecretRef.Name = "" }, "spec.secretRef.name"},
		"invalid selector": {func(r *convoyv1alpha1.Receiver) {
			r.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"repo": "pod info"}}
		}, "spec.selector.matchLabels"},
	} {
		t.Run(name, func(t *testing.T) {
			err := write(t, res, ns, "", "", receiverObject(ns, "invalid", tc.mutate), &convoyv1alpha1.Receiver{})
			requireInvalid(t, err, tc.field)
		})
	}

	got.Spec.Type = convoyv1alpha1.ReceiverGeneric
	got.Status.WebhookPath = "/hooks/forged"
	updated := &convoyv1alpha1.Receiver{}
	if err := write(t, res, ns, "github", "", got, updated); err != nil {
		t.Fatalf("update: %v", err)
	}
	if updated.Generation != 2 || updated.Spec.Type != convoyv1alpha1.ReceiverGeneric || updated.Status.WebhookPath != "" {
		t.Errorf("updated: generation %d, type %s, status %+v; want 2, generic, no status", updated.Generation, updated.Spec.Type, updated.Status)
	}

	path := convoyv1alpha1.ReceiverWebhookPath([]byte("s3cret"), "github", ns)
	st := updated.DeepCopy()
	st.Spec.Type = convoyv1alpha1.ReceiverGitLab
	st.Status = convoyv1alpha1.ReceiverStatus{ObservedGeneration: 2, WebhookPath: path,
		Conditions: []metav1.Condition{{Type: convoyv1alpha1.ConditionReady, Status: metav1.ConditionTrue,
			Reason: convoyv1alpha1.ReasonServing, Message: "serving", LastTransitionTime: metav1.Now()}},
		LastCall: &convoyv1alpha1.ReceiverCall{Time: metav1.Now(), Result: "refreshed Release podinfo"}}
	afterStatus := &convoyv1alpha1.Receiver{}
	if err := write(t, res, ns, "github", convoyv1alpha1.SubresourceStatus, st, afterStatus); err != nil {
		t.Fatalf("status write: %v", err)
	}
	if afterStatus.Generation != 2 || afterStatus.Spec.Type != convoyv1alpha1.ReceiverGeneric || afterStatus.Status.WebhookPath != path ||
		afterStatus.Status.LastCall == nil {
		t.Errorf("after /status: generation %d, type %s, status %+v", afterStatus.Generation, afterStatus.Spec.Type, afterStatus.Status)
	}
	badStatus := afterStatus.DeepCopy()
	badStatus.Status.WebhookPath = "/hooks/github"
	requireInvalid(t, write(t, res, ns, "github", convoyv1alpha1.SubresourceStatus, badStatus, &convoyv1alpha1.Receiver{}),
		"status.webhookPath")

	columns, rows := tableRows(t, res, ns)
	if want := []string{"NAME", "READY", "TYPE", "PATH", "AGE"}; !cmp.Equal(columns, want) {
		t.Errorf("columns = %v, want %v", columns, want)
	}
	if got, want := rows["github"][:3], []interface{}{"True", "generic", path}; !cmp.Equal(got, want) {
		t.Errorf("READY, TYPE, PATH = %v, want %v", got, want)
	}
}
