package testenv

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// Counter reads the series whose labels include the ones asked for; 0 when there is
// none.
func TestCounter(t *testing.T) {
	reg := prometheus.NewRegistry()
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "calls_total"}, []string{"type", "result"})
	reg.MustRegister(c)
	c.WithLabelValues("github", "ok").Add(3)
	c.WithLabelValues("github", "refused").Add(1)
	c.WithLabelValues("gitlab", "ok").Add(2)
	for name, tc := range map[string]struct {
		metric string
		labels map[string]string
		want   float64
	}{
		"both labels":        {metric: "calls_total", labels: map[string]string{"type": "github", "result": "refused"}, want: 1},
		"another series":     {metric: "calls_total", labels: map[string]string{"type": "gitlab", "result": "ok"}, want: 2},
		"no such series":     {metric: "calls_total", labels: map[string]string{"type": "gitlab", "result": "refused"}, want: 0},
		"no such counter":    {metric: "other_total", labels: map[string]string{"type": "github"}, want: 0},
		"a subset of labels": {metric: "calls_total", labels: map[string]string{"type": "gitlab"}, want: 2},
	} {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Counter(t, reg, tc.metric, tc.labels)); diff != "" {
				t.Errorf("Counter (-want +got):\n%s", diff)
			}
		})
	}
}

// Phases and Conditions say in one line where a ReleaseSet stands.
func TestPhasesAndConditions(t *testing.T) {
	s := &v1.ReleaseSet{Status: v1.ReleaseSetStatus{
		Stages: []v1.StageStatus{{Name: "canary", Phase: "Complete"}, {Name: "rest", Phase: "Waiting"}},
		Conditions: []metav1.Condition{
			{Type: "Ready", Status: metav1.ConditionFalse, Reason: "Waiting", Message: "rest waits for /promote."},
			{Type: "Halted", Status: metav1.ConditionFalse, Reason: "NotHalted"},
		},
	}}
	if diff := cmp.Diff("canary Complete, rest Waiting", Phases(s)); diff != "" {
		t.Errorf("Phases (-want +got):\n%s", diff)
	}
	want := "Ready=False/Waiting (rest waits for /promote.); Halted=False/NotHalted ()"
	if diff := cmp.Diff(want, Conditions(s.Status.Conditions)); diff != "" {
		t.Errorf("Conditions (-want +got):\n%s", diff)
	}
}
