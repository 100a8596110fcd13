package releaseset

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// The sets of the plan's tables: revision r1 of the template, then r2 (other values);
// stage canary (ring=canary, maxParallel 1), then stage rest (Manual).
var (
	setR1 = testSet("web", stages(canary(), manualRest()))
	setR2 = testSet("web", stages(canary(), manualRest()), values(`{"replicas":2}`))
	r1    = revisionOf(setR1)
	r2    = revisionOf(setR2)
	// fleet: two canary Clusters, two others.
	fleet = []v1.Cluster{cluster("c1", ring("canary")), cluster("c2", ring("canary")), cluster("c3"), cluster("c4")}
)

// summary is what a table row compares: each write as "name@revision", each stage as
// "name phase clusters/updated/ready" (as observed, before the writes), each condition
// as "Type=Status/Reason".
type summary struct {
	Create, Update, Delete []string
	Stages, Conditions     []string
	Skipped                []string
	Held                   []string
	// Recent are the names of status.recentRemovals.
	Recent []string
}

func summarize(p Plan) summary {
	revs := strings.NewReplacer(r1, "r1", r2, "r2")
	var s summary
	for _, r := range p.Create {
		s.Create = append(s.Create, revs.Replace(r.Name+"@"+r.Annotations[v1.AnnotationReleaseSetRevision]))
	}
	for _, r := range p.Update {
		s.Update = append(s.Update, revs.Replace(r.Name+"@"+r.Annotations[v1.AnnotationReleaseSetRevision]))
	}
	for _, r := range p.Delete {
		s.Delete = append(s.Delete, r.Name)
	}
	for _, st := range p.Status.Stages {
		s.Stages = append(s.Stages, fmt.Sprintf("%s %s %d/%d/%d", st.Name, st.Phase, st.Clusters, st.Updated, st.Ready))
	}
	for _, c := range p.Status.Conditions {
		s.Conditions = append(s.Conditions, fmt.Sprintf("%s=%s/%s", c.Type, c.Status, c.Reason))
	}
	for _, sk := range p.Status.Skipped {
		s.Skipped = append(s.Skipped, sk.Name+" "+sk.Reason)
	}
	s.Held = p.Status.HeldRemovals
	for _, r := range p.Status.RecentRemovals {
		s.Recent = append(s.Recent, r.Release)
	}
	return s
}

var (
	progressing = []string{"Ready=False/Progressing", "Progressing=True/Progressing", "Halted=False/NotHalted"}
	waitingApp  = []string{"Ready=False/WaitingForApproval", "Progressing=True/WaitingForApproval", "Halted=False/NotHalted"}
	complete    = []string{"Ready=True/RolloutComplete", "Progressing=False/RolloutComplete", "Halted=False/NotHalted"}
	halted      = []string{"Ready=False/ReleaseFailed", "Progressing=False/ReleaseFailed", "Halted=True/ReleaseFailed"}
)

func TestDecide(t *testing.T) {
	approvedR1 := approvals(v1.StageApproval{Stage: "rest", Revision: r1})
	approvedR2 := approvals(v1.StageApproval{Stage: "rest", Revision: r2})
	s1 := func(opts ...setOption) *v1.ReleaseSet {
		return testSet("web", append([]setOption{stages(canary(), manualRest())}, opts...)...)
	}
	s2 := func(opts ...setOption) *v1.ReleaseSet {
		return testSet("web", append([]setOption{stages(canary(), manualRest()), values(`{"replicas":2}`)}, opts...)...)
	}
	allReadyR1 := func(set *v1.ReleaseSet) []v1.Release {
		return []v1.Release{rel(set, "c1", from(setR1), ready()), rel(set, "c2", from(setR1), ready()),
			rel(set, "c3", from(setR1), ready()), rel(set, "c4", from(setR1), ready())}
	}
	cases := map[string]struct {
		set      *v1.ReleaseSet
		clusters []v1.Cluster
		nsLabels map[string]string
		releases func(set *v1.ReleaseSet) []v1.Release
		want     summary
	}{
		"the first revision starts with the first stage, maxParallel Releases at a time; later stages get nothing": {
			set: s1(), clusters: fleet,
			want: summary{Create: []string{"web-c1@r1"},
				Stages: []string{"canary Progressing 2/0/0", "rest Waiting 2/0/0"}, Conditions: progressing},
		},
		"inside a stage, the next Release is written once the one in flight is Ready": {
			set: s1(), clusters: fleet,
			releases: func(s *v1.ReleaseSet) []v1.Release { return []v1.Release{rel(s, "c1", ready())} },
			want: summary{Create: []string{"web-c2@r1"},
				Stages: []string{"canary Progressing 2/1/1", "rest Waiting 2/0/0"}, Conditions: progressing},
		},
		"inside a stage, no Release is written while maxParallel are updated and not Ready": {
			set: s1(), clusters: fleet,
			releases: func(s *v1.ReleaseSet) []v1.Release { return []v1.Release{rel(s, "c1", notReady())} },
			want:     summary{Stages: []string{"canary Progressing 2/1/0", "rest Waiting 2/0/0"}, Conditions: progressing},
		},
		"a Release whose status does not observe its generation is not Ready": {
			set: s1(), clusters: fleet,
			releases: func(s *v1.ReleaseSet) []v1.Release { return []v1.Release{rel(s, "c1", unobserved())} },
			want:     summary{Stages: []string{"canary Progressing 2/1/0", "rest Waiting 2/0/0"}, Conditions: progressing},
		},
		"a Manual stage whose earlier stages are Ready waits for approval": {
			set: s1(), clusters: fleet,
			releases: func(s *v1.ReleaseSet) []v1.Release {
				return []v1.Release{rel(s, "c1", ready()), rel(s, "c2", ready())}
			},
			want: summary{Stages: []string{"canary Complete 2/2/2", "rest WaitingForApproval 2/0/0"}, Conditions: waitingApp},
		},
		"an approval of another revision does not start a Manual stage": {
			set: s1(approvedR2), clusters: fleet,
			releases: func(s *v1.ReleaseSet) []v1.Release {
				return []v1.Release{rel(s, "c1", ready()), rel(s, "c2", ready())}
			},
			want: summary{Stages: []string{"canary Complete 2/2/2", "rest WaitingForApproval 2/0/0"}, Conditions: waitingApp},
		},
		"an approval of the stage at the revision starts it; without maxParallel every Release at once": {
			set: s1(approvedR1), clusters: fleet,
			releases: func(s *v1.ReleaseSet) []v1.Release {
				return []v1.Release{rel(s, "c1", ready()), rel(s, "c2", ready())}
			},
			want: summary{Create: []string{"web-c3@r1", "web-c4@r1"},
				Stages: []string{"canary Complete 2/2/2", "rest Progressing 2/0/0"}, Conditions: progressing},
		},
		"every Release Ready at the revision: Complete, Ready, and no write (steady state)": {
			set: s1(approvedR1), clusters: fleet,
			releases: func(s *v1.ReleaseSet) []v1.Release {
				return []v1.Release{rel(s, "c1", ready()), rel(s, "c2", ready()), rel(s, "c3", ready()), rel(s, "c4", ready())}
			},
			want: summary{Stages: []string{"canary Complete 2/2/2", "rest Complete 2/2/2"}, Conditions: complete},
		},
		"Releases with pin, mutations and sync annotations of their own are steady too": {
			set: s1(approvedR1), clusters: fleet,
			releases: func(s *v1.ReleaseSet) []v1.Release {
				return []v1.Release{rel(s, "c1", ready(), pinned()), rel(s, "c2", ready(), annotated(v1.AnnotationSyncRequestedAt, "2026-01-01T00:00:00Z")),
					rel(s, "c3", ready(), annotated("owner", "me")), rel(s, "c4", ready(), releaseValues(`{ "replicas" : 1 }`))}
			},
			want: summary{Stages: []string{"canary Complete 2/2/2", "rest Complete 2/2/2"}, Conditions: complete},
		},
		"a new revision rolls out stage by stage again: the first stage first, maxParallel at a time": {
			set: s2(approvedR1), clusters: fleet, releases: allReadyR1,
			want: summary{Update: []string{"web-c1@r2"},
				Stages: []string{"canary Progressing 2/0/0", "rest Waiting 2/0/0"}, Conditions: progressing},
		},
		"a new revision waits for a new approval of the Manual stage": {
			set: s2(approvedR1), clusters: fleet,
			releases: func(s *v1.ReleaseSet) []v1.Release {
				return []v1.Release{rel(s, "c1", ready()), rel(s, "c2", ready()),
					rel(s, "c3", from(setR1), ready()), rel(s, "c4", from(setR1), ready())}
			},
			want: summary{Stages: []string{"canary Complete 2/2/2", "rest WaitingForApproval 2/0/0"}, Conditions: waitingApp},
		},
		"a Release that failed at the revision halts the set: nothing more gets the revision": {
			set: s2(approvedR2), clusters: append(fleet, cluster("c0", ring("canary"))),
			releases: func(s *v1.ReleaseSet) []v1.Release {
				return []v1.Release{rel(s, "c1", rolledBack()), rel(s, "c2", from(setR1), ready()),
					rel(s, "c3", from(setR1), ready()), rel(s, "c4", from(setR1), ready())}
			},
			// c0, new in the canary stage, gets the revision its sibling c2 is at: not r2.
			want: summary{Create: []string{"web-c0@r1"},
				Stages: []string{"canary Halted 3/1/0", "rest Waiting 2/0/0"}, Conditions: halted},
		},
		"a rollout that ended RolledBack for an earlier render is no halt": {
			set: s2(), clusters: fleet,
			releases: func(s *v1.ReleaseSet) []v1.Release {
				return []v1.Release{rel(s, "c1", rolledBackEarlier()), rel(s, "c2", from(setR1), ready()),
					rel(s, "c3", from(setR1), ready()), rel(s, "c4", from(setR1), ready())}
			},
			want: summary{Stages: []string{"canary Progressing 2/1/0", "rest Waiting 2/0/0"}, Conditions: progressing},
		},
		"a new revision after a halt starts over": {
			set: testSet("web", stages(canary(), manualRest()), values(`{"replicas":3}`)), clusters: fleet,
			releases: func(s *v1.ReleaseSet) []v1.Release {
				return []v1.Release{rel(s, "c1", from(setR2), rolledBack()), rel(s, "c2", from(setR1), ready()),
					rel(s, "c3", from(setR1), ready()), rel(s, "c4", from(setR1), ready())}
			},
			want: summary{Update: []string{"web-c1@" + revisionOf(testSet("web", values(`{"replicas":3}`)))},
				Stages: []string{"canary Progressing 2/0/0", "rest Waiting 2/0/0"}, Conditions: progressing},
		},
		"a new Cluster of a stage that has not started gets its sibling's revision": {
			set: s2(), clusters: append(fleet, cluster("c5")), releases: allReadyR1,
			want: summary{Create: []string{"web-c5@r1"}, Update: []string{"web-c1@r2"},
				Stages: []string{"canary Progressing 2/0/0", "rest Waiting 3/0/0"}, Conditions: progressing},
		},
		"a new Cluster of a stage that has not started and has no sibling waits": {
			set: s1(), clusters: fleet,
			releases: func(s *v1.ReleaseSet) []v1.Release { return []v1.Release{rel(s, "c1", notReady())} },
			want:     summary{Stages: []string{"canary Progressing 2/1/0", "rest Waiting 2/0/0"}, Conditions: progressing},
		},
		"the Release of a Cluster that no longer matches, or is gone, is deleted": {
			set: s1(approvedR1, maxRemovals(intstr.FromString("50%"))), clusters: []v1.Cluster{cluster("c1", ring("canary")), cluster("c2", ring("canary")), cluster("c3", env("dev"))},
			releases: func(s *v1.ReleaseSet) []v1.Release {
				return []v1.Release{rel(s, "c1", ready()), rel(s, "c2", ready()), rel(s, "c3", ready()), rel(s, "c4", ready())}
			},
			want: summary{Delete: []string{"web-c3", "web-c4"}, Recent: []string{"web-c3", "web-c4"},
				Stages: []string{"canary Complete 2/2/2", "rest Complete 0/0/0"}, Conditions: complete},
		},
		"a Cluster that does not admit the namespace is skipped, with a reason, and loses its Release": {
			set: s1(approvedR1, maxRemovals(intstr.FromInt32(1))), nsLabels: map[string]string{"team": "a"},
			clusters: []v1.Cluster{cluster("c1", ring("canary")), cluster("c3", admitting(map[string]string{"team": "b"})), cluster("c4", admitting(map[string]string{"team": "a"}))},
			releases: func(s *v1.ReleaseSet) []v1.Release {
				return []v1.Release{rel(s, "c1", ready()), rel(s, "c3", ready()), rel(s, "c4", ready())}
			},
			want: summary{Delete: []string{"web-c3"}, Recent: []string{"web-c3"}, Skipped: []string{"c3 NamespaceNotAdmitted"},
				Stages: []string{"canary Complete 1/1/1", "rest Complete 1/1/1"}, Conditions: complete},
		},
		"a Release labelled with the set's name but controlled by another is left alone": {
			set: s1(), clusters: fleet[:1],
			releases: func(s *v1.ReleaseSet) []v1.Release {
				return []v1.Release{rel(s, "c1", ready()), rel(s, "c9", notOwned())}
			},
			want: summary{Stages: []string{"canary Complete 1/1/1", "rest Complete 0/0/0"}, Conditions: complete},
		},
		"a Release being deleted is neither written nor deleted again": {
			set: s1(), clusters: fleet[:1],
			releases: func(s *v1.ReleaseSet) []v1.Release {
				return []v1.Release{rel(s, "c1", from(setR2), deleting()), rel(s, "c9", deleting())}
			},
			want: summary{Stages: []string{"canary Progressing 1/0/0", "rest Waiting 0/0/0"}, Conditions: progressing},
		},
		"a Release at the revision whose spec was changed by hand is restored in a started stage": {
			set: s1(), clusters: fleet[:3],
			releases: func(s *v1.ReleaseSet) []v1.Release {
				return []v1.Release{rel(s, "c1", ready(), releaseValues(`{"replicas":9}`)), rel(s, "c2", ready()),
					rel(s, "c3", from(setR2), releaseValues(`{"replicas":9}`))}
			},
			// c3's stage has not started: it is left as it is.
			want: summary{Update: []string{"web-c1@r1"},
				Stages: []string{"canary Complete 2/2/2", "rest WaitingForApproval 1/0/0"}, Conditions: waitingApp},
		},
		"an empty selector selects no Cluster": {
			set: testSet("web", func(s *v1.ReleaseSet) { s.Spec.ClusterSelector = &metav1.LabelSelector{} }), clusters: fleet,
			want: summary{Stages: []string{"rest Complete 0/0/0"}, Conditions: complete},
		},
		"no stages: one stage rest with every Cluster, all at once": {
			set: testSet("web"), clusters: fleet,
			want: summary{Create: []string{"web-c1@r1", "web-c2@r1", "web-c3@r1", "web-c4@r1"},
				Stages: []string{"rest Progressing 4/0/0"}, Conditions: progressing},
		},
		"an invalid selector writes nothing and says so": {
			set: testSet("web", func(s *v1.ReleaseSet) {
				s.Spec.ClusterSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "env", Operator: "Near"}}}
			}),
			clusters: fleet,
			releases: func(s *v1.ReleaseSet) []v1.Release { return []v1.Release{rel(s, "c1", ready())} },
			want:     summary{Conditions: []string{"Ready=False/InvalidSpec", "Progressing=False/InvalidSpec", "Halted=False/NotHalted"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var releases []v1.Release
			if tc.releases != nil {
				releases = tc.releases(tc.set)
			}
			got := summarize(Decide(Input{Set: tc.set, NamespaceLabels: tc.nsLabels, Clusters: tc.clusters, Releases: releases}))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
		})
	}
}
