package hooks

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	helmrelease "helm.sh/helm/v4/pkg/release/v1"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

func TestJobName(t *testing.T) {
	ref := "sha256:9a2b0c1d2e3f405162738495a6b7c8d9e0f1a2b3c4d5e6f708192a3b4c5d6e7f"
	long := strings.Repeat("a", 40)
	cases := map[string]struct {
		release, hook, want string
	}{
		"the design's form":      {release: "podinfo", hook: "migrate", want: "podinfo-migrate-9a2b0c1d2e"},
		"lowercase, a DNS label": {release: "web.v2", hook: "Seed_DB", want: "web-v2-seed-db-9a2b0c1d2e"},
		"too long: cut, with a hash of the whole": {
			release: long, hook: long,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := JobName(tc.release, tc.hook, ref)
			if name == "too long: cut, with a hash of the whole" {
				// The hash is checked for length and distinctness, not its digits.
				if len(got) != 63 || !strings.HasPrefix(got, (long + "-" + long)[:43]+"-") || !strings.HasSuffix(got, "-9a2b0c1d2e") {
					t.Errorf("JobName() = %q (%d characters)", got, len(got))
				}
				if other := JobName(tc.release, tc.hook+"b", ref); other == got {
					t.Errorf("two long hook names give the same Job name %q", got)
				}
				return
			}
			if got != tc.want {
				t.Errorf("JobName() = %q, want %q", got, tc.want)
			}
		})
	}
}

// A chart's hook Job keeps the chart's name whenever the API server takes it for a
// Job; any other name becomes a valid one, the same at every call, distinct for
// distinct names.
func TestChartJobName(t *testing.T) {
	long63 := strings.Repeat("m", 63)
	cases := map[string]struct {
		name string
		want string // empty: not kept; checked for validity, prefix and stability
		// prefix is what a name that is not kept starts with.
		prefix string
	}{
		"the chart's name":                    {name: "web-migrate", want: "web-migrate"},
		"dots, a DNS subdomain":               {name: "web.v2-migrate", want: "web.v2-migrate"},
		"63 characters, the longest":          {name: long63, want: long63},
		"64 characters: no pod label":         {name: long63 + "m", prefix: strings.Repeat("m", 54) + "-"},
		"a colon":                             {name: "web:create-cert", prefix: "web-create-cert-"},
		"uppercase":                           {name: "Web-Migrate", prefix: "web-migrate-"},
		"trailing dash":                       {name: "migrate-", prefix: "migrate-"},
		"nothing readable":                    {name: "::", prefix: "hook-"},
		"long with dots: cut, trimmed of '-'": {name: strings.Repeat("a", 53) + ".b" + strings.Repeat("c", 20), prefix: strings.Repeat("a", 53) + "-"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := ChartJobName(tc.name)
			if errs := append(validation.IsDNS1123Subdomain(got), validation.IsValidLabelValue(got)...); len(errs) > 0 {
				t.Errorf("ChartJobName(%q) = %q: not a valid Job name: %v", tc.name, got, errs)
			}
			if tc.want != "" {
				if got != tc.want {
					t.Errorf("ChartJobName(%q) = %q, want the chart's name", tc.name, got)
				}
				return
			}
			if !strings.HasPrefix(got, tc.prefix) || len(got) != len(tc.prefix)+8 {
				t.Errorf("ChartJobName(%q) = %q, want %q and 8 hex digits", tc.name, got, tc.prefix)
			}
			if again := ChartJobName(tc.name); again != got {
				t.Errorf("ChartJobName(%q) = %q, then %q", tc.name, got, again)
			}
			if other := ChartJobName(tc.name + "x"); other == got {
				t.Errorf("two names give the same Job name %q", got)
			}
		})
	}
}

// ForRun names a chart's hook Job with the chart's name in both phases and for every
// render, and tells the runs apart by the hook-run annotation; lifecycle hooks keep
// their per-render names.
func TestForRunJobNamesAndRuns(t *testing.T) {
	owner := Owner{Name: "web", Namespace: "team-a", TargetNamespace: "apps"}
	both := chartHook("batch/v1", "Job", "web-migrate", owner)
	both.Events = []helmrelease.HookEvent{PreInstall, PostInstall}
	lifecycle := []v1.Hook{{Name: "backup", Phase: v1.HookPreApply, Job: &batchv1.JobSpec{}}}
	type job struct{ Name, Job, Run string }
	var got [2][]job
	for i, ref := range []string{"sha256:1111111111aa", "sha256:2222222222bb"} {
		hs, err := ForRun(owner, ref, RunInstall, lifecycle, []Chart{both})
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range hs {
			if h.Object.GetName() != h.Job {
				t.Errorf("hook %s: Job object named %q, want %q", h.Name, h.Object.GetName(), h.Job)
			}
			got[i] = append(got[i], job{h.Name + "/" + string(h.Phase), h.Job, h.Object.GetAnnotations()[v1.AnnotationHookRun]})
		}
	}
	want := [2][]job{{
		{"backup/PreApply", "web-backup-1111111111", "Install/PreApply/sha256:1111111111aa"},
		{"web-migrate/PreApply", "web-migrate", "Install/PreApply/sha256:1111111111aa"},
		{"web-migrate/PostApply", "web-migrate", "Install/PostApply/sha256:1111111111aa"},
	}, {
		{"backup/PreApply", "web-backup-2222222222", "Install/PreApply/sha256:2222222222bb"},
		{"web-migrate/PreApply", "web-migrate", "Install/PreApply/sha256:2222222222bb"},
		{"web-migrate/PostApply", "web-migrate", "Install/PostApply/sha256:2222222222bb"},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("hook Jobs (-want +got):\n%s", diff)
	}
}

// Two chart hook Jobs of one name in two namespaces would be one Job in the target
// namespace: an error naming both, not one Job for two hooks.
func TestForRunRefusesTwoHooksOfOneJobName(t *testing.T) {
	owner := Owner{Name: "web", Namespace: "team-a", TargetNamespace: "apps"}
	a := chartHook("batch/v1", "Job", "migrate", owner)
	b := chartHook("batch/v1", "Job", "migrate", Owner{Name: "web", Namespace: "team-a", TargetNamespace: "other"})
	_, err := ForRun(owner, "sha256:1111111111aa", RunInstall, nil, []Chart{a, b})
	if err == nil || !strings.Contains(err.Error(), "Job apps/migrate") || !strings.Contains(err.Error(), "Job other/migrate") {
		t.Errorf("ForRun() error = %v, want one naming both hooks", err)
	}
}
