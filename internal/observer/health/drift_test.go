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
// is unset or 0. Decision 0216: a check is of status.lastSuccessful's render, at once
// when the last one was of another render, and none while an apply is under way.
func TestSP36_DriftCheckEveryInterval(t *testing.T) {
	five := &metav1.Duration{Duration: 5 * time.Minute}
	a, b := "sha256:aaaa", "sha256:bbbb"
	steady := func(lastCheck time.Time) DriftCheckInput {
		return DriftCheckInput{Interval: five, LastSuccessful: a, Applied: a, Checked: a, LastCheck: lastCheck, Now: t0}
	}
	with := func(in DriftCheckInput, change func(*DriftCheckInput)) DriftCheckInput {
		change(&in)
		return in
	}
	cases := map[string]struct {
		in   DriftCheckInput
		want DriftCheck
	}{
		"interval unset: no drift checks": {
			in: with(steady(t0), func(in *DriftCheckInput) { in.Interval = nil }), want: DriftCheck{Off: true},
		},
		"interval 0: no drift checks": {
			in: with(steady(t0), func(in *DriftCheckInput) { in.Interval = &metav1.Duration{} }), want: DriftCheck{Off: true},
		},
		"no check since the observer started: now": {
			in: with(steady(time.Time{}), func(in *DriftCheckInput) { in.Checked = "" }), want: DriftCheck{},
		},
		"checked 2m ago: in 3m":                 {in: steady(t0.Add(-2 * time.Minute)), want: DriftCheck{After: 3 * time.Minute}},
		"checked exactly one interval ago: now": {in: steady(t0.Add(-5 * time.Minute)), want: DriftCheck{}},
		"overdue: now":                          {in: steady(t0.Add(-time.Hour)), want: DriftCheck{}},
		"checked 2m ago, another render applied since: now": {
			in:   with(steady(t0.Add(-2*time.Minute)), func(in *DriftCheckInput) { in.LastSuccessful, in.Applied = b, b }),
			want: DriftCheck{},
		},
		"the apply of another render under way: held": {
			in:   with(steady(t0.Add(-time.Hour)), func(in *DriftCheckInput) { in.Applied = b }),
			want: DriftCheck{Held: true},
		},
		"the apply of another render under way, no check since the observer started: held": {
			in:   with(steady(time.Time{}), func(in *DriftCheckInput) { in.Applied, in.Checked = b, "" }),
			want: DriftCheck{Held: true},
		},
		"the apply of the last successful render holds at a sync wave: held": {
			in:   with(steady(t0.Add(-time.Hour)), func(in *DriftCheckInput) { in.Holding = true }),
			want: DriftCheck{Held: true},
		},
		"the inventory's render not known: as lastSuccessful's": {
			in:   with(steady(t0.Add(-2*time.Minute)), func(in *DriftCheckInput) { in.Applied = "" }),
			want: DriftCheck{After: 3 * time.Minute},
		},
		"interval unset while an apply is under way: no drift checks": {
			in:   with(steady(t0), func(in *DriftCheckInput) { in.Interval, in.Applied = nil, b }),
			want: DriftCheck{Off: true},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, NextDriftCheck(tc.in)); diff != "" {
				t.Errorf("NextDriftCheck (-want +got):\n%s", diff)
			}
		})
	}
}
