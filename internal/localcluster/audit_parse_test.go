package localcluster_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"kumodo.io/convoy/internal/localcluster"
)

func TestParseAudit(t *testing.T) {
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	const (
		early = `{"kind":"Event","verb":"create","userAgent":"a/1","user":{"username":"admin"},"objectRef":{"resource":"configmaps","namespace":"ns","name":"x"},"requestURI":"/api/v1/namespaces/ns/configmaps","responseStatus":{"code":201},"stageTimestamp":"2026-12-07T10:00:00.000000Z"}`
		in    = `{"kind":"Event","verb":"patch","userAgent":"convoy/v0","user":{"username":"admin"},"objectRef":{"resource":"deployments","namespace":"ns","name":"web","apiGroup":"apps"},"requestURI":"/apis/apps/v1/namespaces/ns/deployments/web?fieldManager=convoy","responseStatus":{"code":200},"stageTimestamp":"2026-12-07T10:00:05.500000Z"}`
		dry   = `{"kind":"Event","verb":"patch","userAgent":"convoy/v0","user":{"username":"admin"},"objectRef":{"resource":"deployments","subresource":"status","namespace":"ns","name":"web"},"requestURI":"/apis/apps/v1/namespaces/ns/deployments/web?dryRun=All","responseStatus":{"code":200},"stageTimestamp":"2026-12-07T10:00:06Z"}`
		late  = `{"kind":"Event","verb":"delete","userAgent":"b/1","user":{"username":"system:kube-controller-manager"},"objectRef":{"resource":"pods","namespace":"ns","name":"p"},"responseStatus":{"code":200},"stageTimestamp":"2026-12-07T10:00:10Z"}`
		cut   = `{"kind":"Event","verb":"create",`
	)
	from, to := at("2026-12-07T10:00:05Z"), at("2026-12-07T10:00:10Z")
	got, err := localcluster.ParseAudit(strings.NewReader(early+"\n"+in+"\n"+dry+"\n"+late+"\n"+cut), from, to)
	if err != nil {
		t.Fatal(err)
	}
	want := []localcluster.AuditEvent{
		{Verb: "patch", UserAgent: "convoy/v0", User: "admin", Resource: "deployments", Namespace: "ns", Name: "web", Code: 200, At: at("2026-12-07T10:00:05.5Z")},
		{Verb: "patch", UserAgent: "convoy/v0", User: "admin", Resource: "deployments", Subresource: "status", Namespace: "ns", Name: "web", DryRun: true, Code: 200, At: at("2026-12-07T10:00:06Z")},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events in [from, to) (-want +got):\n%s", diff)
	}
	if _, err := localcluster.ParseAudit(strings.NewReader("not json\n"), from, to); err == nil {
		t.Error("a line that is not JSON: no error")
	}
}
