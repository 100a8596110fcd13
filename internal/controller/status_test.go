package controller

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/policy"
	"kumodo.io/convoy/internal/render"
)

// reconcileStatus runs the pure part of a reconcile: Decide, an attempt, Finish and
// newStatus, at now, for a Release whose current render is ref.
func reconcileStatus(rel *v1.Release, ref string, now time.Time, attempt policy.Result) v1.ReleaseStatus {
	st := &state{rel: rel, now: now}
	res := &render.Result{Ref: ref, ChartVersion: "1.0.0", ValuesDigest: "sha256:v"}
	st.render = res
	st.renderStatus = renderStatus(rel.Status.Render, res, nil, now)
	in := policy.Input{Now: now, Policy: syncPolicy(rel.Spec.SyncPolicy), Requests: requests(rel), CurrentRender: ref}
	if ls := rel.Status.LastSuccessful; ls != nil {
		in.LastSuccessfulRender = ls.RenderRef
	}
	plan := policy.Decide(in)
	if plan.Apply == nil {
		attempt = policy.Result{}
	}
	return newStatus(rel, st, applied{result: attempt, chart: v1.RenderChart{Version: "1.0.0"}}, policy.Finish(in, plan, attempt))
}

// A steady Release gives back the status it has, so the controller writes nothing.
func TestSteadyReleaseStatusUnchanged(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 12, 2, 10, 0, 0, 500, time.UTC))
	for name, rel := range map[string]*v1.Release{
		"automatic": testRelease("podinfo", automatic(), interval(time.Minute)),
		"manual":    testRelease("podinfo"),
		"manual after a /sync": testRelease("podinfo",
			annotation(v1.AnnotationSyncRequestedAt, "2026-12-02T09:00:00Z")),
	} {
		t.Run(name, func(t *testing.T) {
			first := reconcileStatus(rel, "sha256:aaa", clk.Now(), policy.Succeeded())
			rel = with(rel, statusOnly(func(s *v1.ReleaseStatus) { *s = first }))
			for i := range 3 {
				clk.Step(time.Minute)
				got := reconcileStatus(rel, "sha256:aaa", clk.Now(), policy.Succeeded())
				if !equality.Semantic.DeepEqual(rel.Status, got) {
					t.Fatalf("reconcile %d changed a steady status:\n%s", i+2, cmp.Diff(rel.Status, got))
				}
			}
		})
	}
}

func TestRenderedAtOnlyWhenTheRefFirstAppears(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	first := renderStatus(nil, &render.Result{Ref: "sha256:a", ChartVersion: "1.0.0"}, nil, t0)
	again := renderStatus(first, &render.Result{Ref: "sha256:a", ChartVersion: "1.0.0"}, nil, t0.Add(time.Hour))
	next := renderStatus(again, &render.Result{Ref: "sha256:b", ChartVersion: "1.1.0"}, nil, t0.Add(2*time.Hour))
	got := []time.Time{first.RenderedAt.Time, again.RenderedAt.Time, next.RenderedAt.Time}
	want := []time.Time{t0, t0, t0.Add(2 * time.Hour)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("renderedAt (-want +got):\n%s", diff)
	}
}

func TestNewStatusFields(t *testing.T) {
	now := time.Date(2026, 12, 2, 10, 0, 7, 900, time.UTC)
	syncAt := "2026-12-02T10:00:05Z"
	forceAt := "2026-12-02T10:00:06Z"

	t.Run("SP-10 manual: a successful apply of a pending /sync writes lastHandledSyncAt = the annotation", func(t *testing.T) {
		rel := testRelease("podinfo", generation(4), annotation(v1.AnnotationSyncRequestedAt, syncAt))
		got := reconcileStatus(rel, "sha256:a", now, policy.Succeeded())
		want := metav1.NewTime(time.Date(2026, 12, 2, 10, 0, 5, 0, time.UTC))
		if got.LastHandledSyncAt == nil || !got.LastHandledSyncAt.Equal(&want) {
			t.Errorf("lastHandledSyncAt = %v, want %v", got.LastHandledSyncAt, want)
		}
		if got.ObservedGeneration != 4 {
			t.Errorf("observedGeneration = %d, want 4", got.ObservedGeneration)
		}
		if got.LastSuccessful == nil || got.LastSuccessful.RenderRef != "sha256:a" ||
			!got.LastSuccessful.AppliedAt.Equal(timestamp(now)) {
			t.Errorf("lastSuccessful = %+v", got.LastSuccessful)
		}
	})
	t.Run("SP-11 a failed apply leaves lastHandledSyncAt unset", func(t *testing.T) {
		rel := testRelease("podinfo", annotation(v1.AnnotationSyncRequestedAt, syncAt))
		got := reconcileStatus(rel, "sha256:a", now, policy.Stopped(v1.ReasonDeployFailed, "no"))
		if got.LastHandledSyncAt != nil || got.LastSuccessful != nil {
			t.Errorf("lastHandledSyncAt = %v, lastSuccessful = %v; want both unset", got.LastHandledSyncAt, got.LastSuccessful)
		}
	})
	t.Run("SP-22 a failed forced reconcile writes lastHandledForceSyncAt", func(t *testing.T) {
		rel := testRelease("podinfo", automatic(),
			annotation(v1.AnnotationSyncRequestedAt, forceAt), annotation(v1.AnnotationSyncForceRequestedAt, forceAt))
		got := reconcileStatus(rel, "sha256:a", now, policy.Stopped(v1.ReasonDeployFailed, "no"))
		want := metav1.NewTime(time.Date(2026, 12, 2, 10, 0, 6, 0, time.UTC))
		if got.LastHandledForceSyncAt == nil || !got.LastHandledForceSyncAt.Equal(&want) {
			t.Errorf("lastHandledForceSyncAt = %v, want %v", got.LastHandledForceSyncAt, want)
		}
	})
	t.Run("lastSuccessful keeps appliedAt when the same render is applied again", func(t *testing.T) {
		earlier := metav1.NewTime(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
		rel := testRelease("podinfo", automatic(), statusOnly(func(s *v1.ReleaseStatus) {
			s.LastSuccessful = &v1.LastSuccessful{RenderRef: "sha256:a", ChartVersion: "1.0.0", AppliedAt: &earlier}
		}))
		got := reconcileStatus(rel, "sha256:a", now, policy.Succeeded())
		if !got.LastSuccessful.AppliedAt.Equal(&earlier) {
			t.Errorf("appliedAt = %v, want %v", got.LastSuccessful.AppliedAt, earlier)
		}
	})
	t.Run("conditions keep lastTransitionTime while their status stays", func(t *testing.T) {
		rel := testRelease("podinfo", automatic())
		first := reconcileStatus(rel, "sha256:a", now, policy.Stopped(v1.ReasonDeployFailed, "one"))
		rel = with(rel, statusOnly(func(s *v1.ReleaseStatus) { *s = first }))
		second := reconcileStatus(rel, "sha256:a", now.Add(time.Hour), policy.Stopped(v1.ReasonSourceNotReady, "two"))
		a1, a2 := first.Conditions[0], second.Conditions[0]
		if a2.Reason != v1.ReasonSourceNotReady || !a1.LastTransitionTime.Equal(&a2.LastTransitionTime) {
			t.Errorf("Applied went from %+v to %+v; want a new reason and the same lastTransitionTime", a1, a2)
		}
	})
}

func TestSyncPolicyInput(t *testing.T) {
	rel := testRelease("podinfo", automatic(), interval(5*time.Minute), func(r *v1.Release) {
		r.Spec.SyncPolicy.RetryBackoff = &v1.RetryBackoff{
			Initial: &metav1.Duration{Duration: 10 * time.Second},
			Factor:  v1.NewFactor(1.5),
			Max:     &metav1.Duration{Duration: time.Minute},
		}
	})
	got := syncPolicy(rel.Spec.SyncPolicy)
	want := policy.SyncPolicy{Automatic: true, Interval: 5 * time.Minute,
		Backoff: &policy.Backoff{Initial: 10 * time.Second, Factor: 1.5, Max: time.Minute}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(policy.SyncPolicy{}, syncPolicy(v1.SyncPolicy{})); diff != "" {
		t.Errorf("SP-02/SP-37 unset policy (-want +got):\n%s", diff)
	}
}

// Another chart version that renders the same objects keeps the render and its
// appliedAt, but lastSuccessful.chartVersion follows the chart.
func TestLastSuccessfulChartVersionFollowsTheChart(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	rel := testRelease("podinfo", automatic())
	first := reconcileStatus(rel, "sha256:a", t0, policy.Succeeded())
	rel = with(rel, statusOnly(func(s *v1.ReleaseStatus) { *s = first }))

	st := &state{rel: rel, now: t0.Add(time.Hour)}
	in := policy.Input{Now: st.now, Policy: syncPolicy(rel.Spec.SyncPolicy), CurrentRender: "sha256:a", LastSuccessfulRender: "sha256:a"}
	plan := policy.Decide(in)
	ap := applied{result: policy.Succeeded(), chart: v1.RenderChart{Version: "1.0.1"}}
	got := newStatus(rel, st, ap, policy.Finish(in, plan, ap.result)).LastSuccessful
	want := &v1.LastSuccessful{RenderRef: "sha256:a", ChartVersion: "1.0.1", AppliedAt: first.LastSuccessful.AppliedAt}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("lastSuccessful (-want +got):\n%s", diff)
	}
}

// A new commit that renders the same objects keeps the render and its appliedAt;
// lastSuccessful.commit follows the commit applied.
func TestLastSuccessfulCommitFollowsTheChart(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	rel := testRelease("podinfo", automatic())
	in := policy.Input{Now: t0, Policy: syncPolicy(rel.Spec.SyncPolicy), CurrentRender: "sha256:a"}
	plan := policy.Decide(in)
	ap := applied{result: policy.Succeeded(), chart: v1.RenderChart{Version: "1.0.0", Commit: "c1"}}
	first := newStatus(rel, &state{rel: rel, now: t0}, ap, policy.Finish(in, plan, ap.result))
	if first.LastSuccessful == nil || first.LastSuccessful.Commit != "c1" {
		t.Fatalf("lastSuccessful = %+v, want commit c1", first.LastSuccessful)
	}
	rel = with(rel, statusOnly(func(s *v1.ReleaseStatus) { *s = first }))
	st := &state{rel: rel, now: t0.Add(time.Hour)}
	in = policy.Input{Now: st.now, Policy: syncPolicy(rel.Spec.SyncPolicy), CurrentRender: "sha256:a", LastSuccessfulRender: "sha256:a"}
	plan = policy.Decide(in)
	ap = applied{result: policy.Succeeded(), chart: v1.RenderChart{Version: "1.0.0", Commit: "c2"}}
	got := newStatus(rel, st, ap, policy.Finish(in, plan, ap.result)).LastSuccessful
	want := &v1.LastSuccessful{RenderRef: "sha256:a", ChartVersion: "1.0.0", Commit: "c2", AppliedAt: first.LastSuccessful.AppliedAt}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("lastSuccessful (-want +got):\n%s", diff)
	}
}
