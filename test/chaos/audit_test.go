package chaos

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"kumodo.io/convoy/internal/localcluster"
)

// TestAttributeWrites: the quiet window counts convoy's writes to the applied
// resources and names everyone else's (kube-controller-manager's root CA ConfigMap,
// kube-apiserver's own), without dry runs or other resources.
func TestAttributeWrites(t *testing.T) {
	at := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	events := []localcluster.AuditEvent{
		{Verb: "patch", Resource: "deployments", Namespace: "chaos-1", Name: "r001-web", UserAgent: "convoy/v0.0.0 (linux/amd64) kubernetes/$Format", User: "admin", Code: 200, At: at},
		{Verb: "patch", Resource: "deployments", Namespace: "chaos-1", Name: "r001-web", UserAgent: "convoy/v0.0.0 (linux/amd64) kubernetes/$Format", DryRun: true, Code: 200, At: at},
		{Verb: "update", Resource: "jobs", Subresource: "status", Namespace: "chaos-1", Name: "h", UserAgent: "convoy/v0.0.0", Code: 200, At: at},
		{Verb: "create", Resource: "configmaps", Namespace: "chaos-2", Name: "kube-root-ca.crt", User: "system:serviceaccount:kube-system:root-ca-cert-publisher",
			UserAgent: "kube-controller-manager/v1.37.2 (linux/amd64) kubernetes/abc/system:serviceaccount:kube-system:root-ca-cert-publisher", Code: 201, At: at},
		{Verb: "update", Resource: "leases", Namespace: "convoy-chaos", Name: "convoy", UserAgent: "convoy/v0.0.0", Code: 200, At: at},
		{Verb: "update", Resource: "configmaps", Namespace: "kube-system", Name: "a", UserAgent: "convoyish/1", Code: 200, At: at},
		{Verb: "create", Resource: "configmaps", Namespace: "chaos-1", Name: "b", UserAgent: "convoy-observer", Code: 201, At: at},
	}
	convoys, others := attributeWrites(events, []string{"configmaps", "deployments", "jobs"}, "remote ")
	if diff := cmp.Diff(map[string]float64{"remote patch deployments": 1, "remote update jobs/status": 1, "remote create configmaps": 1}, convoys); diff != "" {
		t.Errorf("convoy's writes (-want +got):\n%s", diff)
	}
	want := []string{
		`remote create configmaps chaos-2/kube-root-ca.crt (201) by system:serviceaccount:kube-system:root-ca-cert-publisher as "kube-controller-manager/v1.37.2 (linux/amd64) kubernetes/abc/system:serviceaccount:kube-system:root-ca-cert-publisher" at 2026-12-07T10:00:00Z`,
		`remote update configmaps kube-system/a (200) by  as "convoyish/1" at 2026-12-07T10:00:00Z`,
	}
	if diff := cmp.Diff(want, others); diff != "" {
		t.Errorf("the others' writes (-want +got):\n%s", diff)
	}
}
