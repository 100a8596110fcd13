package observer

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/yaml"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/hooks"
	"kumodo.io/convoy/internal/observer/health"
)

// The target informers cache of each object only what the observer reads (decision 0124:
// the observer's memory per Release): the projection of each kind is exactly the
// expected small object, and health (kstatus) and a hook Job's phase are the same
// with the whole object and with its projection.
func TestProjectObjectKeepsOnlyWhatHealthReads(t *testing.T) {
	const labels = `"labels":{"convoy.kumodo.io/release-name":"web","convoy.kumodo.io/release-namespace":"team-a",
		"app.kubernetes.io/name":"web","helm.sh/chart":"web-1.0.0"}`
	const kept = `"labels":{"convoy.kumodo.io/release-name":"web","convoy.kumodo.io/release-namespace":"team-a"}`
	const meta = `"name":"web","namespace":"a","uid":"u1","resourceVersion":"7","creationTimestamp":"2026-12-04T00:00:00Z"`
	const noise = `"managedFields":[{"manager":"convoy","operation":"Apply"}],"ownerReferences":[{"kind":"X","name":"y"}],
		"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{}","meta.helm.sh/release-name":"web"}`
	for name, tc := range map[string]struct {
		object string
		want   string
	}{
		"a Deployment rolling out": {
			object: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{` + meta + `,"generation":2,` + labels + `,` + noise + `},
				"spec":{"replicas":3,"progressDeadlineSeconds":600,"revisionHistoryLimit":10,"selector":{"matchLabels":{"app":"web"}},
					"strategy":{"type":"RollingUpdate"},
					"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"web","image":"nginx"}]}}},
				"status":{"observedGeneration":2,"replicas":3,"updatedReplicas":1,"readyReplicas":1,"availableReplicas":1,
					"conditions":[{"type":"Progressing","status":"True","reason":"ReplicaSetUpdated"}]}}`,
			want: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{` + meta + `,"generation":2,` + kept + `},
				"spec":{"replicas":3,"progressDeadlineSeconds":600,"revisionHistoryLimit":10},
				"status":{"observedGeneration":2,"replicas":3,"updatedReplicas":1,"readyReplicas":1,"availableReplicas":1,
					"conditions":[{"type":"Progressing","status":"True","reason":"ReplicaSetUpdated"}]}}`,
		},
		"a StatefulSet with a partition": {
			object: `{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{` + meta + `,"generation":1},
				"spec":{"replicas":2,"serviceName":"db","updateStrategy":{"type":"RollingUpdate","rollingUpdate":{"partition":1}},
					"volumeClaimTemplates":[{"metadata":{"name":"data"}}],
					"template":{"spec":{"containers":[{"name":"db","image":"postgres"}]}}},
				"status":{"observedGeneration":1,"replicas":2,"readyReplicas":2,"currentReplicas":2,"updatedReplicas":1,
					"currentRevision":"db-1","updateRevision":"db-2"}}`,
			want: `{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{` + meta + `,"generation":1},
				"spec":{"replicas":2,"serviceName":"db","updateStrategy":{"type":"RollingUpdate","rollingUpdate":{"partition":1}}},
				"status":{"observedGeneration":1,"replicas":2,"readyReplicas":2,"currentReplicas":2,"updatedReplicas":1,
					"currentRevision":"db-1","updateRevision":"db-2"}}`,
		},
		"a DaemonSet being deleted": {
			object: `{"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{` + meta + `,"generation":4,"deletionTimestamp":"2026-12-04T01:00:00Z","finalizers":["x"]},
				"spec":{"selector":{"matchLabels":{"app":"agent"}},"template":{"spec":{"containers":[{"name":"a"}]}}},
				"status":{"observedGeneration":4,"desiredNumberScheduled":1,"currentNumberScheduled":1,"numberReady":1}}`,
			want: `{"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{` + meta + `,"generation":4,"deletionTimestamp":"2026-12-04T01:00:00Z"},
				"spec":{},
				"status":{"observedGeneration":4,"desiredNumberScheduled":1,"currentNumberScheduled":1,"numberReady":1}}`,
		},
		"a failed hook Job": {
			object: `{"apiVersion":"batch/v1","kind":"Job","metadata":{` + meta + `,"generation":1,` + labels + `},
				"spec":{"completions":1,"parallelism":1,"backoffLimit":2,"template":{"spec":{"containers":[{"name":"m","image":"busybox"}]}}},
				"status":{"failed":1,"startTime":"2026-12-04T00:00:01Z","conditions":[{"type":"Failed","status":"True","reason":"BackoffLimitExceeded"}]}}`,
			want: `{"apiVersion":"batch/v1","kind":"Job","metadata":{` + meta + `,"generation":1,` + kept + `},
				"spec":{"completions":1,"parallelism":1,"backoffLimit":2},
				"status":{"failed":1,"startTime":"2026-12-04T00:00:01Z","conditions":[{"type":"Failed","status":"True","reason":"BackoffLimitExceeded"}]}}`,
		},
		"a chart's hook Job: its run kept, the chart's annotations not": {
			object: `{"apiVersion":"batch/v1","kind":"Job","metadata":{` + meta + `,"generation":1,` + labels + `,
				"annotations":{"helm.sh/hook":"pre-upgrade","convoy.kumodo.io/hook-run":"Upgrade/PreApply/sha256:9"}},
				"spec":{"template":{"spec":{"containers":[{"name":"m"}]}}},"status":{"succeeded":1,"conditions":[{"type":"Complete","status":"True"}]}}`,
			want: `{"apiVersion":"batch/v1","kind":"Job","metadata":{` + meta + `,"generation":1,` + kept + `,
				"annotations":{"convoy.kumodo.io/hook-run":"Upgrade/PreApply/sha256:9"}},
				"spec":{},"status":{"succeeded":1,"conditions":[{"type":"Complete","status":"True"}]}}`,
		},
		"a running hook Job without a start time": {
			object: `{"apiVersion":"batch/v1","kind":"Job","metadata":{` + meta + `,"generation":1},
				"spec":{"template":{"spec":{"containers":[{"name":"m"}]}}},"status":{"active":1}}`,
			want: `{"apiVersion":"batch/v1","kind":"Job","metadata":{` + meta + `,"generation":1},"spec":{},"status":{"active":1}}`,
		},
		"a CronJob": {
			object: `{"apiVersion":"batch/v1","kind":"CronJob","metadata":{` + meta + `},
				"spec":{"schedule":"0 3 * * *","jobTemplate":{"spec":{"template":{"spec":{"containers":[{"name":"n"}]}}}}}}`,
			want: `{"apiVersion":"batch/v1","kind":"CronJob","metadata":{` + meta + `},"spec":{"schedule":"0 3 * * *"}}`,
		},
		"a ConfigMap": {
			object: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{` + meta + `,` + labels + `},"data":{"big":"xxxxxxxx"},"binaryData":{"b":"AAAA"}}`,
			want:   `{"apiVersion":"v1","kind":"ConfigMap","metadata":{` + meta + `,` + kept + `}}`,
		},
		"a Secret": {
			object: `{"apiVersion":"v1","kind":"Secret","metadata":{` + meta + `},"type":"Opaque","data":{"password":"cGFzcw=="}}`,
			want:   `{"apiVersion":"v1","kind":"Secret","metadata":{` + meta + `}}`,
		},
		"a LoadBalancer Service waiting for its address": {
			object: `{"apiVersion":"v1","kind":"Service","metadata":{` + meta + `,` + noise + `},
				"spec":{"type":"LoadBalancer","clusterIP":"10.0.0.1","clusterIPs":["10.0.0.1"],"ports":[{"port":80}],"selector":{"app":"web"}},
				"status":{"loadBalancer":{}}}`,
			want: `{"apiVersion":"v1","kind":"Service","metadata":{` + meta + `},
				"spec":{"type":"LoadBalancer","clusterIP":"10.0.0.1"},"status":{"loadBalancer":{}}}`,
		},
		"an Ingress": {
			object: `{"apiVersion":"networking.k8s.io/v1","kind":"Ingress","metadata":{` + meta + `,"generation":1},
				"spec":{"ingressClassName":"nginx","rules":[{"host":"web.example.com"}],"tls":[{"hosts":["web.example.com"]}]},"status":{"loadBalancer":{}}}`,
			want: `{"apiVersion":"networking.k8s.io/v1","kind":"Ingress","metadata":{` + meta + `,"generation":1},
				"spec":{"ingressClassName":"nginx"},"status":{"loadBalancer":{}}}`,
		},
		"an unscheduled Pod": {
			object: `{"apiVersion":"v1","kind":"Pod","metadata":{` + meta + `},"spec":{"nodeName":"","containers":[{"name":"c"}]},
				"status":{"phase":"Pending","conditions":[{"type":"PodScheduled","status":"False","reason":"Unschedulable"}]}}`,
			want: `{"apiVersion":"v1","kind":"Pod","metadata":{` + meta + `},"spec":{"nodeName":""},
				"status":{"phase":"Pending","conditions":[{"type":"PodScheduled","status":"False","reason":"Unschedulable"}]}}`,
		},
		"a CustomResourceDefinition": {
			object: `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"widgets.example.com","uid":"u2","generation":1},
				"spec":{"group":"example.com","scope":"Namespaced","names":{"kind":"Widget"},"versions":[{"name":"v1","schema":{"openAPIV3Schema":{"type":"object"}}}]},
				"status":{"conditions":[{"type":"Established","status":"True"},{"type":"NamesAccepted","status":"True"}]}}`,
			want: `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"widgets.example.com","uid":"u2","generation":1},
				"spec":{"group":"example.com","scope":"Namespaced"},
				"status":{"conditions":[{"type":"Established","status":"True"},{"type":"NamesAccepted","status":"True"}]}}`,
		},
		"a custom resource not Ready": {
			object: `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{` + meta + `,"generation":3},"spec":{"size":2,"parts":[{"a":1}]},
				"status":{"observedGeneration":3,"conditions":[{"type":"Ready","status":"False","reason":"Building","message":"Building."}]}}`,
			want: `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{` + meta + `,"generation":3},"spec":{"size":2},
				"status":{"observedGeneration":3,"conditions":[{"type":"Ready","status":"False","reason":"Building","message":"Building."}]}}`,
		},
		"a Role": {
			object: `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role","metadata":{` + meta + `,` + labels + `},
				"rules":[{"apiGroups":[""],"resources":["pods"],"verbs":["get","list","watch"]}]}`,
			want: `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role","metadata":{` + meta + `,` + kept + `}}`,
		},
	} {
		t.Run(name, func(t *testing.T) {
			full, want := decode(t, tc.object), decode(t, tc.want)
			before := health.ObjectStatus(full.DeepCopy())
			got, err := projectObject(full.DeepCopy())
			if err != nil {
				t.Fatal(err)
			}
			cached := got.(*unstructured.Unstructured)
			again, err := projectObject(cached.DeepCopy())
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(cached.Object, again.(*unstructured.Unstructured).Object); diff != "" {
				t.Errorf("a second projection (client-go may transform twice) changed it (-once +twice):\n%s", diff)
			}
			for k, v := range cached.Object {
				if k != "apiVersion" && k != "kind" && k != "metadata" && k != packedKey && k != releaseKey {
					t.Errorf("the cached object holds %s: %v; want it packed", k, v)
				}
			}
			projected, err := unpack(cached)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want.Object, projected.Object); diff != "" {
				t.Errorf("projection (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, health.ObjectStatus(projected)); diff != "" {
				t.Errorf("health changed by the projection (-whole +projected):\n%s", diff)
			}
			if full.GetKind() == "Job" {
				now := time.Date(2026, 12, 4, 0, 0, 30, 0, time.UTC) // within the minute of the running Job
				if diff := cmp.Diff(jobPhase(t, full, now), jobPhase(t, projected, now)); diff != "" {
					t.Errorf("hook phase changed by the projection (-whole +projected):\n%s", diff)
				}
			}
		})
	}
}

// An object the informer only knows was deleted passes as it is.
func TestProjectObjectPassesDeletedFinalStateUnknown(t *testing.T) {
	d := cache.DeletedFinalStateUnknown{Key: "a/web"}
	got, err := projectObject(d)
	if err != nil || got != any(d) {
		t.Errorf("projectObject(%v) = %v, %v; want it unchanged", d, got, err)
	}
}

// decode reads an object as an informer does: integers as int64.
func decode(t *testing.T, s string) *unstructured.Unstructured {
	t.Helper()
	j, err := yaml.YAMLToJSON([]byte(s))
	if err != nil {
		t.Fatalf("decode %s: %v", s, err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(j); err != nil {
		t.Fatalf("decode %s: %v", s, err)
	}
	return u
}

func jobPhase(t *testing.T, u *unstructured.Unstructured, now time.Time) hooks.JobState {
	t.Helper()
	job := &batchv1.Job{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, job); err != nil {
		t.Fatal(err)
	}
	return hooks.JobPhase(job, time.Minute, now)
}

// The Release of an object's events (onEvent) is read from releaseOf: in a cached
// object, from the one string that projectObject keeps for it (not a map of labels);
// in an object that was not projected, from the labels.
func TestReleaseOfReadsTheProjectedKeyOrTheLabels(t *testing.T) {
	const convoyLabels = `"labels":{"convoy.kumodo.io/release-name":"web","convoy.kumodo.io/release-namespace":"team-a","app":"web"}`
	web := types.NamespacedName{Namespace: "team-a", Name: "web"}
	longRelease := types.NamespacedName{Namespace: "team-a", Name: strings.Repeat("web", 30)}
	labelled := &unstructured.Unstructured{}
	labelled.SetAPIVersion("v1")
	labelled.SetKind("Service")
	labelled.SetName("web")
	labelled.SetNamespace("team-a")
	v1.SetReleaseLabels(labelled, longRelease.Name, longRelease.Namespace)
	longJSON, err := labelled.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	long := string(longJSON)
	for name, tc := range map[string]struct {
		object    string
		project   bool
		want      types.NamespacedName
		wantFound bool
	}{
		"projected, with convoy's labels": {
			object:  `{"apiVersion":"v1","kind":"Service","metadata":{"name":"web","namespace":"team-a",` + convoyLabels + `}}`,
			project: true, want: web, wantFound: true,
		},
		"projected, without them": {
			object:  `{"apiVersion":"v1","kind":"Service","metadata":{"name":"web","namespace":"team-a","labels":{"app":"web"}}}`,
			project: true,
		},
		"projected, naming no namespace": {
			object:  `{"apiVersion":"v1","kind":"Service","metadata":{"name":"web","namespace":"team-a","labels":{"convoy.kumodo.io/release-name":"web"}}}`,
			project: true,
		},
		"not projected": {
			object: `{"apiVersion":"v1","kind":"Service","metadata":{"name":"web","namespace":"team-a",` + convoyLabels + `}}`,
			want:   web, wantFound: true,
		},
		"projected, a long Release name (a digest in the label, the name in the annotation)": {
			object: long, project: true, want: longRelease, wantFound: true,
		},
		"not projected, a long Release name": {
			object: long, want: longRelease, wantFound: true,
		},
	} {
		t.Run(name, func(t *testing.T) {
			obj := decode(t, tc.object)
			if tc.project {
				projected, err := projectObject(obj)
				if err != nil {
					t.Fatal(err)
				}
				obj = projected.(*unstructured.Unstructured)
				if _, ok := obj.Object["metadata"].(map[string]any)["labels"]; ok {
					t.Errorf("the cached object keeps a map of labels in metadata: %v", obj.Object["metadata"])
				}
			}
			got, found := releaseOf(obj)
			if found != tc.wantFound || (found && got != tc.want) {
				t.Errorf("releaseOf = %v, %v; want %v, %v", got, found, tc.want, tc.wantFound)
			}
		})
	}
}
