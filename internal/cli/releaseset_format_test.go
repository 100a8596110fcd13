package cli

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

const (
	revNew = "sha256:0123456789abcdef"
	revOld = "sha256:fedcba9876543210"
)

// testSet builds a ReleaseSet created two hours ago with a canary stage and a
// Manual stage rest; options change it.
func testSet(ns, name string, opts ...func(*v1.ReleaseSet)) *v1.ReleaseSet {
	one := intstr.FromInt32(1)
	s := &v1.ReleaseSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Generation: 2, CreationTimestamp: *at(2 * time.Hour)},
		Spec: v1.ReleaseSetSpec{
			ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}},
			Template: v1.ReleaseTemplate{Spec: v1.ReleaseSpec{Chart: v1.ChartSource{
				Repository: "https://charts.example.com", Name: "podinfo", Version: "6.7.1"}}},
			Strategy: v1.ReleaseSetStrategy{Stages: []v1.Stage{
				{Name: "canary", ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"ring": "canary"}}, MaxParallel: &one},
				{Name: "main", Approval: v1.ApprovalManual},
			}},
		},
	}
	s.Status.ObservedGeneration = 2
	s.Status.Revision = revNew
	for _, o := range opts {
		o(s)
	}
	return s
}

func stages(st ...v1.StageStatus) func(*v1.ReleaseSet) {
	return func(s *v1.ReleaseSet) { s.Status.Stages = st }
}

func stage(name string, phase v1.StagePhase, clusters, updated, ready int32) v1.StageStatus {
	return v1.StageStatus{Name: name, Phase: phase, Clusters: clusters, Updated: updated, Ready: ready}
}

func setCondition(typ string, status metav1.ConditionStatus, reason, msg string) func(*v1.ReleaseSet) {
	return func(s *v1.ReleaseSet) {
		s.Status.Conditions = append(s.Status.Conditions, metav1.Condition{
			Type: typ, Status: status, Reason: reason, Message: msg, LastTransitionTime: *at(3 * time.Minute)})
	}
}

// setRelease builds a Release that the set podinfo wrote for cluster, at revision.
func setRelease(cluster, revision string, opts ...func(*v1.Release)) v1.Release {
	r := testRelease("team-a", "podinfo-"+cluster, append([]func(*v1.Release){onCluster(cluster, 0)}, opts...)...)
	r.Labels = map[string]string{v1.LabelReleaseSet: "podinfo", v1.LabelCluster: cluster}
	r.Annotations = map[string]string{v1.AnnotationReleaseSetRevision: revision}
	return *r
}

func ready() func(*v1.Release) {
	return condition(v1.ConditionReady, metav1.ConditionTrue, v1.ReasonApplied, "", time.Minute)
}

func notReady(reason, msg string) func(*v1.Release) {
	return condition(v1.ConditionReady, metav1.ConditionFalse, reason, msg, time.Minute)
}

func TestFormatReleaseSetList(t *testing.T) {
	sets := []v1.ReleaseSet{
		*testSet("team-a", "podinfo", stages(stage("canary", v1.StageComplete, 1, 1, 1), stage("main", v1.StageWaitingForApproval, 2, 0, 0))),
		*testSet("team-a", "redis", stages(stage("canary", v1.StageHalted, 1, 1, 0), stage("main", v1.StageWaiting, 2, 0, 0))),
		*testSet("team-b", "done", stages(stage("rest", v1.StageComplete, 3, 3, 3))),
		*testSet("team-b", "new", func(s *v1.ReleaseSet) { s.Status = v1.ReleaseSetStatus{} }),
	}
	tests := map[string]struct {
		all  bool
		term Terminal
	}{
		"releaseset_list":       {},
		"releaseset_list_all":   {all: true},
		"releaseset_list_color": {term: Terminal{TTY: true, Color: true}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			golden(t, name, FormatReleaseSetList(sets, tc.all, now, tc.term))
		})
	}
	colored := FormatReleaseSetList(sets, false, now, Terminal{TTY: true, Color: true})
	if got, want := ansiSequence.ReplaceAllString(colored, ""), FormatReleaseSetList(sets, false, now, plain); got != want {
		t.Errorf("coloured table without its escape codes differs from the plain one:\n%s\nwant\n%s", got, want)
	}
}

func TestRolloutStage(t *testing.T) {
	tests := map[string]struct {
		stages    []v1.StageStatus
		wantName  string
		wantPhase v1.StagePhase
	}{
		"no status yet":              {},
		"the first stage progresses": {[]v1.StageStatus{stage("canary", v1.StageProgressing, 1, 1, 0), stage("main", v1.StageWaiting, 2, 0, 0)}, "canary", v1.StageProgressing},
		"the second waits to start":  {[]v1.StageStatus{stage("canary", v1.StageComplete, 1, 1, 1), stage("main", v1.StageWaitingForApproval, 2, 0, 0)}, "main", v1.StageWaitingForApproval},
		"a halted stage":             {[]v1.StageStatus{stage("canary", v1.StageComplete, 1, 1, 1), stage("eu", v1.StageHalted, 2, 1, 0), stage("us", v1.StageWaiting, 2, 0, 0)}, "eu", v1.StageHalted},
		"all complete":               {[]v1.StageStatus{stage("canary", v1.StageComplete, 1, 1, 1), stage("rest", v1.StageComplete, 2, 2, 2)}, "", v1.StageComplete},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			n, p := RolloutStage(v1.ReleaseSetStatus{Stages: tc.stages})
			if n != tc.wantName || p != tc.wantPhase {
				t.Errorf("RolloutStage = %q %q, want %q %q", n, p, tc.wantName, tc.wantPhase)
			}
		})
	}
}

// The state of a set's Release follows the contract: updated is the revision
// annotation; Ready at it also needs the generation observed; failed is a Failed or
// RolledBack rollout of the current render.
func TestSetReleaseState(t *testing.T) {
	failedRollout := func(phase v1.RolloutPhase, ref string) func(*v1.Release) {
		return func(r *v1.Release) {
			r.Status.Render = &v1.RenderStatus{Ref: refB}
			r.Status.Rollout = &v1.RolloutStatus{Phase: phase, RenderRef: ref}
		}
	}
	tests := map[string]struct {
		r    v1.Release
		want string
	}{
		"an earlier revision":              {setRelease("dev-1", revOld, ready()), "Outdated"},
		"no revision annotation":           {setRelease("dev-1", "", ready()), "Outdated"},
		"updated, Ready":                   {setRelease("dev-1", revNew, ready()), "Ready"},
		"updated, not Ready":               {setRelease("dev-1", revNew, notReady(v1.ReasonWaitingForSync, "")), "Updating"},
		"updated, not observed":            {setRelease("dev-1", revNew, ready(), func(r *v1.Release) { r.Generation = 3 }), "Updating"},
		"rollout failed":                   {setRelease("dev-1", revNew, failedRollout(v1.RolloutFailed, refB)), "Failed"},
		"rolled back":                      {setRelease("dev-1", revNew, failedRollout(v1.RolloutRolledBack, refB)), "Failed"},
		"failed rollout of another render": {setRelease("dev-1", revNew, ready(), failedRollout(v1.RolloutFailed, refA)), "Ready"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := SetReleaseState(&tc.r, revNew); got != tc.want {
				t.Errorf("SetReleaseState = %q, want %q", got, tc.want)
			}
		})
	}
}

func statusSet() (*v1.ReleaseSet, []v1.Release) {
	s := testSet("team-a", "podinfo",
		setCondition(v1.ConditionReady, metav1.ConditionFalse, "Progressing", "1 of 3 Releases Ready at the revision."),
		setCondition(v1.ConditionProgressing, metav1.ConditionTrue, "WaitingForApproval", "Stage main waits for approval."),
		setCondition(v1.ConditionHalted, metav1.ConditionFalse, "NotHalted", ""),
		stages(stage("canary", v1.StageComplete, 1, 1, 1), stage("main", v1.StageWaitingForApproval, 2, 0, 0)),
		func(s *v1.ReleaseSet) {
			s.Status.Skipped = []v1.SkippedCluster{{Name: "prod-cn", Reason: v1.ReasonNamespaceNotAdmitted,
				Message: "The namespaceSelector of Cluster prod-cn does not admit namespace team-a."}}
		})
	releases := []v1.Release{
		setRelease("dev-1", revNew, ready(), rollout(v1.RolloutSucceeded, refB, refA, "")),
		setRelease("dev-2", revOld, ready()),
		setRelease("dev-3", revOld, notReady(v1.ReasonWaitingForSync, "The render differs from what was applied; waiting for /sync.")),
	}
	return s, releases
}

func TestFormatReleaseSetStatus(t *testing.T) {
	approved := func(s *v1.ReleaseSet) {
		s.Approvals = []v1.StageApproval{
			{Stage: "main", Revision: revOld, ApprovedAt: at(time.Hour), ApprovedBy: "bob"},
			{Stage: "main", Revision: revNew, ApprovedAt: at(time.Minute), ApprovedBy: "alice"},
		}
		s.Status.Stages[1] = stage("main", v1.StageProgressing, 2, 1, 0)
	}
	halted, _ := statusSet()
	halted.Status.Conditions[2] = metav1.Condition{Type: v1.ConditionHalted, Status: metav1.ConditionTrue, Reason: v1.ReasonReleaseFailed,
		Message: "Release podinfo-dev-1 ended its rollout RolledBack: not healthy within 5m.", LastTransitionTime: *at(time.Minute)}
	halted.Status.Stages[0] = stage("canary", v1.StageHalted, 1, 1, 0)
	halted.Status.Stages[1] = stage("main", v1.StageWaiting, 2, 0, 0)
	halted.Status.Conditions[1] = metav1.Condition{Type: v1.ConditionProgressing, Status: metav1.ConditionFalse, Reason: v1.ReasonReleaseFailed,
		Message: "The rollout is halted.", LastTransitionTime: *at(time.Minute)}
	haltedReleases := []v1.Release{setRelease("dev-1", revNew, notReady(v1.ReasonRolledBack, "Rolled back to 4f1c2d3e4f."),
		func(r *v1.Release) {
			r.Status.Render = &v1.RenderStatus{Ref: refB}
			r.Status.Rollout = &v1.RolloutStatus{Phase: v1.RolloutRolledBack, RenderRef: refB, Message: "Not healthy in 5m; rolled back."}
		})}
	massRemoval, _ := statusSet()
	msg := "2 of the 3 Releases would be deleted at once (Clusters no longer selected or gone: dev-2, dev-3), more than " +
		"spec.strategy.maxRemovals 25% (default) allows (1): nothing is deleted, created or updated."
	massRemoval.Status.HeldRemovals = []string{"podinfo-dev-2", "podinfo-dev-3"}
	for i, typ := range []string{v1.ConditionReady, v1.ConditionProgressing, v1.ConditionHalted} {
		massRemoval.Status.Conditions[i] = metav1.Condition{Type: typ, Status: metav1.ConditionFalse, Reason: v1.ReasonMassRemoval,
			Message: msg, LastTransitionTime: *at(time.Minute)}
	}
	massRemoval.Status.Conditions[2].Status = metav1.ConditionTrue
	pausedSet, _ := statusSet()
	pausedSet.Spec.Paused = true
	pausedSet.Status.Conditions[1] = metav1.Condition{Type: v1.ConditionProgressing, Status: metav1.ConditionFalse, Reason: v1.ReasonPaused,
		Message: "The ReleaseSet is paused (spec.paused).", LastTransitionTime: *at(time.Minute)}
	waiting, releases := statusSet()
	approvedSet, _ := statusSet()
	approved(approvedSet)
	forbidden := &RequestError{Verb: "list", Resource: v1.ResourceReleases, Namespace: "team-a",
		Err: apierrors.NewForbidden(schema.GroupResource{Group: v1.GroupName, Resource: v1.ResourceReleases}, "", errors.New("no"))}
	tests := map[string]struct {
		s        *v1.ReleaseSet
		releases []v1.Release
		err      error
	}{
		"releaseset_status_releases_forbidden": {s: waiting, err: forbidden},
		"releaseset_status":                    {s: waiting, releases: releases},
		"releaseset_status_approved":           {s: approvedSet, releases: releases},
		"releaseset_status_halted":             {s: halted, releases: haltedReleases},
		"releaseset_status_mass_removal":       {s: massRemoval, releases: releases},
		"releaseset_status_paused":             {s: pausedSet, releases: releases},
		"releaseset_status_new": {s: testSet("team-a", "new", func(s *v1.ReleaseSet) {
			s.Status = v1.ReleaseSetStatus{}
			s.Spec.ClusterSelector = nil
		})},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			golden(t, name, FormatReleaseSetStatus(tc.s, tc.releases, tc.err, now, plain))
		})
	}
	if out := FormatReleaseSetStatus(waiting, releases, nil, now, Terminal{TTY: true}); strings.Contains(out, "\x1b") {
		t.Errorf("status has escape codes without colour:\n%q", out)
	}
}

func TestPromotedLine(t *testing.T) {
	tests := map[string]struct {
		approvals []v1.StageApproval
		ack       *v1.RemovalAcknowledgement
		held      []string
		want      string
	}{
		"the acknowledgement of a held removal": {
			approvals: []v1.StageApproval{{Stage: "us", Revision: revNew, ApprovedBy: "alice"}},
			ack:       &v1.RemovalAcknowledgement{Releases: []string{"podinfo-dev-2", "podinfo-dev-3"}, AcknowledgedBy: "bob"},
			held:      []string{"podinfo-dev-2", "podinfo-dev-3"},
			want:      "releaseset.convoy.kumodo.io/podinfo promoted: removal of 2 Releases acknowledged by bob (podinfo-dev-2, podinfo-dev-3)",
		},
		"an earlier acknowledgement, nothing held: the approval": {
			approvals: []v1.StageApproval{{Stage: "us", Revision: revNew, ApprovedBy: "alice"}},
			ack:       &v1.RemovalAcknowledgement{Releases: []string{"podinfo-dev-2"}, AcknowledgedBy: "bob"},
			want:      "releaseset.convoy.kumodo.io/podinfo promoted: stage us approved at revision 0123456789 by alice",
		},
		"the approval of the revision": {
			approvals: []v1.StageApproval{{Stage: "eu", Revision: revNew, ApprovedBy: "bob"}, {Stage: "us", Revision: revNew, ApprovedBy: "alice"}},
			want:      "releaseset.convoy.kumodo.io/podinfo promoted: stage us approved at revision 0123456789 by alice",
		},
		"approvals of another revision only": {
			approvals: []v1.StageApproval{{Stage: "us", Revision: revOld}},
			want:      "releaseset.convoy.kumodo.io/podinfo promoted",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			s := testSet("team-a", "podinfo", func(s *v1.ReleaseSet) {
				s.Approvals, s.RemovalAcknowledgement, s.Status.HeldRemovals = tc.approvals, tc.ack, tc.held
			})
			if diff := cmp.Diff(tc.want, PromotedLine(s)); diff != "" {
				t.Errorf("PromotedLine (-want +got):\n%s", diff)
			}
		})
	}
}
