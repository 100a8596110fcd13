package cli

import (
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// DeliveryFailures are the failed delivery attempts of one Alert that the cluster
// still keeps as Warning Events (convoy controller records one per attempt; the
// cluster drops Events after its --event-ttl, 1h by default).
type DeliveryFailures struct {
	// Count is the number of failed attempts recorded.
	Count int
	// Reason, Message and Time are those of the latest one (Reason empty: none).
	Reason, Message string
	Time            metav1.Time
}

// AlertFailures sums the Warning Events of Alerts by Alert (namespace/name).
func AlertFailures(events []corev1.Event) map[string]DeliveryFailures {
	out := map[string]DeliveryFailures{}
	for i := range events {
		e := &events[i]
		k := e.InvolvedObject.Namespace + "/" + e.InvolvedObject.Name
		f := out[k]
		f.Count += eventCount(e)
		if at := eventTime(e); f.Reason == "" || at.After(f.Time.Time) {
			f.Reason, f.Message, f.Time = e.Reason, e.Message, at
		}
		out[k] = f
	}
	return out
}

// AlertWarningEvents are the Warning Events of the Alert name, newest first.
func AlertWarningEvents(events []corev1.Event, name string) []corev1.Event {
	var out []corev1.Event
	for _, e := range events {
		if e.InvolvedObject.Name == name {
			out = append(out, e)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := eventTime(&out[i]), eventTime(&out[j])
		return b.Before(&a)
	})
	return out
}

// eventCount is how many times an Event happened (core/v1 count, or the series of an
// events.k8s.io/v1 recorder), at least 1.
func eventCount(e *corev1.Event) int {
	n := max(1, int(e.Count))
	if e.Series != nil {
		n = max(n, int(e.Series.Count))
	}
	return n
}

// eventTime is when an Event last happened.
func eventTime(e *corev1.Event) metav1.Time {
	t := e.CreationTimestamp
	for _, c := range []metav1.Time{e.FirstTimestamp, e.LastTimestamp, metav1.Time(e.EventTime)} {
		if c.After(t.Time) {
			t = c
		}
	}
	if e.Series != nil && e.Series.LastObservedTime.After(t.Time) {
		t = metav1.Time(e.Series.LastObservedTime)
	}
	return t
}

// FormatAlertList is the table of alert list: NAMESPACE (with -A), NAME, TARGET
// (spec.provider.type), EVENTS, READY (reason), LAST DELIVERY (time ago, event and
// result), FAILED (failed attempts the cluster's Events keep, and the reason of the
// last; "?" when the Events could not be read: failures nil), AGE.
func FormatAlertList(items []v1.Alert, failures map[string]DeliveryFailures, allNamespaces bool, now time.Time, t Terminal) string {
	header := []string{"NAME", "TARGET", "EVENTS", "READY", "LAST DELIVERY", "FAILED", "AGE"}
	if allNamespaces {
		header = append([]string{"NAMESPACE"}, header...)
	}
	rows := make([][]string, 0, len(items))
	for i := range items {
		a := &items[i]
		row := []string{a.Name, string(a.Spec.Provider.Type), eventsCell(a.Spec.Events), readyReasonCell(a.Status.Conditions, t),
			lastDeliveryCell(a.Status.LastDelivery, now, t), failedCell(a, failures, t), age(&a.CreationTimestamp, now)}
		if allNamespaces {
			row = append([]string{a.Namespace}, row...)
		}
		rows = append(rows, row)
	}
	if len(rows) == 0 {
		return ""
	}
	return table(header, rows)
}

// eventsCell is spec.events: "all" when every event, else the first three and how
// many more ("RolledBack,RolloutFailed,Halted,+2"); alert get lists them all.
func eventsCell(events []v1.AlertEvent) string {
	if len(events) == 0 {
		return "-"
	}
	if len(events) == len(v1.AlertEvents) {
		return "all"
	}
	s := make([]string, 0, 3)
	for i, e := range events {
		if i == 3 {
			s = append(s, fmt.Sprintf("+%d", len(events)-3))
			break
		}
		s = append(s, string(e))
	}
	return strings.Join(s, ",")
}

// readyReasonCell is the Ready condition: "True (Delivered)"; "-" before the
// controller wrote one.
func readyReasonCell(conds []metav1.Condition, t Terminal) string {
	c := meta.FindStatusCondition(conds, v1.ConditionReady)
	if c == nil {
		return "-"
	}
	s := t.status(string(c.Status))
	if c.Reason != "" {
		s += " (" + c.Reason + ")"
	}
	return s
}

// maxResult is the width of a result in a table cell; get prints it whole.
const maxResult = 40

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// delivered says whether a delivery's result is the provider's 2xx answer.
func delivered(result string) bool {
	return len(result) >= 3 && result[0] == '2' && (len(result) == 3 || result[3] == ' ')
}

func lastDeliveryCell(d *v1.AlertDelivery, now time.Time, t Terminal) string {
	if d == nil {
		return "never"
	}
	result := clip(orDash(d.Result), maxResult)
	if delivered(d.Result) {
		result = t.paint(ansiGreen, result)
	} else {
		result = t.paint(ansiRed, result)
	}
	return fmt.Sprintf("%s %s: %s", ago(&d.Time, now), d.Event, result)
}

// failedCell is the failed attempts kept and the last reason: "3 (DeliveryFailed)",
// "0"; "?" for the count when the Events could not be read. The reason is the Ready
// condition's while it is False, else the last Warning's.
func failedCell(a *v1.Alert, failures map[string]DeliveryFailures, t Terminal) string {
	count, reason := "?", ""
	if failures != nil {
		f := failures[a.Namespace+"/"+a.Name]
		count, reason = fmt.Sprint(f.Count), f.Reason
	}
	if c := meta.FindStatusCondition(a.Status.Conditions, v1.ConditionReady); c != nil && c.Status == metav1.ConditionFalse {
		reason = c.Reason
	}
	if reason == "" {
		return count
	}
	return count + " (" + t.paint(ansiRed, reason) + ")"
}

// AlertView is what alert get shows besides the Alert.
type AlertView struct {
	// Warnings are the Alert's Warning Events, newest first.
	Warnings []corev1.Event
	// WarningsErr is why they could not be read (then Warnings is empty).
	WarningsErr error
}

// FormatAlert is the text of alert get: the target, events, selector, the last
// delivery in full, the failed attempts the cluster keeps, the conditions, and what
// to do when the Alert is not Ready.
func FormatAlert(a *v1.Alert, view AlertView, now time.Time, t Terminal) string {
	var b strings.Builder
	line := func(label, value string) { fmt.Fprintf(&b, "%-15s %s\n", label+":", value) }
	fmt.Fprintf(&b, "%s %s/%s\n", t.paint(ansiBold, "Alert"), a.Namespace, a.Name)
	line("Target", fmt.Sprintf("%s, URL in key %s of Secret %s", a.Spec.Provider.Type, v1.SecretKeyAddress, a.Spec.Provider.SecretRef.Name))
	events := make([]string, len(a.Spec.Events))
	for i, e := range a.Spec.Events {
		events[i] = string(e)
	}
	line("Events", orDash(strings.Join(events, ", ")))
	line("Selects", selectorText(a.Spec.Selector))
	if a.Spec.UIURL != "" {
		line("UI links", a.Spec.UIURL)
	}
	if d := a.Status.LastDelivery; d != nil {
		line("Last delivery", fmt.Sprintf("%s of %s %s, %s (%s)", d.Event, d.Object.Kind, d.Object.Name, ago(&d.Time, now), d.Time.UTC().Format(time.RFC3339)))
		line("Result", orDash(d.Result))
	} else {
		line("Last delivery", "never: no event of the Releases and ReleaseSets it selects has been sent yet")
	}
	switch {
	case view.WarningsErr != nil:
		line("Failed", fmt.Sprintf("unknown: the Alert's Events could not be read (%v)", view.WarningsErr))
	case len(view.Warnings) == 0:
		line("Failed", "none in the Events the cluster keeps")
	default:
		f := AlertFailures(view.Warnings)[a.Namespace+"/"+a.Name]
		line("Failed", fmt.Sprintf("%d attempt(s) in the Events the cluster keeps; last %s: %s", f.Count, ago(&f.Time, now), f.Reason))
	}
	writeObjectConditions(&b, a.Status.Conditions, "the controller has not written this Alert's status: is convoy controller running?", now, t)
	if len(view.Warnings) > 0 {
		b.WriteString("Failed attempts:\n")
		rows := [][]string{}
		for i, e := range view.Warnings {
			if i == 5 {
				rows = append(rows, []string{"  …", "", "", fmt.Sprintf("%d more: kubectl get events -n %s --field-selector involvedObject.name=%s", len(view.Warnings)-5, a.Namespace, a.Name)})
				break
			}
			at := eventTime(&e)
			rows = append(rows, []string{"  " + ago(&at, now), fmt.Sprint(eventCount(&e)), e.Reason, e.Message})
		}
		b.WriteString(table([]string{"  WHEN", "COUNT", "REASON", "MESSAGE"}, rows))
	}
	if next := alertNext(a); next != "" {
		fmt.Fprintf(&b, "Next: %s\n", next)
	}
	return b.String()
}

// alertNext says what to do about an Alert that is not Ready.
func alertNext(a *v1.Alert) string {
	c := meta.FindStatusCondition(a.Status.Conditions, v1.ConditionReady)
	if c == nil || c.Status == metav1.ConditionTrue {
		return ""
	}
	secret := a.Spec.Provider.SecretRef.Name
	switch c.Reason {
	case v1.ReasonSecretNotFound:
		return fmt.Sprintf("create the Secret %s in namespace %s with the key %s (the URL to post to), e.g. kubectl -n %s create secret generic %s --from-literal=%s=<URL>",
			secret, a.Namespace, v1.SecretKeyAddress, a.Namespace, secret, v1.SecretKeyAddress)
	case v1.ReasonDeliveryFailed:
		return fmt.Sprintf("check the URL in key %s of Secret %s and that the provider accepts it; the controller retries with backoff, and the next delivery sets Ready again",
			v1.SecretKeyAddress, secret)
	}
	return ""
}

// FormatReceiverList is the table of receiver list: NAMESPACE (with -A), NAME, TYPE,
// READY (reason), PATH (status.webhookPath), LAST CALL (time ago and result), AGE.
func FormatReceiverList(items []v1.Receiver, allNamespaces bool, now time.Time, t Terminal) string {
	header := []string{"NAME", "TYPE", "READY", "PATH", "LAST CALL", "AGE"}
	if allNamespaces {
		header = append([]string{"NAMESPACE"}, header...)
	}
	rows := make([][]string, 0, len(items))
	for i := range items {
		r := &items[i]
		row := []string{r.Name, string(r.Spec.Type), readyReasonCell(r.Status.Conditions, t), orDash(r.Status.WebhookPath),
			lastCallCell(r.Status.LastCall, now), age(&r.CreationTimestamp, now)}
		if allNamespaces {
			row = append([]string{r.Namespace}, row...)
		}
		rows = append(rows, row)
	}
	if len(rows) == 0 {
		return ""
	}
	return table(header, rows)
}

func lastCallCell(c *v1.ReceiverCall, now time.Time) string {
	if c == nil {
		return "never"
	}
	return fmt.Sprintf("%s: %s", ago(&c.Time, now), clip(orDash(c.Result), maxResult))
}

// FormatReceiver is the text of receiver get: type, Secret, selector, the path, the
// last call in full, the conditions, and what to do when the Receiver is not Ready.
func FormatReceiver(r *v1.Receiver, now time.Time, t Terminal) string {
	var b strings.Builder
	line := func(label, value string) { fmt.Fprintf(&b, "%-15s %s\n", label+":", value) }
	fmt.Fprintf(&b, "%s %s/%s\n", t.paint(ansiBold, "Receiver"), r.Namespace, r.Name)
	line("Type", string(r.Spec.Type))
	line("Secret", fmt.Sprintf("%s, key %s", r.Spec.SecretRef.Name, v1.SecretKeyToken))
	line("Selects", selectorText(r.Spec.Selector))
	if r.Status.WebhookPath != "" {
		line("Path", r.Status.WebhookPath+" (on the controller's receiver server; it changes with the token)")
	} else {
		line("Path", "none yet")
	}
	if c := r.Status.LastCall; c != nil {
		line("Last call", fmt.Sprintf("%s (%s)", ago(&c.Time, now), c.Time.UTC().Format(time.RFC3339)))
		line("Result", orDash(c.Result))
	} else {
		line("Last call", "never: no authenticated call yet")
	}
	writeObjectConditions(&b, r.Status.Conditions, "the controller has not written this Receiver's status: is convoy controller running?", now, t)
	if next := receiverNext(r); next != "" {
		fmt.Fprintf(&b, "Next: %s\n", next)
	}
	return b.String()
}

// receiverNext says what to do about a Receiver that is not Ready.
func receiverNext(r *v1.Receiver) string {
	c := meta.FindStatusCondition(r.Status.Conditions, v1.ConditionReady)
	if c == nil || c.Status == metav1.ConditionTrue {
		return ""
	}
	switch c.Reason {
	case v1.ReasonSecretNotFound:
		return fmt.Sprintf("create the Secret %s in namespace %s with the key %s, e.g. kubectl -n %s create secret generic %s --from-literal=%s=\"$TOKEN\"",
			r.Spec.SecretRef.Name, r.Namespace, v1.SecretKeyToken, r.Namespace, r.Spec.SecretRef.Name, v1.SecretKeyToken)
	case v1.ReasonReceiverServerDisabled:
		return "run convoy controller with --receiver-bind-address (chart value receiver.enabled: true) so that a server answers the path"
	}
	return ""
}

// selectorText is a label selector of an Alert or Receiver: empty or unset selects
// every Release and ReleaseSet of the namespace.
func selectorText(sel *metav1.LabelSelector) string {
	if sel == nil || (len(sel.MatchLabels) == 0 && len(sel.MatchExpressions) == 0) {
		return "every Release and ReleaseSet of the namespace"
	}
	return "Releases and ReleaseSets with labels " + metav1.FormatLabelSelector(sel)
}

// writeObjectConditions writes a Conditions: table, or none when there are none yet.
func writeObjectConditions(b *strings.Builder, conds []metav1.Condition, none string, now time.Time, t Terminal) {
	b.WriteString("Conditions:\n")
	if len(conds) == 0 {
		fmt.Fprintf(b, "  none yet: %s\n", none)
		return
	}
	rows := [][]string{}
	for _, c := range conds {
		rows = append(rows, []string{"  " + c.Type, t.status(string(c.Status)), orDash(c.Reason), age(&c.LastTransitionTime, now), orDash(c.Message)})
	}
	b.WriteString(table([]string{"  TYPE", "STATUS", "REASON", "SINCE", "MESSAGE"}, rows))
}
