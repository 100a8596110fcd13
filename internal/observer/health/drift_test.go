package health

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// liveDeployment is a Deployment as the API server returns it; edit changes a copy.
func liveDeployment(edit ...func(o map[string]any)) map[string]any {
	o := map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{
			"name": "web", "namespace": "podinfo", "uid": "u-1", "resourceVersion": "41",
			"generation": int64(3), "creationTimestamp": "2026-12-01T00:00:00Z",
			"labels":        map[string]any{"app.kubernetes.io/name": "web", "team": "a"},
			"annotations":   map[string]any{"deployment.kubernetes.io/revision": "3"},
			"managedFields": []any{map[string]any{"manager": "convoy", "operation": "Apply"}},
		},
		"spec": map[string]any{
			"replicas": int64(2),
			"template": map[string]any{"spec": map[string]any{"containers": []any{
				map[string]any{"name": "web", "image": "podinfo:6.5.0"},
			}}},
		},
		"status": map[string]any{"replicas": int64(2)},
	}
	for _, e := range edit {
		e(o)
	}
	return o
}

func metadataOf(o map[string]any) map[string]any { return o["metadata"].(map[string]any) }
func specOf(o map[string]any) map[string]any     { return o["spec"].(map[string]any) }
func container(o map[string]any) map[string]any {
	return specOf(o)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
}

// SP-36 (drift part): the drift check compares the live objects with what a server-side
// apply dry run of the render would make of them.
func TestDriftedFields(t *testing.T) {
	cases := map[string]struct {
		live, dryRun map[string]any
		want         []string
	}{
		"in sync: the dry run changes nothing": {
			live: liveDeployment(), dryRun: liveDeployment(),
		},
		"replicas edited by hand": {
			live:   liveDeployment(func(o map[string]any) { specOf(o)["replicas"] = int64(5) }),
			dryRun: liveDeployment(),
			want:   []string{"spec.replicas"},
		},
		"image edited by hand, and the metadata the server maintains moves": {
			live: liveDeployment(func(o map[string]any) { container(o)["image"] = "podinfo:latest" }),
			dryRun: liveDeployment(func(o map[string]any) {
				md := metadataOf(o)
				md["generation"], md["resourceVersion"] = int64(4), "42"
				md["managedFields"] = []any{map[string]any{"manager": "convoy", "operation": "Apply", "time": "x"}}
				o["status"] = map[string]any{"replicas": int64(1)}
			}),
			want: []string{"spec.template.spec.containers[0].image"},
		},
		"labels and fields added by others stay in the dry run: no drift": {
			live: liveDeployment(func(o map[string]any) {
				metadataOf(o)["labels"].(map[string]any)["added-by"] = "someone"
				specOf(o)["paused"] = true
			}),
			dryRun: liveDeployment(func(o map[string]any) {
				metadataOf(o)["labels"].(map[string]any)["added-by"] = "someone"
				specOf(o)["paused"] = true
			}),
		},
		"a label convoy sets, removed by hand; a field convoy owns, added by hand": {
			live: liveDeployment(func(o map[string]any) {
				delete(metadataOf(o)["labels"].(map[string]any), "app.kubernetes.io/name")
				container(o)["command"] = []any{"sleep"}
			}),
			dryRun: liveDeployment(),
			want:   []string{"metadata.labels[app.kubernetes.io/name]", "spec.template.spec.containers[0].command"},
		},
		"a container added by hand: the list is reported": {
			live: liveDeployment(func(o map[string]any) {
				c := specOf(o)["template"].(map[string]any)["spec"].(map[string]any)
				c["containers"] = append(c["containers"].([]any), map[string]any{"name": "debug"})
			}),
			dryRun: liveDeployment(),
			want:   []string{"spec.template.spec.containers"},
		},
		"numbers compare by value": {
			live:   liveDeployment(func(o map[string]any) { specOf(o)["replicas"] = float64(2) }),
			dryRun: liveDeployment(),
		},
		"no live object: Missing, not drift": {
			dryRun: liveDeployment(),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var live = u(tc.live)
			if tc.live == nil {
				live = nil
			}
			if diff := cmp.Diff(tc.want, DriftedFields(live, u(tc.dryRun))); diff != "" {
				t.Errorf("DriftedFields (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDriftSince(t *testing.T) {
	web, svc := ref("Deployment", "web"), ref("Service", "web")
	drifted := func(r v1.ObjectReference, fields ...string) v1.DriftedObject {
		return v1.DriftedObject{ObjectReference: r, Fields: fields}
	}
	now := t0.Add(time.Hour)
	cases := map[string]struct {
		stored *v1.DriftStatus
		found  []v1.DriftedObject
		want   *v1.DriftStatus
	}{
		"first check, no drift": {
			want: &v1.DriftStatus{Since: at(time.Hour)},
		},
		"still no drift: since kept": {
			stored: &v1.DriftStatus{Since: at(0)},
			found:  []v1.DriftedObject{drifted(web)},
			want:   &v1.DriftStatus{Since: at(0)},
		},
		"drift appears: since now, objects and fields sorted": {
			stored: &v1.DriftStatus{Since: at(0)},
			found:  []v1.DriftedObject{drifted(svc, "spec.type"), drifted(web, "spec.replicas", "metadata.labels[a]", "spec.replicas")},
			want: &v1.DriftStatus{Since: at(time.Hour), Drifted: []v1.DriftedObject{
				drifted(svc, "spec.type"), drifted(web, "metadata.labels[a]", "spec.replicas"),
			}},
		},
		"the same drift again: since kept": {
			stored: &v1.DriftStatus{Since: at(0), Drifted: []v1.DriftedObject{drifted(web, "spec.replicas")}},
			found:  []v1.DriftedObject{drifted(web, "spec.replicas")},
			want:   &v1.DriftStatus{Since: at(0), Drifted: []v1.DriftedObject{drifted(web, "spec.replicas")}},
		},
		"other drift: since now": {
			stored: &v1.DriftStatus{Since: at(0), Drifted: []v1.DriftedObject{drifted(web, "spec.replicas")}},
			found:  []v1.DriftedObject{drifted(web, "spec.replicas", "spec.paused")},
			want:   &v1.DriftStatus{Since: at(time.Hour), Drifted: []v1.DriftedObject{drifted(web, "spec.paused", "spec.replicas")}},
		},
		"drift corrected: since now": {
			stored: &v1.DriftStatus{Since: at(0), Drifted: []v1.DriftedObject{drifted(web, "spec.replicas")}},
			want:   &v1.DriftStatus{Since: at(time.Hour)},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Drift(tc.stored, tc.found, now)); diff != "" {
				t.Errorf("Drift (-want +got):\n%s", diff)
			}
		})
	}
}

// SP-36: the observer's drift checks use spec.syncPolicy.interval; SP-37: none when it
// is unset or 0.
func TestSP36_DriftCheckEveryInterval(t *testing.T) {
	five := &metav1.Duration{Duration: 5 * time.Minute}
	type result struct {
		After time.Duration
		OK    bool
	}
	cases := map[string]struct {
		interval  *metav1.Duration
		lastCheck time.Time
		want      result
	}{
		"interval unset: no drift checks":          {interval: nil, want: result{}},
		"interval 0: no drift checks":              {interval: &metav1.Duration{}, lastCheck: t0, want: result{}},
		"no check since the observer started: now": {interval: five, want: result{OK: true}},
		"checked 2m ago: in 3m":                    {interval: five, lastCheck: t0.Add(-2 * time.Minute), want: result{After: 3 * time.Minute, OK: true}},
		"checked exactly one interval ago: now":    {interval: five, lastCheck: t0.Add(-5 * time.Minute), want: result{OK: true}},
		"overdue: now":                             {interval: five, lastCheck: t0.Add(-time.Hour), want: result{OK: true}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			after, ok := NextDriftCheck(tc.interval, tc.lastCheck, t0)
			if diff := cmp.Diff(tc.want, result{After: after, OK: ok}); diff != "" {
				t.Errorf("NextDriftCheck (-want +got):\n%s", diff)
			}
		})
	}
}
