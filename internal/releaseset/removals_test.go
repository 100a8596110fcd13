package releaseset

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

var massRemovalHalt = []string{"Ready=False/MassRemoval", "Progressing=False/MassRemoval", "Halted=True/MassRemoval"}

func TestDecideRemovals(t *testing.T) {
	earlier := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	now := metav1.NewTime(earlier.Add(24 * time.Hour))
	later := metav1.NewTime(earlier.Add(time.Hour))
	// Every Release of fleet Ready at r1, the rest stage approved.
	allReady := func(opts ...relOption) func(*v1.ReleaseSet) []v1.Release {
		return func(s *v1.ReleaseSet) []v1.Release {
			var out []v1.Release
			for _, c := range []string{"c1", "c2", "c3", "c4"} {
				out = append(out, rel(s, c, append([]relOption{ready()}, opts...)...))
			}
			return out
		}
	}
	s := func(opts ...setOption) *v1.ReleaseSet {
		return testSet("web", append([]setOption{stages(canary(), manualRest()),
			approvals(v1.StageApproval{Stage: "rest", Revision: r1})}, opts...)...)
	}
	// Of the 4 Clusters, only c1 and c2 are still selected; c3 relabelled, c4 gone.
	lost2 := []v1.Cluster{cluster("c1", ring("canary")), cluster("c2", ring("canary")), cluster("c3", env("dev"))}
	cases := map[string]struct {
		set      *v1.ReleaseSet
		clusters []v1.Cluster
		releases func(*v1.ReleaseSet) []v1.Release
		want     summary
	}{
		"one of four lost is within the default 25%: deleted": {
			set: s(), clusters: fleet[:3], releases: allReady(),
			want: summary{Delete: []string{"web-c4"}, Recent: []string{"web-c4"},
				Stages: []string{"canary Complete 2/2/2", "rest Complete 1/1/1"}, Conditions: complete},
		},
		"two of four lost is over the default 25% (1): nothing deleted, the set halts with the Releases held": {
			set: s(), clusters: lost2, releases: allReady(),
			want: summary{Held: []string{"web-c3", "web-c4"},
				Stages: []string{"canary Complete 2/2/2", "rest Complete 0/0/0"}, Conditions: massRemovalHalt},
		},
		"a mass removal holds creates and updates too": {
			set: testSet("web", stages(canary(), manualRest()), values(`{"replicas":2}`)), clusters: append(lost2, cluster("c5", ring("canary"))),
			releases: allReady(),
			want: summary{Held: []string{"web-c3", "web-c4"},
				// c5, new, would be created (maxParallel 1, c1 and c2 Ready at the revision).
				Stages: []string{"canary Progressing 3/2/2", "rest Waiting 0/0/0"}, Conditions: massRemovalHalt},
		},
		"at the limit as a number: deleted": {
			set: s(maxRemovals(intstr.FromInt32(2))), clusters: lost2, releases: allReady(),
			want: summary{Delete: []string{"web-c3", "web-c4"}, Recent: []string{"web-c3", "web-c4"},
				Stages: []string{"canary Complete 2/2/2", "rest Complete 0/0/0"}, Conditions: complete},
		},
		"over the limit as a number: held": {
			set: s(maxRemovals(intstr.FromInt32(1))), clusters: lost2, releases: allReady(),
			want: summary{Held: []string{"web-c3", "web-c4"},
				Stages: []string{"canary Complete 2/2/2", "rest Complete 0/0/0"}, Conditions: massRemovalHalt},
		},
		"maxRemovals 0 holds a single removal": {
			set: s(maxRemovals(intstr.FromInt32(0))), clusters: fleet[:3], releases: allReady(),
			want: summary{Held: []string{"web-c4"},
				Stages: []string{"canary Complete 2/2/2", "rest Complete 1/1/1"}, Conditions: massRemovalHalt},
		},
		"a percentage rounds down: 50% of 4 is 2, so two go": {
			set: s(maxRemovals(intstr.FromString("50%"))), clusters: lost2, releases: allReady(),
			want: summary{Delete: []string{"web-c3", "web-c4"}, Recent: []string{"web-c3", "web-c4"},
				Stages: []string{"canary Complete 2/2/2", "rest Complete 0/0/0"}, Conditions: complete},
		},
		"a percentage rounds down: 49% of 4 is 1, so two are held": {
			set: s(maxRemovals(intstr.FromString("49%"))), clusters: lost2, releases: allReady(),
			want: summary{Held: []string{"web-c3", "web-c4"},
				Stages: []string{"canary Complete 2/2/2", "rest Complete 0/0/0"}, Conditions: massRemovalHalt},
		},
		"an acknowledgement of the held Releases lets them go": {
			set: s(acknowledging(later, "web-c3", "web-c4")), clusters: lost2, releases: allReady(created(earlier)),
			want: summary{Delete: []string{"web-c3", "web-c4"},
				Stages: []string{"canary Complete 2/2/2", "rest Complete 0/0/0"}, Conditions: complete},
		},
		"an acknowledgement of other Releases does not": {
			set: s(acknowledging(later, "web-c2", "web-c3")), clusters: lost2, releases: allReady(created(earlier)),
			// web-c4 alone is unacknowledged and within the limit: both go; it alone counts later.
			want: summary{Delete: []string{"web-c3", "web-c4"}, Recent: []string{"web-c4"},
				Stages: []string{"canary Complete 2/2/2", "rest Complete 0/0/0"}, Conditions: complete},
		},
		"an acknowledgement covers no Release created after it": {
			set: s(acknowledging(earlier, "web-c3", "web-c4")), clusters: lost2, releases: allReady(created(later)),
			want: summary{Held: []string{"web-c3", "web-c4"},
				Stages: []string{"canary Complete 2/2/2", "rest Complete 0/0/0"}, Conditions: massRemovalHalt},
		},
		"a Cluster lost after another within the window counts with it: held": {
			set: s(removedAt("web-c4", now.Add(-RemovalWindow+time.Second))), clusters: fleet[:2],
			releases: func(s *v1.ReleaseSet) []v1.Release {
				return []v1.Release{rel(s, "c1", ready()), rel(s, "c2", ready()), rel(s, "c3", ready())}
			},
			want: summary{Held: []string{"web-c3"}, Recent: []string{"web-c4"},
				Stages: []string{"canary Complete 2/2/2", "rest Complete 0/0/0"}, Conditions: massRemovalHalt},
		},
		"a removal older than the window counts no more: deleted, and forgotten": {
			set: s(removedAt("web-c4", now.Add(-RemovalWindow)), maxRemovals(intstr.FromInt32(1))), clusters: fleet[:2],
			releases: func(s *v1.ReleaseSet) []v1.Release {
				return []v1.Release{rel(s, "c1", ready()), rel(s, "c2", ready()), rel(s, "c3", ready())}
			},
			want: summary{Delete: []string{"web-c3"}, Recent: []string{"web-c3"},
				Stages: []string{"canary Complete 2/2/2", "rest Complete 0/0/0"}, Conditions: complete},
		},
		"a paused set keeps its recent removals, and shows the mass removal it would hold": {
			set: s(removedAt("web-c4", now.Add(-time.Minute)), paused()), clusters: fleet[:2],
			releases: func(s *v1.ReleaseSet) []v1.Release {
				return []v1.Release{rel(s, "c1", ready()), rel(s, "c2", ready()), rel(s, "c3", ready())}
			},
			want: summary{Held: []string{"web-c3"}, Recent: []string{"web-c4"}, Stages: []string{"canary Complete 2/2/2", "rest Complete 0/0/0"},
				Conditions: []string{"Ready=False/MassRemoval", "Progressing=False/Paused", "Halted=True/MassRemoval"}},
		},
		"a Release being deleted counts neither as a removal nor in the set's Releases": {
			set: s(), clusters: fleet[:2],
			releases: func(s *v1.ReleaseSet) []v1.Release {
				return []v1.Release{rel(s, "c1", ready()), rel(s, "c2", ready()), rel(s, "c3", ready(), deleting()),
					rel(s, "c4", ready(), deleting())}
			},
			want: summary{Stages: []string{"canary Complete 2/2/2", "rest Complete 0/0/0"}, Conditions: complete},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := summarize(Decide(Input{Set: tc.set, Clusters: tc.clusters, Releases: tc.releases(tc.set), Now: now}))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMassRemovalMessage(t *testing.T) {
	set := testSet("web", stages(canary(), manualRest()))
	lost := []v1.Cluster{cluster("c1", ring("canary"))}
	releases := []v1.Release{rel(set, "c1", ready()), rel(set, "c2", ready()), rel(set, "c3", ready()), rel(set, "c4", ready())}
	plan := Decide(Input{Set: set, Clusters: lost, Releases: releases})
	got := apimeta.FindStatusCondition(plan.Status.Conditions, v1.ConditionHalted).Message
	want := "3 of the 4 Releases would be deleted at once (Clusters no longer selected or gone: c2, c3, c4), more than " +
		"spec.strategy.maxRemovals 25% (default) allows (1): nothing is deleted, created or updated. If the clusterSelector " +
		"or the Clusters' labels are wrong, fix them; if the removal is meant, acknowledge it: kubectl convoy releaseset promote web -n team-a."
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Halted message (-want +got):\n%s", diff)
	}
}

func TestMaxRemovals(t *testing.T) {
	cases := map[string]struct {
		maxRemovals *intstr.IntOrString
		n, want     int
	}{
		"unset: 25% of 4":             {n: 4, want: 1},
		"unset: 25% of 3 rounds down": {n: 3, want: 0},
		"unset: 25% of 5 rounds down": {n: 5, want: 1},
		"unset: 25% of 0":             {n: 0, want: 0},
		"a number":                    {maxRemovals: ptr.To(intstr.FromInt32(3)), n: 10, want: 3},
		"zero":                        {maxRemovals: ptr.To(intstr.FromInt32(0)), n: 10, want: 0},
		"100%":                        {maxRemovals: ptr.To(intstr.FromString("100%")), n: 7, want: 7},
		"10% of 11 rounds down":       {maxRemovals: ptr.To(intstr.FromString("10%")), n: 11, want: 1},
		"malformed: nothing goes":     {maxRemovals: ptr.To(intstr.FromString("many")), n: 10, want: 0},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := MaxRemovals(tc.maxRemovals, tc.n); got != tc.want {
				t.Errorf("MaxRemovals(%v, %d) = %d, want %d", tc.maxRemovals, tc.n, got, tc.want)
			}
		})
	}
}

func TestDecidePaused(t *testing.T) {
	pausedProgressing := []string{"Ready=False/Paused", "Progressing=False/Paused", "Halted=False/NotHalted"}
	s2p := func(opts ...setOption) *v1.ReleaseSet {
		return testSet("web", append([]setOption{stages(canary(), manualRest()), values(`{"replicas":2}`), paused()}, opts...)...)
	}
	allReadyR1 := func(set *v1.ReleaseSet) []v1.Release {
		return []v1.Release{rel(set, "c1", from(setR1), ready()), rel(set, "c2", from(setR1), ready()),
			rel(set, "c3", from(setR1), ready()), rel(set, "c4", from(setR1), ready())}
	}
	cases := map[string]struct {
		set      *v1.ReleaseSet
		clusters []v1.Cluster
		releases func(*v1.ReleaseSet) []v1.Release
		want     summary
	}{
		"a paused set creates nothing": {
			set: testSet("web", stages(canary(), manualRest()), paused()), clusters: fleet,
			releases: func(*v1.ReleaseSet) []v1.Release { return nil },
			want:     summary{Stages: []string{"canary Progressing 2/0/0", "rest Waiting 2/0/0"}, Conditions: pausedProgressing},
		},
		"a paused set with a new revision updates nothing": {
			set: s2p(), clusters: fleet, releases: allReadyR1,
			want: summary{Stages: []string{"canary Progressing 2/0/0", "rest Waiting 2/0/0"}, Conditions: pausedProgressing},
		},
		"a paused set deletes nothing, however few go": {
			set: s2p(), clusters: fleet[:3], releases: allReadyR1,
			want: summary{Stages: []string{"canary Progressing 2/0/0", "rest Waiting 1/0/0"}, Conditions: pausedProgressing},
		},
		"a paused set restores no hand-made change": {
			set: testSet("web", stages(canary(), manualRest()), paused()), clusters: fleet[:1],
			releases: func(s *v1.ReleaseSet) []v1.Release {
				return []v1.Release{rel(s, "c1", ready(), releaseValues(`{"replicas":9}`))}
			},
			want: summary{Stages: []string{"canary Complete 1/1/1", "rest Complete 0/0/0"},
				Conditions: []string{"Ready=True/RolloutComplete", "Progressing=False/Paused", "Halted=False/NotHalted"}},
		},
		"a paused set waiting for approval is paused": {
			set: testSet("web", stages(canary(), manualRest()), paused()), clusters: fleet,
			releases: func(s *v1.ReleaseSet) []v1.Release { return []v1.Release{rel(s, "c1", ready()), rel(s, "c2", ready())} },
			want:     summary{Stages: []string{"canary Complete 2/2/2", "rest WaitingForApproval 2/0/0"}, Conditions: pausedProgressing},
		},
		"a paused set still reports a failed Release": {
			set: s2p(), clusters: fleet,
			releases: func(s *v1.ReleaseSet) []v1.Release {
				return []v1.Release{rel(s, "c1", rolledBack()), rel(s, "c2", from(setR1), ready()),
					rel(s, "c3", from(setR1), ready()), rel(s, "c4", from(setR1), ready())}
			},
			want: summary{Stages: []string{"canary Halted 2/1/0", "rest Waiting 2/0/0"},
				Conditions: []string{"Ready=False/ReleaseFailed", "Progressing=False/Paused", "Halted=True/ReleaseFailed"}},
		},
		"resumed, the new revision rolls out from the first stage": {
			set: testSet("web", stages(canary(), manualRest()), values(`{"replicas":2}`)), clusters: fleet, releases: allReadyR1,
			want: summary{Update: []string{"web-c1@r2"},
				Stages: []string{"canary Progressing 2/0/0", "rest Waiting 2/0/0"}, Conditions: progressing},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			plan := Decide(Input{Set: tc.set, Clusters: tc.clusters, Releases: tc.releases(tc.set)})
			if diff := cmp.Diff(tc.want, summarize(plan)); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
			if c := apimeta.FindStatusCondition(plan.Status.Conditions, v1.ConditionProgressing); tc.set.Spec.Paused &&
				!strings.Contains(c.Message, "kubectl convoy releaseset resume web -n team-a") {
				t.Errorf("Progressing message %q does not say how to resume", c.Message)
			}
		})
	}
}
