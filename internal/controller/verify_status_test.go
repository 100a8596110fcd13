package controller

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/render"
)

// status.render.verified keeps the time of the first verification of the same render
// by the same key (a steady Release, or a restarted controller that verifies again,
// writes nothing), and takes a new one for another render or another key.
func TestRenderVerifiedTime(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	later := t0.Add(time.Hour)
	verified := func(identity string, at time.Time) *v1.VerifiedStatus {
		return &v1.VerifiedStatus{Provider: "helm", Identity: identity, Time: timestamp(at)}
	}
	a := &render.Result{Ref: "sha256:a", ChartVersion: "1.0.0"}
	first := renderStatus(nil, a, verified("KEY1", t0), t0)
	for _, tc := range []struct {
		name     string
		old      *v1.RenderStatus
		res      *render.Result
		verified *v1.VerifiedStatus
		want     *v1.VerifiedStatus
	}{
		{name: "the same render verified again", old: first, res: a, verified: verified("KEY1", later), want: verified("KEY1", t0)},
		{name: "another key", old: first, res: a, verified: verified("KEY2", later), want: verified("KEY2", later)},
		{name: "another render", old: first, res: &render.Result{Ref: "sha256:b"}, verified: verified("KEY1", later), want: verified("KEY1", later)},
		{name: "not verified any more", old: first, res: a},
		{name: "verified for the first time", old: renderStatus(nil, a, nil, t0), res: a, verified: verified("KEY1", later), want: verified("KEY1", later)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := renderStatus(tc.old, tc.res, tc.verified, later)
			if diff := cmp.Diff(tc.want, got.Verified); diff != "" {
				t.Errorf("verified (-want +got):\n%s", diff)
			}
		})
	}
}
