package controller

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/hooks"
)

// A status.hooks entry records a hook's run by its render, run and phase (a chart
// hook's Job has one name in every run); an entry of an older convoy, without them,
// by its Job's name, then new for every render and phase.
func TestRecords(t *testing.T) {
	const a, b = "sha256:aaaaaaaaaaaa", "sha256:bbbbbbbbbbbb"
	migrate := hooks.Hook{Name: "web-migrate", Phase: v1.HookPreApply, Job: "web-migrate"}
	entry := func(phase v1.HookPhase, run v1.HookRun, ref string) v1.HookStatus {
		return v1.HookStatus{Name: "web-migrate", Job: "web-migrate", HookPhase: phase, Run: run, RenderRef: ref}
	}
	cases := map[string]struct {
		status v1.HookStatus
		want   bool
	}{
		"this run":                         {status: entry(v1.HookPreApply, v1.HookRunUpgrade, b), want: true},
		"the previous render's run":        {status: entry(v1.HookPreApply, v1.HookRunUpgrade, a)},
		"the install of the same render":   {status: entry(v1.HookPreApply, v1.HookRunInstall, b)},
		"the other phase":                  {status: entry(v1.HookPostApply, v1.HookRunUpgrade, b)},
		"another hook":                     {status: v1.HookStatus{Name: "web-seed", Job: "web-seed", HookPhase: v1.HookPreApply, Run: v1.HookRunUpgrade, RenderRef: b}},
		"an older convoy's, by its name":   {status: v1.HookStatus{Name: "web-migrate", Job: "web-migrate"}, want: true},
		"an older convoy's, of other name": {status: v1.HookStatus{Name: "web-migrate", Job: "web-web-migrate-bbbbbbbbbb"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := records(tc.status, migrate, b, v1.HookRunUpgrade); got != tc.want {
				t.Errorf("records() = %v, want %v", got, tc.want)
			}
		})
	}
}

// The render that status.hooks belongs to is its renderRef; for an entry of an older
// convoy, the render its Job's name was made for.
func TestRecordsRender(t *testing.T) {
	const a, b = "sha256:aaaaaaaaaaaa", "sha256:bbbbbbbbbbbb"
	rel := &v1.Release{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team-a"}}
	cases := map[string]struct {
		status v1.HookStatus
		ref    string
		want   bool
	}{
		"its render":                            {status: v1.HookStatus{Name: "web-migrate", Job: "web-migrate", RenderRef: b}, ref: b, want: true},
		"another render, the same Job name":     {status: v1.HookStatus{Name: "web-migrate", Job: "web-migrate", RenderRef: a}, ref: b},
		"an older convoy's lifecycle Job":       {status: v1.HookStatus{Name: "migrate", Job: hooks.JobName("web", "migrate", b)}, ref: b, want: true},
		"an older convoy's Job of another":      {status: v1.HookStatus{Name: "migrate", Job: hooks.JobName("web", "migrate", a)}, ref: b},
		"an older convoy's PostApply run's Job": {status: v1.HookStatus{Name: "notify", Job: hooks.JobName("web", "notify-post", b)}, ref: b, want: true},
		"an older convoy's entry, a chart name": {status: v1.HookStatus{Name: "web-migrate", Job: "web-migrate"}, ref: b},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := recordsRender(rel, tc.status, tc.ref); got != tc.want {
				t.Errorf("recordsRender() = %v, want %v", got, tc.want)
			}
		})
	}
}
