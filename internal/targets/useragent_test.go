package targets

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"

	"kumodo.io/convoy/internal/localcluster"
	"kumodo.io/convoy/internal/testenv"
)

// TestTargetRequestsCarryConvoysUserAgent: what convoy writes to a target names
// convoy's binary in the target's audit log, though a kubeconfig has no user agent
// (Go's own, Go-http-client, otherwise).
func TestTargetRequestsCarryConvoysUserAgent(t *testing.T) {
	testenv.Integration(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg := rest.CopyConfig(host.RestConfig())
	cfg.UserAgent = ""
	target, err := newTarget(ctx, "", cfg, clock.RealClock{}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	from := time.Now()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "user-agent-" + testenv.RandomSuffix()}}
	if err := target.Client.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	want := rest.DefaultKubernetesUserAgent()
	testenv.Eventually(t, ctx, "the create in the audit log", 10*time.Second, func() (bool, string) {
		events, err := localcluster.ReadAudit(host.AuditLog(), from, time.Now().Add(time.Second))
		if err != nil {
			return false, err.Error()
		}
		for _, e := range events {
			if e.Resource == "configmaps" && e.Name == cm.Name {
				if e.UserAgent != want {
					t.Fatalf("the create's user agent is %q, want %q", e.UserAgent, want)
				}
				return true, ""
			}
		}
		return false, "no event for the create"
	})
}
