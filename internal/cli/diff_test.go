package cli

import (
	"strings"
	"testing"
)

func TestUnifiedDiff(t *testing.T) {
	live := []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: podinfo\nspec:\n  replicas: 2\n")
	want := []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: podinfo\nspec:\n  replicas: 5\n")
	var b strings.Builder
	b.WriteString(UnifiedDiff("Deployment podinfo/podinfo", live, want))
	b.WriteString(UnifiedDiff("Service podinfo/podinfo", nil, []byte("kind: Service\n")))
	b.WriteString(UnifiedDiff("ConfigMap podinfo/old (pruned)", []byte("kind: ConfigMap\n"), nil))
	b.WriteString(UnifiedDiff("unchanged", live, live))
	golden(t, "diff", b.String())
}

func TestDecodeObjectsSkipsHooksAndEmptyDocuments(t *testing.T) {
	stream := `apiVersion: v1
kind: Service
metadata: {name: podinfo, namespace: podinfo}
---
---
apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
  annotations: {helm.sh/hook: pre-upgrade}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: podinfo, namespace: podinfo}
`
	objs, err := DecodeObjects([]byte(stream))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, o := range objs {
		names = append(names, objectName(o))
	}
	if got := strings.Join(names, ", "); got != "Service podinfo/podinfo, Deployment podinfo/podinfo" {
		t.Errorf("objects = %s", got)
	}
}
