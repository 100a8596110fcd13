package controller

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

func TestSP30_HigherWaveRequests(t *testing.T) {
	changed := testRelease("db", clusterWave(1), cluster("prod"))
	others := []v1.Release{
		*testRelease("db", clusterWave(1), cluster("prod")),
		*testRelease("web", clusterWave(2), cluster("prod")),
		*testRelease("api", clusterWave(3), cluster("prod"), inNamespace("team-b")),
		*testRelease("cache", clusterWave(0), cluster("prod")),
		*testRelease("same", clusterWave(1), cluster("prod")),
		*testRelease("other", clusterWave(5), cluster("staging")),
	}
	got := higherWaveRequests(changed, others, "")
	want := []reconcile.Request{
		{NamespacedName: types.NamespacedName{Namespace: "team-a", Name: "web"}},
		{NamespacedName: types.NamespacedName{Namespace: "team-b", Name: "api"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestClusterWaveBlocker(t *testing.T) {
	ready := func(name string, wave int32) v1.Release {
		return *testRelease(name, clusterWave(wave),
			condition(v1.ConditionApplied, "True", v1.ReasonApplied),
			condition(v1.ConditionHealthy, "True", v1.ReasonHealthy))
	}
	notHealthy := func(name string, wave int32) v1.Release {
		return *testRelease(name, clusterWave(wave),
			condition(v1.ConditionApplied, "True", v1.ReasonApplied),
			condition(v1.ConditionHealthy, "Unknown", v1.ReasonNotAssessed))
	}
	rel := testRelease("web", clusterWave(2))
	cases := map[string]struct {
		others []v1.Release
		want   string
	}{
		"none":                       {want: ""},
		"lower waves ready":          {others: []v1.Release{ready("db", 0), ready("cache", 1)}, want: ""},
		"a lower wave not healthy":   {others: []v1.Release{ready("db", 0), notHealthy("cache", 1)}, want: "team-a/cache"},
		"a lower wave never applied": {others: []v1.Release{*testRelease("db", clusterWave(1))}, want: "team-a/db"},
		"same and higher waves do not hold": {
			others: []v1.Release{notHealthy("peer", 2), notHealthy("later", 3)}, want: "",
		},
		"another cluster does not hold": {
			others: []v1.Release{*testRelease("db", clusterWave(0), cluster("other"))}, want: "",
		},
		// An edit the lower wave's controller has not yet reconciled: its Applied and
		// Healthy are of the spec before (kstatus' observedGeneration rule).
		"a lower wave edited since its conditions were written": {
			others: []v1.Release{*with(new(ready("db", 0)), generation(2))}, want: "team-a/db",
		},
		"a lower wave whose conditions are of its generation": {
			others: []v1.Release{*with(new(ready("db", 0)), generation(2),
				condition(v1.ConditionApplied, "True", v1.ReasonApplied),
				condition(v1.ConditionHealthy, "True", v1.ReasonHealthy))}, want: "",
		},
		// Decision 0162: a Release being deleted no longer gates the waves above it, also
		// when its deletion waits (a failed pre-delete hook) and it was never ready.
		"a lower wave being deleted does not hold": {
			others: []v1.Release{*with(new(notHealthy("db", 0)), deleting())}, want: "",
		},
		"a lower wave being deleted, never applied, does not hold": {
			others: []v1.Release{*testRelease("db", clusterWave(1), deleting())}, want: "",
		},
		"the first blocker, sorted": {
			others: []v1.Release{notHealthy("z", 0), notHealthy("b", 1)}, want: "team-a/b",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, clusterWaveBlocker(rel, tc.others)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestClusterKey(t *testing.T) {
	got := []string{clusterKey(testRelease("a")), clusterKey(testRelease("b", cluster("prod")))}
	if diff := cmp.Diff([]string{hostClusterKey, "prod"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
