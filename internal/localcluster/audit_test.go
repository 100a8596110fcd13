package localcluster_test

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"kumodo.io/convoy/internal/localcluster"
	"kumodo.io/convoy/internal/testenv"
)

// TestAuditWritesNamesWhoWrote: with Options.AuditWrites, kube-apiserver's audit log
// has an event for each write, with its user agent, verb and object, and none for a
// read or for a write before the window read; without it there is no log.
func TestAuditWritesNamesWhoWrote(t *testing.T) {
	testenv.Integration(t)
	c := start(t, localcluster.Options{AuditWrites: true})
	if c.AuditLog() == "" {
		t.Fatal("AuditLog() is empty with AuditWrites")
	}
	as := func(agent string) *kubernetes.Clientset {
		cfg := rest.CopyConfig(c.RestConfig())
		cfg.UserAgent = agent
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return cs
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "before"}}
	if _, err := as("before/1").CoreV1().ConfigMaps("default").Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The window starts after the first write's answer: the audit event's time is when
	// the answer was sent, on this machine's clock.
	from := time.Now()
	writer := as("writer/1")
	cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "audited"}}
	if _, err := writer.CoreV1().ConfigMaps("default").Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := writer.CoreV1().ConfigMaps("default").Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "dry"}},
		metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
		t.Fatal(err)
	}
	if _, err := as("reader/1").CoreV1().ConfigMaps("default").Get(t.Context(), "audited", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := writer.CoreV1().ConfigMaps("default").Delete(t.Context(), "audited", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	var mine []string
	testenv.Eventually(t, t.Context(), "the writer's three writes in the audit log", 10*time.Second, func() (bool, string) {
		events, err := localcluster.ReadAudit(c.AuditLog(), from, time.Now().Add(time.Second))
		if err != nil {
			return false, err.Error()
		}
		mine = mine[:0]
		for _, e := range events {
			if strings.HasPrefix(e.UserAgent, "before/") || strings.HasPrefix(e.UserAgent, "reader/") {
				t.Fatalf("an event of %s in the window: %+v", e.UserAgent, e)
			}
			if strings.HasPrefix(e.UserAgent, "writer/") {
				mine = append(mine, e.Verb+" "+e.Resource+" "+e.Namespace+"/"+e.Name+" dryRun="+boolString(e.DryRun))
			}
		}
		return len(mine) == 3, strings.Join(mine, "; ")
	})
	want := []string{"create configmaps default/audited dryRun=false", "create configmaps default/dry dryRun=true", "delete configmaps default/audited dryRun=false"}
	if strings.Join(mine, "; ") != strings.Join(want, "; ") {
		t.Errorf("the writer's events = %q, want %q", mine, want)
	}

	if plain := start(t, localcluster.Options{}); plain.AuditLog() != "" {
		t.Errorf("AuditLog() = %q without AuditWrites, want none", plain.AuditLog())
	}
}

func boolString(b bool) string {
	if b {
		return "true"
	}
	return "false"
}
