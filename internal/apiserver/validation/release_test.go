package validation

import (
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
)

func validRelease() *convoyv1alpha1.Release {
	return &convoyv1alpha1.Release{
		ObjectMeta: metav1.ObjectMeta{Name: "podinfo", Namespace: "team-a"},
		Spec: convoyv1alpha1.ReleaseSpec{
			Chart: convoyv1alpha1.ChartSource{Repository: "https://charts.example.com", Name: "podinfo"},
		},
	}
}

func dur(s string) *metav1.Duration {
	d, err := time.ParseDuration(s)
	if err != nil {
		panic(err)
	}
	return &metav1.Duration{Duration: d}
}

func validHook() convoyv1alpha1.Hook {
	return convoyv1alpha1.Hook{Name: "migrate", Phase: convoyv1alpha1.HookPreApply, Job: &batchv1.JobSpec{
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "m", Image: "busybox"}}}}}}
}

func TestRelease(t *testing.T) {
	cases := map[string]struct {
		mutate func(*convoyv1alpha1.Release)
		fields []string // the error fields, none when valid
	}{
		"valid":          {mutate: func(*convoyv1alpha1.Release) {}},
		"oci repository": {mutate: func(r *convoyv1alpha1.Release) { r.Spec.Chart.Repository = "oci://ghcr.io/x/charts" }},
		"zero interval":  {mutate: func(r *convoyv1alpha1.Release) { r.Spec.SyncPolicy.Interval = dur("0s") }},
		"any factor, no initial": {mutate: func(r *convoyv1alpha1.Release) {
			r.Spec.SyncPolicy.RetryBackoff = &convoyv1alpha1.RetryBackoff{Factor: convoyv1alpha1.NewFactor(0.5)}
		}},
		"zero max": {mutate: func(r *convoyv1alpha1.Release) {
			r.Spec.SyncPolicy.RetryBackoff = &convoyv1alpha1.RetryBackoff{Initial: dur("1s"), Max: dur("0s")}
		}},
		"sync annotation with offset": {mutate: func(r *convoyv1alpha1.Release) {
			r.Annotations = map[string]string{convoyv1alpha1.AnnotationSyncRequestedAt: "2026-12-02T11:04:05.5+01:00"}
		}},
		"service account": {mutate: func(r *convoyv1alpha1.Release) { r.Spec.ServiceAccountName = "deployer" }},
		"service account that is not a name": {mutate: func(r *convoyv1alpha1.Release) { r.Spec.ServiceAccountName = "Team A" },
			fields: []string{"spec.serviceAccountName"}},
		"negative interval": {mutate: func(r *convoyv1alpha1.Release) { r.Spec.SyncPolicy.Interval = dur("-1s") }, fields: []string{"spec.syncPolicy.interval"}},
		"initial 0": {mutate: func(r *convoyv1alpha1.Release) {
			r.Spec.SyncPolicy.RetryBackoff = &convoyv1alpha1.RetryBackoff{Initial: dur("0s")}
		}, fields: []string{"spec.syncPolicy.retryBackoff.initial"}},
		"negative max": {mutate: func(r *convoyv1alpha1.Release) {
			r.Spec.SyncPolicy.RetryBackoff = &convoyv1alpha1.RetryBackoff{Max: dur("-1s")}
		}, fields: []string{"spec.syncPolicy.retryBackoff.max"}},
		"unknown action": {mutate: func(r *convoyv1alpha1.Release) {
			r.Spec.FailurePolicy = &convoyv1alpha1.FailurePolicy{Action: "Retry"}
		}, fields: []string{"spec.failurePolicy.action"}},
		"unknown hook phase": {mutate: func(r *convoyv1alpha1.Release) {
			h := validHook()
			h.Phase = "Later"
			r.Lifecycle = &convoyv1alpha1.Lifecycle{Hooks: []convoyv1alpha1.Hook{h}}
		}, fields: []string{"lifecycle.hooks[0].phase"}},
		"unknown valuesFrom kind": {mutate: func(r *convoyv1alpha1.Release) {
			r.Spec.ValuesFrom = []convoyv1alpha1.ValuesReference{{Kind: "Pod", Name: "x"}}
		}, fields: []string{"spec.valuesFrom[0].kind"}},
		"file repository": {mutate: func(r *convoyv1alpha1.Release) { r.Spec.Chart.Repository = "file:///charts" }, fields: []string{"spec.chart.repository"}},
		"hook without job": {mutate: func(r *convoyv1alpha1.Release) {
			h := validHook()
			h.Job = nil
			r.Lifecycle = &convoyv1alpha1.Lifecycle{Hooks: []convoyv1alpha1.Hook{h}}
		}, fields: []string{"lifecycle.hooks[0].job"}},
		"hook with empty template": {mutate: func(r *convoyv1alpha1.Release) {
			h := validHook()
			h.Job.Template = corev1.PodTemplateSpec{}
			r.Lifecycle = &convoyv1alpha1.Lifecycle{Hooks: []convoyv1alpha1.Hook{h}}
		}, fields: []string{"lifecycle.hooks[0].job.template"}},
		"duplicate hook names": {mutate: func(r *convoyv1alpha1.Release) {
			r.Lifecycle = &convoyv1alpha1.Lifecycle{Hooks: []convoyv1alpha1.Hook{validHook(), validHook()}}
		}, fields: []string{"lifecycle.hooks[1].name"}},
		"mutation with both": {mutate: func(r *convoyv1alpha1.Release) {
			r.Mutations = []convoyv1alpha1.Mutation{{Patch: "a: b", JSONPatch: []convoyv1alpha1.JSONPatchOperation{{Op: "remove", Path: "/a"}}}}
		}, fields: []string{"mutations[0]"}},
		"mutation with neither": {mutate: func(r *convoyv1alpha1.Release) {
			r.Mutations = []convoyv1alpha1.Mutation{{}}
		}, fields: []string{"mutations[0]"}},
		"patch that is not YAML": {mutate: func(r *convoyv1alpha1.Release) {
			r.Mutations = []convoyv1alpha1.Mutation{{Patch: "spec: {replicas: 2"}}
		}, fields: []string{"mutations[0].patch"}},
		"patch that is not an object": {mutate: func(r *convoyv1alpha1.Release) {
			r.Mutations = []convoyv1alpha1.Mutation{{Patch: "- spec"}}
		}, fields: []string{"mutations[0].patch"}},
		"JSON patch add without value, move without from": {mutate: func(r *convoyv1alpha1.Release) {
			r.Mutations = []convoyv1alpha1.Mutation{{JSONPatch: []convoyv1alpha1.JSONPatchOperation{
				{Op: "add", Path: "/a"}, {Op: "move", Path: "/b"}, {Op: "test", Path: "/c", Value: &runtime.RawExtension{Raw: []byte("1")}}}}}
		}, fields: []string{"mutations[0].jsonPatch[0].value", "mutations[0].jsonPatch[1].from"}},
		"sync annotation not a time": {mutate: func(r *convoyv1alpha1.Release) {
			r.Annotations = map[string]string{convoyv1alpha1.AnnotationSyncForceRequestedAt: "soon"}
		}, fields: []string{"metadata.annotations[convoy.kumodo.io/sync-force-requested-at]"}},
		"sync annotation in the year 10000 in UTC": {mutate: func(r *convoyv1alpha1.Release) {
			r.Annotations = map[string]string{convoyv1alpha1.AnnotationSyncRequestedAt: "9999-12-31T23:59:59-01:00"}
		}, fields: []string{"metadata.annotations[convoy.kumodo.io/sync-requested-at]"}},
		"sync render annotation, a full ref": {mutate: func(r *convoyv1alpha1.Release) {
			r.Annotations = map[string]string{convoyv1alpha1.AnnotationSyncRequestedRender: "sha256:" + strings.Repeat("0f", 32)}
		}},
		"sync render annotation, the short form": {mutate: func(r *convoyv1alpha1.Release) {
			r.Annotations = map[string]string{convoyv1alpha1.AnnotationSyncRequestedRender: "0123456789"}
		}, fields: []string{"metadata.annotations[convoy.kumodo.io/sync-requested-render]"}},
		"sync render annotation, uppercase": {mutate: func(r *convoyv1alpha1.Release) {
			r.Annotations = map[string]string{convoyv1alpha1.AnnotationSyncRequestedRender: "sha256:" + strings.Repeat("0F", 32)}
		}, fields: []string{"metadata.annotations[convoy.kumodo.io/sync-requested-render]"}},
		"sync render annotation, empty": {mutate: func(r *convoyv1alpha1.Release) {
			r.Annotations = map[string]string{convoyv1alpha1.AnnotationSyncRequestedRender: ""}
		}, fields: []string{"metadata.annotations[convoy.kumodo.io/sync-requested-render]"}},
		"pin of a bad ref": {mutate: func(r *convoyv1alpha1.Release) {
			r.Pin = &convoyv1alpha1.Pin{RenderRef: "md5:x"}
		}, fields: []string{"pin.renderRef"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := validRelease()
			tc.mutate(r)
			var got []string
			for _, e := range Release(r, ReleaseOptions{}) {
				got = append(got, e.Field)
			}
			if strings.Join(got, ",") != strings.Join(tc.fields, ",") {
				t.Errorf("error fields = %v, want %v (%v)", got, tc.fields, Release(r, ReleaseOptions{}))
			}
		})
	}
}
