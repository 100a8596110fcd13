package health

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

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
