package integration_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
)

// Each invalid case of api.md is 422 naming the field, and nothing is stored.
func TestInvalidReleasesAreRejected(t *testing.T) {
	ns := testNamespace(t)
	d := func(s string) *metav1.Duration {
		v, _ := time.ParseDuration(s)
		return &metav1.Duration{Duration: v}
	}
	cases := map[string]struct {
		mutate func(*convoyv1alpha1.Release)
		field  string
	}{
		"negative interval": {func(r *convoyv1alpha1.Release) { r.Spec.SyncPolicy.Interval = d("-1m") }, "spec.syncPolicy.interval"},
		"initial zero": {func(r *convoyv1alpha1.Release) {
			r.Spec.SyncPolicy.RetryBackoff = &convoyv1alpha1.RetryBackoff{Initial: d("0s")}
		}, "spec.syncPolicy.retryBackoff.initial"},
		"initial negative": {func(r *convoyv1alpha1.Release) {
			r.Spec.SyncPolicy.RetryBackoff = &convoyv1alpha1.RetryBackoff{Initial: d("-5s")}
		}, "spec.syncPolicy.retryBackoff.initial"},
		"negative max": {func(r *convoyv1alpha1.Release) {
			r.Spec.SyncPolicy.RetryBackoff = &convoyv1alpha1.RetryBackoff{Initial: d("1s"), Max: d("-1s")}
		}, "spec.syncPolicy.retryBackoff.max"},
		"unknown failurePolicy.action": {func(r *convoyv1alpha1.Release) {
			r.Spec.FailurePolicy = &convoyv1alpha1.FailurePolicy{Action: "Panic"}
		}, "spec.failurePolicy.action"},
		"unknown hook phase": {func(r *convoyv1alpha1.Release) {
			h := hook("migrate")
			h.Phase = "PreDelete"
			r.Lifecycle = &convoyv1alpha1.Lifecycle{Hooks: []convoyv1alpha1.Hook{h}}
		}, "lifecycle.hooks[0].phase"},
		"unknown valuesFrom.kind": {func(r *convoyv1alpha1.Release) {
			r.Spec.ValuesFrom = []convoyv1alpha1.ValuesReference{{Kind: "Pod", Name: "x"}}
		}, "spec.valuesFrom[0].kind"},
		"repository neither http(s) nor oci": {func(r *convoyv1alpha1.Release) {
			r.Spec.Chart.Repository = "git://example.com/charts"
		}, "spec.chart.repository"},
		"hook without a Job": {func(r *convoyv1alpha1.Release) {
			h := hook("migrate")
			h.Job = nil
			r.Lifecycle = &convoyv1alpha1.Lifecycle{Hooks: []convoyv1alpha1.Hook{h}}
		}, "lifecycle.hooks[0].job"},
		"hook with an empty Job template": {func(r *convoyv1alpha1.Release) {
			h := hook("migrate")
			h.Job.Template.Spec.Containers = nil
			r.Lifecycle = &convoyv1alpha1.Lifecycle{Hooks: []convoyv1alpha1.Hook{h}}
		}, "lifecycle.hooks[0].job.template"},
		"mutation with both patch and jsonPatch": {func(r *convoyv1alpha1.Release) {
			r.Mutations = []convoyv1alpha1.Mutation{{Patch: "a: b", JSONPatch: []convoyv1alpha1.JSONPatchOperation{{Op: "remove", Path: "/a"}}}}
		}, "mutations[0]"},
		"mutation with neither patch nor jsonPatch": {func(r *convoyv1alpha1.Release) {
			r.Mutations = []convoyv1alpha1.Mutation{{Target: convoyv1alpha1.MutationTarget{Kind: "Service"}}}
		}, "mutations[0]"},
		"sync-requested-at not RFC 3339": {func(r *convoyv1alpha1.Release) {
			r.Annotations = map[string]string{convoyv1alpha1.AnnotationSyncRequestedAt: "yesterday"}
		}, "metadata.annotations[convoy.kumodo.io/sync-requested-at]"},
		"chart from Git and from a repository": {func(r *convoyv1alpha1.Release) {
			r.Spec.Chart.Git = &convoyv1alpha1.GitChartSource{URL: "https://git.example.com/charts.git", Ref: convoyv1alpha1.GitRef{Branch: "main"}}
		}, "spec.chart.repository"},
		"chart from Git with two refs": {func(r *convoyv1alpha1.Release) {
			r.Spec.Chart = convoyv1alpha1.ChartSource{Git: &convoyv1alpha1.GitChartSource{
				URL: "https://git.example.com/charts.git", Ref: convoyv1alpha1.GitRef{Branch: "main", Tag: "v1"}}}
		}, "spec.chart.git.ref"},
		"chart from a file:// Git repository": {func(r *convoyv1alpha1.Release) {
			r.Spec.Chart = convoyv1alpha1.ChartSource{Git: &convoyv1alpha1.GitChartSource{
				URL: "file:///srv/git/charts", Ref: convoyv1alpha1.GitRef{Branch: "main"}}}
		}, "spec.chart.git.url"},
		"chart from Git verified by no Secret": {func(r *convoyv1alpha1.Release) {
			r.Spec.Chart = convoyv1alpha1.ChartSource{Git: &convoyv1alpha1.GitChartSource{
				URL: "https://git.example.com/charts.git", Ref: convoyv1alpha1.GitRef{Branch: "main"},
				Verify: &convoyv1alpha1.GitVerification{}}}
		}, "spec.chart.git.verify.secretRef.name"},
		"sync-force-requested-at not RFC 3339": {func(r *convoyv1alpha1.Release) {
			r.Annotations = map[string]string{convoyv1alpha1.AnnotationSyncForceRequestedAt: "2026-13-02"}
		}, "metadata.annotations[convoy.kumodo.io/sync-force-requested-at]"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := release(ns, "invalid", tc.mutate)
			err := admin(t).Post().Namespace(ns).Resource("releases").Body(r).Do(ctx(t)).Error()
			requireInvalid(t, err, tc.field)
		})
	}
	list := &convoyv1alpha1.ReleaseList{}
	if err := admin(t).Get().Namespace(ns).Resource("releases").Do(ctx(t)).Into(list); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 0 {
		t.Errorf("%d Releases stored after invalid creates, want 0", len(list.Items))
	}
}

// Invalid updates through the main resource and the subresources are 422 and store nothing.
func TestInvalidUpdatesAreRejected(t *testing.T) {
	ns := testNamespace(t)
	r := create(t, release(ns, "podinfo"))

	_, err := mergePatch(admin(t), ctx(t), ns, "podinfo", "", map[string]interface{}{
		"metadata": map[string]interface{}{"annotations": map[string]string{convoyv1alpha1.AnnotationSyncRequestedAt: "now"}}})
	requireInvalid(t, err, "metadata.annotations[convoy.kumodo.io/sync-requested-at]")

	_, err = mergePatch(admin(t), ctx(t), ns, "podinfo", "mutations", map[string]interface{}{
		"mutations": []map[string]interface{}{{"target": map[string]string{"kind": "Service"}}}})
	requireInvalid(t, err, "mutations[0]")

	_, err = mergePatch(admin(t), ctx(t), ns, "podinfo", "lifecycle", map[string]interface{}{
		"lifecycle": map[string]interface{}{"hooks": []map[string]interface{}{{"name": "m", "phase": "PreApply"}}}})
	requireInvalid(t, err, "lifecycle.hooks[0].job")

	// Stored before decision 0194 (one check of a render ref): a render ref is checked as RenderRef.Validate checks it.
	_, err = mergePatch(admin(t), ctx(t), ns, "podinfo", "pin", map[string]interface{}{
		"pin": map[string]string{"renderRef": "sha256:4f1c"}})
	requireInvalid(t, err, "pin.renderRef")

	if got := get(t, ns, "podinfo"); got.ResourceVersion != r.ResourceVersion {
		t.Errorf("the Release changed (resourceVersion %s → %s) after rejected writes", r.ResourceVersion, got.ResourceVersion)
	}
}

// A malformed body is 400.
func TestMalformedBodyIsBadRequest(t *testing.T) {
	ns := testNamespace(t)
	err := admin(t).Post().Namespace(ns).Resource("releases").
		SetHeader("Content-Type", "application/json").Body([]byte(`{"apiVersion":"convoy.kumodo.io/v1alpha1","kind":"Release",`)).
		Do(ctx(t)).Error()
	if statusCode(err) != http.StatusBadRequest {
		t.Errorf("POST of truncated JSON: %v, want 400", err)
	}
	err = admin(t).Post().Namespace(ns).Resource("releases").
		SetHeader("Content-Type", "application/json").
		Body([]byte(`{"apiVersion":"convoy.kumodo.io/v1alpha1","kind":"Release","metadata":{"name":"x"},"spec":{"syncPolicy":{"retryBackoff":{"factor":"fast"}}}}`)).
		Do(ctx(t)).Error()
	if statusCode(err) != http.StatusBadRequest {
		t.Errorf("POST with factor \"fast\": %v, want 400", err)
	}
}

// A Render is immutable: an update of its content is 422.
func TestRenderUpdateIsRejected(t *testing.T) {
	ns := testNamespace(t)
	render := &convoyv1alpha1.Render{
		TypeMeta:   metav1.TypeMeta{APIVersion: convoyv1alpha1.SchemeGroupVersion.String(), Kind: "Render"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "podinfo-9a2b0c1d2e", Labels: map[string]string{convoyv1alpha1.LabelRelease: "podinfo"}},
		RenderRef:  refB, Release: "podinfo",
		Chart:     convoyv1alpha1.RenderChart{Name: "podinfo", Version: "6.7.1"},
		Manifests: []byte("gzip"), ObjectCount: 7, Waves: []int32{0, 1},
	}
	created := &convoyv1alpha1.Render{}
	if err := admin(t).Post().Namespace(ns).Resource("renders").Body(render).Do(ctx(t)).Into(created); err != nil {
		t.Fatalf("creating a Render: %v", err)
	}
	created.ObjectCount = 8
	created.Manifests = []byte("other")
	err := admin(t).Put().Namespace(ns).Resource("renders").Name(created.Name).Body(created).Do(ctx(t)).Error()
	requireInvalid(t, err, "objectCount")
	requireInvalid(t, err, "manifests")
}

// requireInvalid checks that err is 422 Invalid with a cause naming field.
func requireInvalid(t *testing.T, err error, field string) {
	t.Helper()
	if !apierrors.IsInvalid(err) {
		t.Fatalf("got %v (status %d), want 422 Invalid naming %s", err, statusCode(err), field)
	}
	status := err.(apierrors.APIStatus).Status()
	var fields []string
	if status.Details != nil {
		for _, c := range status.Details.Causes {
			fields = append(fields, c.Field)
			if c.Field == field {
				return
			}
		}
	}
	t.Errorf("422 names fields %q, want %s (message: %s)", strings.Join(fields, ", "), field, status.Message)
}

// A Release whose chart comes from Git is stored as written.
func TestReleaseWithChartFromGitIsStored(t *testing.T) {
	ns := testNamespace(t)
	git := &convoyv1alpha1.GitChartSource{URL: "ssh://git@git.example.com/platform/charts.git",
		Ref: convoyv1alpha1.GitRef{Semver: ">=1.0.0 <2.0.0"}, Path: "charts/podinfo", SecretRef: &convoyv1alpha1.LocalObjectReference{Name: "git-creds"},
		Verify: &convoyv1alpha1.GitVerification{SecretRef: convoyv1alpha1.LocalObjectReference{Name: "release-signers"}}}
	r := release(ns, "from-git", func(r *convoyv1alpha1.Release) { r.Spec.Chart = convoyv1alpha1.ChartSource{Git: git} })
	created := &convoyv1alpha1.Release{}
	if err := admin(t).Post().Namespace(ns).Resource("releases").Body(r).Do(ctx(t)).Into(created); err != nil {
		t.Fatalf("creating a Release with spec.chart.git: %v", err)
	}
	if created.Spec.Chart.Git == nil || *created.Spec.Chart.Git.SecretRef != *git.SecretRef || created.Spec.Chart.Git.Ref != git.Ref ||
		created.Spec.Chart.Git.URL != git.URL || created.Spec.Chart.Git.Path != git.Path || created.Spec.Chart.Repository != "" ||
		created.Spec.Chart.Git.Verify == nil || *created.Spec.Chart.Git.Verify != *git.Verify {
		t.Errorf("spec.chart = %+v, want git %+v", created.Spec.Chart, git)
	}
}
