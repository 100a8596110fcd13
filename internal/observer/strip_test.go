package observer

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"kumodo.io/convoy/internal/observer/health"
)

// The target informers keep of each object only what health reads: the pod template
// of a workload, a CronJob's job template and the content of a ConfigMap or Secret are
// dropped, and the health of each object is the same with or without them (issue 15:
// the observer's memory per Release).
func TestStripObjectKeepsWhatHealthReads(t *testing.T) {
	for name, tc := range map[string]struct {
		object  string
		dropped []string // paths gone after the strip
		kept    []string // paths still there
	}{
		"a Deployment rolling out": {
			object: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"a","generation":2,
				"managedFields":[{"manager":"convoy"}]},
				"spec":{"replicas":3,"progressDeadlineSeconds":600,"selector":{"matchLabels":{"app":"web"}},
					"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"web","image":"nginx"}]}}},
				"status":{"observedGeneration":2,"replicas":3,"updatedReplicas":1,"readyReplicas":1,"availableReplicas":1,
					"conditions":[{"type":"Progressing","status":"True","reason":"ReplicaSetUpdated"}]}}`,
			dropped: []string{"spec.template", "metadata.managedFields"},
			kept:    []string{"spec.replicas", "spec.progressDeadlineSeconds", "status.conditions"},
		},
		"a StatefulSet with a partition": {
			object: `{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"db","namespace":"a","generation":1},
				"spec":{"replicas":2,"updateStrategy":{"type":"RollingUpdate","rollingUpdate":{"partition":1}},
					"template":{"spec":{"containers":[{"name":"db","image":"postgres"}]}}},
				"status":{"observedGeneration":1,"replicas":2,"readyReplicas":2,"currentReplicas":2,"updatedReplicas":1,
					"currentRevision":"db-1","updateRevision":"db-2"}}`,
			dropped: []string{"spec.template"},
			kept:    []string{"spec.updateStrategy"},
		},
		"a failed Job": {
			object: `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"migrate","namespace":"a","generation":1},
				"spec":{"completions":1,"parallelism":1,"template":{"spec":{"containers":[{"name":"m","image":"busybox"}]}}},
				"status":{"failed":1,"conditions":[{"type":"Failed","status":"True","reason":"BackoffLimitExceeded"}]}}`,
			dropped: []string{"spec.template"},
			kept:    []string{"spec.completions", "status.conditions"},
		},
		"a CronJob": {
			object: `{"apiVersion":"batch/v1","kind":"CronJob","metadata":{"name":"nightly","namespace":"a"},
				"spec":{"schedule":"0 3 * * *","jobTemplate":{"spec":{"template":{"spec":{"containers":[{"name":"n","image":"busybox"}]}}}}}}`,
			dropped: []string{"spec.jobTemplate"},
			kept:    []string{"spec.schedule"},
		},
		"a ConfigMap": {
			object:  `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"a"},"data":{"big":"xxxxxxxx"},"binaryData":{"b":"AAAA"}}`,
			dropped: []string{"data", "binaryData"},
			kept:    []string{"metadata.name"},
		},
		"a Secret": {
			object:  `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s","namespace":"a"},"type":"Opaque","data":{"password":"cGFzcw=="}}`,
			dropped: []string{"data"},
			kept:    []string{"type"},
		},
		"a Service being deleted": {
			object: `{"apiVersion":"v1","kind":"Service","metadata":{"name":"web","namespace":"a","deletionTimestamp":"2026-12-04T00:00:00Z",
				"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{}","keep":"me"}},
				"spec":{"type":"LoadBalancer","ports":[{"port":80}]}}`,
			dropped: []string{"metadata.annotations.kubectl\\.kubernetes\\.io/last-applied-configuration"},
			kept:    []string{"spec.type", "spec.ports", "metadata.annotations.keep"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			full := &unstructured.Unstructured{}
			if err := yaml.Unmarshal([]byte(tc.object), &full.Object); err != nil {
				t.Fatal(err)
			}
			before := health.ObjectStatus(full.DeepCopy())
			got, err := stripObject(full)
			if err != nil {
				t.Fatal(err)
			}
			stripped := got.(*unstructured.Unstructured)
			if diff := cmp.Diff(before, health.ObjectStatus(stripped)); diff != "" {
				t.Errorf("health changed by the strip (-before +after):\n%s", diff)
			}
			for _, p := range tc.dropped {
				if _, found, _ := unstructured.NestedFieldNoCopy(stripped.Object, fieldPath(p)...); found {
					t.Errorf("%s is still cached", p)
				}
			}
			for _, p := range tc.kept {
				if _, found, _ := unstructured.NestedFieldNoCopy(stripped.Object, fieldPath(p)...); !found {
					t.Errorf("%s was dropped", p)
				}
			}
		})
	}
}

// fieldPath splits a dotted path; "\." is a dot inside a key.
func fieldPath(p string) []string {
	var out []string
	cur := ""
	for i := 0; i < len(p); i++ {
		switch {
		case p[i] == '\\' && i+1 < len(p) && p[i+1] == '.':
			cur += "."
			i++
		case p[i] == '.':
			out = append(out, cur)
			cur = ""
		default:
			cur += string(p[i])
		}
	}
	return append(out, cur)
}
