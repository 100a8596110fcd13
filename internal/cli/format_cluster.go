package cli

import (
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// FormatClusterList is the table of cluster list: NAME, READY (reason), VERSION,
// KUBECONFIG, AGE.
func FormatClusterList(items []v1.Cluster, now time.Time, t Terminal) string {
	rows := make([][]string, 0, len(items))
	for i := range items {
		c := &items[i]
		rows = append(rows, []string{c.Name, readyCell(c, t), orDash(c.Status.KubernetesVersion), secretRef(c.Spec.Kubeconfig.SecretRef), age(&c.CreationTimestamp, now)})
	}
	if len(rows) == 0 {
		return ""
	}
	return table([]string{"NAME", "READY", "VERSION", "KUBECONFIG", "AGE"}, rows)
}

func readyCell(c *v1.Cluster, t Terminal) string {
	cond := meta.FindStatusCondition(c.Status.Conditions, v1.ConditionReady)
	if cond == nil {
		return "-"
	}
	s := t.status(string(cond.Status))
	if cond.Reason != "" {
		s += " (" + cond.Reason + ")"
	}
	return s
}

func secretRef(s v1.SecretKeyReference) string {
	key := s.Key
	if key == "" {
		key = "value"
	}
	return fmt.Sprintf("%s/%s[%s]", s.Namespace, s.Name, key)
}

// FormatClusterStatus is the text of cluster status.
func FormatClusterStatus(c *v1.Cluster, now time.Time, t Terminal) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s\n", t.paint(ansiBold, "Cluster"), c.Name)
	fmt.Fprintf(&b, "%-17s %s\n", "Kubeconfig:", "Secret "+secretRef(c.Spec.Kubeconfig.SecretRef))
	ns := "all namespaces"
	if sel := c.Spec.NamespaceSelector; sel != nil && (len(sel.MatchLabels) > 0 || len(sel.MatchExpressions) > 0) {
		ns = metav1.FormatLabelSelector(sel)
	}
	fmt.Fprintf(&b, "%-17s %s\n", "Namespaces:", ns)
	fmt.Fprintf(&b, "%-17s %s\n", "Version:", orDash(c.Status.KubernetesVersion))
	b.WriteString("Conditions:\n")
	if len(c.Status.Conditions) == 0 {
		b.WriteString("  none yet: the controller has not checked this Cluster\n")
		return b.String()
	}
	rows := [][]string{}
	for _, cond := range c.Status.Conditions {
		rows = append(rows, []string{"  " + cond.Type, t.status(string(cond.Status)), orDash(cond.Reason), age(&cond.LastTransitionTime, now), orDash(cond.Message)})
	}
	b.WriteString(table([]string{"  TYPE", "STATUS", "REASON", "SINCE", "MESSAGE"}, rows))
	return b.String()
}
