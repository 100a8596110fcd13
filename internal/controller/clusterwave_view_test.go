package controller

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// The cluster-wave view of a shard holds every shard's Releases cut down by
// waveRelease: each function of the cluster waves reads the same from the cut-down
// Release as from the whole one, and what they do not read is not kept.
func TestWaveReleaseKeepsWhatTheClusterWavesRead(t *testing.T) {
	ready := []releaseOption{
		condition(v1.ConditionApplied, "True", v1.ReasonApplied),
		condition(v1.ConditionHealthy, "True", v1.ReasonHealthy),
	}
	full := func(opts ...releaseOption) *v1.Release {
		base := []releaseOption{
			clusterWave(0), cluster("prod"), values(`{"replicas": 3}`), label("team", "db"),
			annotation("note", "kept out"), finalizer(),
			condition(v1.ConditionReady, "True", v1.ReasonApplied),
			statusOnly(func(s *v1.ReleaseStatus) { s.Render = &v1.RenderStatus{Ref: "r1"} }),
		}
		return testRelease("db", append(base, opts...)...)
	}
	cases := map[string]*v1.Release{
		"ready":                       full(ready...),
		"never applied":               full(),
		"not healthy":                 full(condition(v1.ConditionApplied, "True", v1.ReasonApplied), condition(v1.ConditionHealthy, "False", v1.ReasonDegraded)),
		"edited since its conditions": with(full(ready...), generation(2)),
		"being deleted":               full(deleting()),
		"of shard b":                  full(append(ready, label(v1.LabelShard, "b"))...),
		"of the host cluster":         full(append(ready, cluster(""))...),
	}
	higher := testRelease("api", clusterWave(1), cluster("prod"), label(v1.LabelShard, "a"))
	for name, rel := range cases {
		t.Run(name, func(t *testing.T) {
			obj, err := waveRelease(rel.DeepCopy())
			if err != nil {
				t.Fatal(err)
			}
			cut := obj.(*v1.Release)
			if got, want := waveReady(cut), waveReady(rel); got != want {
				t.Errorf("waveReady: %t on the view, %t on the Release", got, want)
			}
			if diff := cmp.Diff(clusterWaveBlocker(higher, []v1.Release{*rel}), clusterWaveBlocker(higher, []v1.Release{*cut})); diff != "" {
				t.Errorf("clusterWaveBlocker (-Release +view):\n%s", diff)
			}
			for _, shard := range []string{"", "a", "b"} {
				if got, want := inShard(shard, cut), inShard(shard, rel); got != want {
					t.Errorf("inShard(%q): %t on the view, %t on the Release", shard, got, want)
				}
			}
			if got, want := clusterKey(cut), clusterKey(rel); got != want {
				t.Errorf("clusterKey: %q on the view, %q on the Release", got, want)
			}
			if cut.Spec.ClusterWave != rel.Spec.ClusterWave || cut.Name != rel.Name || cut.Namespace != rel.Namespace {
				t.Errorf("the view's Release is %s/%s of wave %d", cut.Namespace, cut.Name, cut.Spec.ClusterWave)
			}
			if cut.Spec.Values != nil || cut.Status.Render != nil || len(cut.Annotations) > 0 || len(cut.Finalizers) > 0 || cut.Labels["team"] != "" {
				t.Errorf("the view keeps what the cluster waves do not read: %+v", cut)
			}
			for _, c := range cut.Status.Conditions {
				if c.Type != v1.ConditionApplied && c.Type != v1.ConditionHealthy || c.Message != "" {
					t.Errorf("the view keeps condition %+v", c)
				}
			}
		})
	}
}

// A shard's cluster-wave watch sees every shard's Releases and enqueues only its own:
// a Release of another shard is that shard's to reconcile.
func TestHigherWaveRequestsOfAShard(t *testing.T) {
	changed := testRelease("db", clusterWave(0), cluster("prod"), label(v1.LabelShard, "b"))
	others := []v1.Release{
		*testRelease("api", clusterWave(1), cluster("prod"), label(v1.LabelShard, "a")),
		*testRelease("web", clusterWave(2), cluster("prod"), label(v1.LabelShard, "b")),
		*testRelease("ui", clusterWave(3), cluster("prod")),
	}
	req := func(name string) reconcile.Request {
		return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "team-a", Name: name}}
	}
	for shard, want := range map[string][]reconcile.Request{
		"":  {req("api"), req("ui"), req("web")},
		"a": {req("api")},
		"b": {req("web")},
	} {
		if diff := cmp.Diff(want, higherWaveRequests(changed, others, shard)); diff != "" {
			t.Errorf("shard %q (-want +got):\n%s", shard, diff)
		}
	}
}
