package cli

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/testenv"
	"kumodo.io/convoy/internal/ui"
)

// The Notifications page shows an Alert's last delivery and failed attempts and a
// Receiver's path and last call, and follows their status live; a Release's page
// lists the Alerts that select it.
func TestUIBrowserNotifications(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	rel := createRelease(t, ns, "web")
	rel.Labels = map[string]string{"tier": "web"}
	if err := admin(t).rest.Put().Namespace(ns).Resource(v1.ResourceReleases).Name("web").Body(rel).Do(testCtx(t)).Error(); err != nil {
		t.Fatal(err)
	}
	delivery := &v1.AlertDelivery{Time: metav1.NewTime(time.Now().Add(-3 * time.Minute)), Event: v1.AlertEventApplied,
		Object: v1.AlertObjectReference{Kind: "Release", Name: "web"}, Result: "200 OK"}
	onCall := createAlert(t, ns, "on-call", v1.AlertStatus{
		Conditions:   []metav1.Condition{{Type: v1.ConditionReady, Status: metav1.ConditionTrue, Reason: v1.ReasonDelivered, Message: "Applied of Release web delivered: 200 OK", LastTransitionTime: metav1.Now()}},
		LastDelivery: delivery,
	})
	// An Alert whose selector does not select web is not on web's page.
	other := createAlert(t, ns, "db-only", v1.AlertStatus{})
	other.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "db"}}
	if err := admin(t).rest.Put().Namespace(ns).Resource(v1.ResourceAlerts).Name("db-only").Body(other).Do(testCtx(t)).Error(); err != nil {
		t.Fatal(err)
	}
	path := v1.ReceiverWebhookPath([]byte("s3cret"), "github", ns)
	createReceiver(t, ns, "github", v1.ReceiverStatus{
		Conditions:  []metav1.Condition{{Type: v1.ConditionReady, Status: metav1.ConditionTrue, Reason: v1.ReasonServing, Message: "serving", LastTransitionTime: metav1.Now()}},
		WebhookPath: path,
		LastCall:    &v1.ReceiverCall{Time: metav1.NewTime(time.Now().Add(-time.Minute)), Result: "push: refreshing 1 Release and 0 ReleaseSets"},
	})

	base := startUI(t, "-n", ns)
	ctx := browser(t)
	alert, receiver := `[data-alert="`+ns+`/on-call"]`, `[data-receiver="`+ns+`/github"]`
	run(t, ctx, "open the Notifications page", chromedp.Navigate(base+"#/notifications"),
		textIs(alert+` [data-testid=last-delivery]`, "3m ago Applied of Release web: 200 OK"),
		textIs(alert+` [data-testid=ready]`, v1.ReasonDelivered),
		textIs(alert+` [data-testid=failed]`, "0"),
		textIs(receiver+` [data-testid=path]`, path),
		textIs(receiver+` [data-testid=last-call]`, "1m ago: push: refreshing 1 Release and 0 ReleaseSets"),
		textIs(receiver+` [data-testid=ready]`, v1.ReasonServing))
	screenshot(t, ctx, "notifications-delivered")

	// A failed attempt: the controller writes the status and records a Warning Event.
	failed := "Applied of Release web: the provider answered 500 Internal Server Error; check the URL in key address of Secret slack-webhook (attempt 1 of 8, retried with backoff)"
	a, err := admin(t).GetAlert(testCtx(t), ns, "on-call")
	if err != nil {
		t.Fatal(err)
	}
	a.Status.Conditions = []metav1.Condition{{Type: v1.ConditionReady, Status: metav1.ConditionFalse, Reason: v1.ReasonDeliveryFailed, Message: failed, LastTransitionTime: metav1.Now()}}
	a.Status.LastDelivery = &v1.AlertDelivery{Time: metav1.Now(), Event: v1.AlertEventApplied, Object: delivery.Object, Result: "500 Internal Server Error"}
	if err := admin(t).rest.Put().Namespace(ns).Resource(v1.ResourceAlerts).Name("on-call").SubResource("status").Body(a).Do(testCtx(t)).Error(); err != nil {
		t.Fatal(err)
	}
	recordDeliveryFailure(t, onCall, failed)
	run(t, ctx, "the failed delivery shows without a reload",
		textHas(alert+` [data-testid=last-delivery]`, "Applied of Release web: 500 Internal Server Error"),
		textHas(alert+` [data-testid=ready]`, failed),
		textHas(alert+` [data-testid=failed]`, "1 (DeliveryFailed"))
	screenshot(t, ctx, "notifications")

	run(t, ctx, "the Release's page lists the Alert that selects it", chromedp.Navigate(base+"#/releases/"+ns+"/web"),
		textHas(`[data-release-alert=on-call]`, "Applied of Release web: 500 Internal Server Error"))
	n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('[data-release-alert=db-only]').length`))
	if err != nil || n != 0 {
		t.Errorf("the Alert db-only (selector tier=db) is on the page of web (tier=web): %d rows, %v", n, err)
	}
}

// A user who may read Releases but not Alerts and Receivers is not streamed them:
// the UI does not watch what the user may not list and watch, and says so.
func TestUINotificationsFollowRBAC(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	createRelease(t, ns, "web")
	createAlert(t, ns, "on-call", v1.AlertStatus{})
	createReceiver(t, ns, "github", v1.ReceiverStatus{})
	admin, err := client.New(env.admin, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	user := "viewer-" + testenv.RandomSuffix()
	testenv.Grant(t, testCtx(t), admin, ns, user,
		rbacv1.PolicyRule{APIGroups: []string{v1.GroupName}, Resources: []string{"releases", "receivers"}, Verbs: []string{"get", "list", "watch"}})
	base := startUI(t, "--kubeconfig", userKubeconfig(t, user), "-n", ns)

	code, info := call(t, "GET", base+"api/info", nil, "")
	b, _ := json.Marshal(info["namespaces"])
	var nss []struct{ Alerts, Receivers bool }
	_ = json.Unmarshal(b, &nss)
	if code != 200 || len(nss) != 1 || nss[0].Alerts || !nss[0].Receivers {
		t.Errorf("/api/info: %d %s, want one namespace with alerts false and receivers true", code, b)
	}
	s := openStream(t, base)
	seen := map[string]bool{}
	for {
		m := s.next(t, "the snapshot", func(ui.Message) bool { return true })
		if m.Op == "synced" {
			break
		}
		seen[m.Kind] = true
	}
	if seen[ui.KindAlert] || !seen[ui.KindReceiver] || !seen[ui.KindRelease] {
		t.Errorf("the snapshot of a user who may list Releases and Receivers but not Alerts has kinds %v", seen)
	}
}
