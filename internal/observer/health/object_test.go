package health

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// deployment is a live apps/v1 Deployment with generation 2 and 2 desired replicas.
func deployment(status map[string]any, meta ...func(map[string]any)) map[string]any {
	md := map[string]any{"name": "web", "namespace": "podinfo", "generation": int64(2)}
	for _, f := range meta {
		f(md)
	}
	return map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment", "metadata": md,
		"spec":   map[string]any{"replicas": int64(2)},
		"status": status,
	}
}

func available(extra ...map[string]any) map[string]any {
	conds := []any{map[string]any{"type": "Available", "status": "True"}}
	for _, e := range extra {
		conds = append(conds, e)
	}
	return map[string]any{
		"observedGeneration": int64(2), "replicas": int64(2), "updatedReplicas": int64(2),
		"readyReplicas": int64(2), "availableReplicas": int64(2), "conditions": conds,
	}
}

func TestObjectStatus(t *testing.T) {
	cases := map[string]struct {
		obj  map[string]any
		want v1.HealthStatus
	}{
		"absent object is Missing": {obj: nil, want: v1.HealthMissing},
		"available Deployment (kstatus Current) is Healthy": {
			obj: deployment(available()), want: v1.HealthHealthy,
		},
		"rolling Deployment (kstatus InProgress) is Progressing": {
			obj: deployment(map[string]any{
				"observedGeneration": int64(2), "replicas": int64(2), "updatedReplicas": int64(1),
				"readyReplicas": int64(1), "availableReplicas": int64(1),
			}),
			want: v1.HealthProgressing,
		},
		"Deployment not observed at its generation (kstatus InProgress) is Progressing": {
			obj: deployment(map[string]any{"observedGeneration": int64(1)}), want: v1.HealthProgressing,
		},
		"Deployment past its progress deadline (kstatus Failed) is Degraded": {
			obj: deployment(map[string]any{
				"observedGeneration": int64(2), "replicas": int64(2), "updatedReplicas": int64(1),
				"conditions": []any{map[string]any{
					"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded",
				}},
			}),
			want: v1.HealthDegraded,
		},
		"object being deleted (kstatus Terminating) is Progressing": {
			obj: deployment(available(), func(md map[string]any) {
				md["deletionTimestamp"] = "2026-12-02T10:00:00Z"
			}),
			want: v1.HealthProgressing,
		},
		"ConfigMap (kstatus Current) is Healthy": {
			obj: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
				"metadata": map[string]any{"name": "cfg", "namespace": "podinfo"}},
			want: v1.HealthHealthy,
		},
		"status kstatus cannot read is Unknown": {
			obj:  deployment(map[string]any{"observedGeneration": "two"}),
			want: v1.HealthUnknown,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got Result
			if tc.obj == nil {
				got = ObjectStatus(nil)
			} else {
				got = ObjectStatus(u(tc.obj))
			}
			if diff := cmp.Diff(tc.want, got.Health); diff != "" {
				t.Errorf("health (-want +got):\n%s\nmessage: %q", diff, got.Message)
			}
			if got.Message == "" && got.Health != v1.HealthHealthy {
				t.Errorf("no message for %s", got.Health)
			}
		})
	}
}

func TestWorst(t *testing.T) {
	const (
		H = v1.HealthHealthy
		P = v1.HealthProgressing
		D = v1.HealthDegraded
		M = v1.HealthMissing
		U = v1.HealthUnknown
	)
	cases := map[string]struct {
		in   []v1.HealthStatus
		want v1.HealthStatus
	}{
		"nothing is Healthy":                            {in: nil, want: H},
		"all Healthy":                                   {in: []v1.HealthStatus{H, H}, want: H},
		"Unknown is worse than Healthy":                 {in: []v1.HealthStatus{H, U, H}, want: U},
		"Progressing is worse than Unknown":             {in: []v1.HealthStatus{U, P, H}, want: P},
		"Missing is worse than Progressing":             {in: []v1.HealthStatus{P, M, U}, want: M},
		"Degraded is worst, before Missing":             {in: []v1.HealthStatus{M, D, P}, want: D},
		"a state convoy does not know ranks as Unknown": {in: []v1.HealthStatus{H, "Weird"}, want: U},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Worst(tc.in...)); diff != "" {
				t.Errorf("Worst (-want +got):\n%s", diff)
			}
		})
	}
}
