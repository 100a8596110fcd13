package releaseset

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// A created Release is the template with the set's labels, the revision annotation,
// the controller reference and spec.cluster, in the set's namespace; the set's shard
// label is copied when the template has none.
func TestACreatedReleaseIsTheTemplateForItsCluster(t *testing.T) {
	set := testSet("web", func(s *v1.ReleaseSet) {
		s.Spec.Template.Metadata.Annotations = map[string]string{"note": "hi"}
		s.Labels = map[string]string{v1.LabelShard: "a"}
	})
	p := Decide(Input{Set: set, Clusters: []v1.Cluster{cluster("prod-1")}})
	if len(p.Create) != 1 {
		t.Fatalf("plan creates %d Releases, want 1", len(p.Create))
	}
	got := p.Create[0]
	want := &v1.Release{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "team-a", Name: "web-prod-1",
			Labels:      map[string]string{"team": "a", v1.LabelReleaseSet: "web", v1.LabelCluster: "prod-1", v1.LabelShard: "a"},
			Annotations: map[string]string{"note": "hi", v1.AnnotationReleaseSetRevision: revisionOf(set)},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "convoy.kumodo.io/v1alpha1", Kind: "ReleaseSet", Name: "web",
				UID: "uid-web", Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}},
		},
		Spec: v1.ReleaseSpec{
			Cluster:        "prod-1",
			Chart:          v1.ChartSource{Repository: "https://charts.example.com", Name: "podinfo"},
			Values:         &runtime.RawExtension{Raw: []byte(`{"replicas":1}`)},
			Prune:          ptr.To(true),
			DeletionPolicy: v1.DeletionPolicyDelete,
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("created Release (-want +got):\n%s", diff)
	}
}

// An updated Release gets the template's spec and the set's labels and annotations;
// what the set does not own stays: pin, mutations, lifecycle, the sync annotations,
// other labels, annotations and owners.
func TestAnUpdateChangesOnlyWhatTheSetOwns(t *testing.T) {
	old := rel(setR2, "c1", from(setR1), ready(), pinned(), annotated(v1.AnnotationSyncRequestedAt, "2026-01-01T00:00:00Z"),
		func(r *v1.Release) {
			r.Labels["extra"] = "kept"
			r.Mutations = []v1.Mutation{{}}
			r.Lifecycle = &v1.Lifecycle{}
			r.OwnerReferences = append(r.OwnerReferences, metav1.OwnerReference{Kind: "Other", Name: "o", UID: "o"})
		})
	p := Decide(Input{Set: setR2, Clusters: fleet[:1], Releases: []v1.Release{old}})
	if len(p.Update) != 1 {
		t.Fatalf("plan updates %d Releases, want 1", len(p.Update))
	}
	got := p.Update[0]
	want := old.DeepCopy()
	want.Spec.Values = setR2.Spec.Template.Spec.Values
	want.Annotations[v1.AnnotationReleaseSetRevision] = r2
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("updated Release (-want +got):\n%s", diff)
	}
}

// A new Cluster of a stage that has not started gets a copy of its sibling's
// Release: spec and revision, its own cluster, no sync request of the sibling's.
func TestANewClusterOfAWaitingStageCopiesItsSibling(t *testing.T) {
	sib := rel(setR2, "c3", from(setR1), ready(), annotated(v1.AnnotationSyncRequestedAt, "2026-01-01T00:00:00Z"),
		annotated(v1.AnnotationSyncForceRequestedAt, "2026-01-01T00:00:00Z"),
		annotated(v1.AnnotationSyncRequestedRender, "sha256:"+strings.Repeat("ab", 32)))
	p := Decide(Input{Set: setR2, Clusters: []v1.Cluster{cluster("c1", ring("canary")), cluster("c3"), cluster("c5")},
		Releases: []v1.Release{rel(setR2, "c1", notReady()), sib}})
	if len(p.Create) != 1 {
		t.Fatalf("plan creates %d Releases, want 1", len(p.Create))
	}
	got := p.Create[0]
	want := rel(setR1, "c5")
	want.Generation = 0
	if diff := cmp.Diff(&want, got); diff != "" {
		t.Errorf("created Release (-want +got):\n%s", diff)
	}
}

func TestTransitions(t *testing.T) {
	stage := func(name string, phase v1.StagePhase) v1.StageStatus {
		return v1.StageStatus{Name: name, Phase: phase, Clusters: 2, Updated: 2, Ready: 2}
	}
	haltedBy := func(msg string) []metav1.Condition {
		return []metav1.Condition{{Type: v1.ConditionHalted, Status: metav1.ConditionTrue, Reason: v1.ReasonReleaseFailed, Message: msg}}
	}
	st := func(rev string, conds []metav1.Condition, stages ...v1.StageStatus) v1.ReleaseSetStatus {
		return v1.ReleaseSetStatus{Revision: rev, Stages: stages, Conditions: conds}
	}
	cases := map[string]struct {
		old, new v1.ReleaseSetStatus
		want     []string
	}{
		"the same status: no event": {
			old:  st("r1", nil, stage("canary", v1.StageProgressing), stage("rest", v1.StageWaiting)),
			new:  st("r1", nil, stage("canary", v1.StageProgressing), stage("rest", v1.StageWaiting)),
			want: nil,
		},
		"a stage starts": {
			old:  st("r1", nil, stage("canary", v1.StageComplete), stage("rest", v1.StageWaitingForApproval)),
			new:  st("r1", nil, stage("canary", v1.StageComplete), stage("rest", v1.StageProgressing)),
			want: []string{"Normal StageStarted"},
		},
		"a stage completes": {
			old:  st("r1", nil, stage("canary", v1.StageProgressing), stage("rest", v1.StageWaiting)),
			new:  st("r1", nil, stage("canary", v1.StageComplete), stage("rest", v1.StageWaitingForApproval)),
			want: []string{"Normal StageComplete"},
		},
		"a new revision starts the first stage again": {
			old:  st("r1", nil, stage("canary", v1.StageComplete), stage("rest", v1.StageComplete)),
			new:  st("r2", nil, stage("canary", v1.StageProgressing), stage("rest", v1.StageWaiting)),
			want: []string{"Normal StageStarted"},
		},
		"a halt": {
			old:  st("r1", nil, stage("canary", v1.StageProgressing)),
			new:  st("r1", haltedBy("web-c1 failed"), stage("canary", v1.StageHalted)),
			want: []string{"Warning Halted"},
		},
		"a deadline halt": {
			old: st("r1", nil, stage("canary", v1.StageProgressing)),
			new: st("r1", []metav1.Condition{{Type: v1.ConditionHalted, Status: metav1.ConditionTrue, Reason: v1.ReasonStageDeadlineExceeded,
				Message: "Stage canary did not complete within its progressDeadline"}}, stage("canary", v1.StageHalted)),
			want: []string{"Warning Halted"},
		},
		"the same halt: no event": {
			old:  st("r1", haltedBy("web-c1 failed"), stage("canary", v1.StageHalted)),
			new:  st("r1", haltedBy("web-c1 failed"), stage("canary", v1.StageHalted)),
			want: nil,
		},
	}
	for name, tc := range cases {
		var got []string
		for _, e := range Transitions(tc.old, tc.new) {
			got = append(got, e.Type+" "+e.Reason)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s: events (-want +got):\n%s", name, diff)
		}
	}
}

// The plan's status keeps a condition's lastTransitionTime while its status holds.
func TestConditionsKeepTheirTransitionTime(t *testing.T) {
	then, now := metav1.Unix(1000, 0), metav1.Unix(2000, 0)
	set := setR1.DeepCopy()
	first := Decide(Input{Set: set, Clusters: fleet, Now: then})
	set.Status = first.Status
	second := Decide(Input{Set: set, Clusters: fleet, Releases: []v1.Release{rel(set, "c1", ready())}, Now: now})
	for _, c := range second.Status.Conditions {
		if !c.LastTransitionTime.Equal(&then) {
			t.Errorf("condition %s: lastTransitionTime %v, want %v (its status did not change)", c.Type, c.LastTransitionTime, then)
		}
	}
}
