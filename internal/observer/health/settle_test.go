package health

import (
	"testing"
	"time"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

func TestSettleWaitHoldsBackOnlyTheFirstProgressingDataOfARender(t *testing.T) {
	seen := time.Date(2026, 12, 5, 8, 0, 0, 0, time.UTC)
	st := func(ref string, h v1.HealthStatus, hooks ...v1.HookStatus) v1.ReleaseInventoryStatus {
		return v1.ReleaseInventoryStatus{RenderRef: ref, Health: h, Hooks: hooks}
	}
	for _, tc := range []struct {
		name         string
		stored, next v1.ReleaseInventoryStatus
		now          time.Time
		settle       time.Duration
		want         time.Duration
	}{
		{name: "first data of a render, progressing: the rest of the settle", stored: st("", ""), next: st("sha256:a", v1.HealthProgressing),
			now: seen.Add(500 * time.Millisecond), settle: 2 * time.Second, want: 1500 * time.Millisecond},
		{name: "first data of a new render after an older one", stored: st("sha256:a", v1.HealthHealthy), next: st("sha256:b", v1.HealthProgressing),
			now: seen, settle: 2 * time.Second, want: 2 * time.Second},
		{name: "the settle has passed", stored: st("", ""), next: st("sha256:a", v1.HealthProgressing),
			now: seen.Add(2 * time.Second), settle: 2 * time.Second, want: 0},
		{name: "long after", stored: st("", ""), next: st("sha256:a", v1.HealthProgressing),
			now: seen.Add(time.Hour), settle: 2 * time.Second, want: 0},
		{name: "healthy at once", stored: st("", ""), next: st("sha256:a", v1.HealthHealthy),
			now: seen, settle: 2 * time.Second, want: 0},
		{name: "degraded at once", stored: st("", ""), next: st("sha256:a", v1.HealthDegraded),
			now: seen, settle: 2 * time.Second, want: 0},
		{name: "missing", stored: st("", ""), next: st("sha256:a", v1.HealthMissing),
			now: seen, settle: 2 * time.Second, want: 0},
		{name: "the render is reported already: a later change of its health", stored: st("sha256:a", v1.HealthHealthy), next: st("sha256:a", v1.HealthProgressing),
			now: seen, settle: 2 * time.Second, want: 0},
		{name: "not a complete assessment (no render named)", stored: st("", ""), next: st("", v1.HealthProgressing),
			now: seen, settle: 2 * time.Second, want: 0},
		{name: "a hook runs", stored: st("", ""), next: st("sha256:a", v1.HealthProgressing, v1.HookStatus{Name: "migrate"}),
			now: seen, settle: 2 * time.Second, want: 0},
		{name: "no settle", stored: st("", ""), next: st("sha256:a", v1.HealthProgressing),
			now: seen, settle: 0, want: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := SettleWait(tc.stored, tc.next, seen, tc.now, tc.settle); got != tc.want {
				t.Errorf("SettleWait = %v, want %v", got, tc.want)
			}
		})
	}
}
