package controller

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/policy"
)

// convoy_release_ready has one series per Release, with the Ready condition's reason:
// a new reason replaces the series, and a Release that is gone (deleted, or moved to
// another shard) leaves none behind, so that an alert on `== 0` names the Releases
// that are not Ready now (decision 0076).
func TestReleaseReadyMetric(t *testing.T) {
	ready := func(status, reason string) policy.Outcome {
		return policy.Outcome{Ready: policy.Condition{Type: v1.ConditionReady, Status: status, Reason: reason}}
	}
	web, api := policy.Key{Namespace: "team-a", Name: "web"}, policy.Key{Namespace: "team-a", Name: "api"}
	steps := []struct {
		what string
		do   func(m *metrics)
		want string // the exposition of convoy_release_ready, without HELP and TYPE
	}{
		{"two Releases reconciled", func(m *metrics) {
			m.observe(web, policy.Plan{}, ready(policy.StatusTrue, policy.ReasonReady), changeCounts{}, 0)
			m.observe(api, policy.Plan{}, ready(policy.StatusFalse, v1.ReasonWaitingForSync), changeCounts{}, 0)
		}, `
convoy_release_ready{name="api",namespace="team-a",reason="WaitingForSync"} 0
convoy_release_ready{name="web",namespace="team-a",reason="Ready"} 1
`},
		{"a new reason replaces the series", func(m *metrics) {
			m.observe(web, policy.Plan{}, ready(policy.StatusFalse, v1.ReasonDeployFailed), changeCounts{}, 0)
		}, `
convoy_release_ready{name="api",namespace="team-a",reason="WaitingForSync"} 0
convoy_release_ready{name="web",namespace="team-a",reason="DeployFailed"} 0
`},
		{"the same reason again keeps one series", func(m *metrics) {
			m.observe(web, policy.Plan{}, ready(policy.StatusFalse, v1.ReasonDeployFailed), changeCounts{}, 0)
		}, `
convoy_release_ready{name="api",namespace="team-a",reason="WaitingForSync"} 0
convoy_release_ready{name="web",namespace="team-a",reason="DeployFailed"} 0
`},
		{"a Release gone leaves nothing", func(m *metrics) {
			m.forget(web)
		}, `
convoy_release_ready{name="api",namespace="team-a",reason="WaitingForSync"} 0
`},
	}
	m := newMetrics(prometheus.NewRegistry())
	header := "# HELP convoy_release_ready 1 when the Release's Ready condition is True, else 0; reason is the Ready condition's reason. One series per Release this controller (shard) reconciles.\n# TYPE convoy_release_ready gauge"
	for _, s := range steps {
		s.do(m)
		if err := testutil.CollectAndCompare(m.ready, strings.NewReader(header+s.want), "convoy_release_ready"); err != nil {
			t.Errorf("%s: %v", s.what, err)
		}
	}
}
