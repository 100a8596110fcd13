package cli

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
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
			golden(t, name, FormatReleaseSetStatus(tc.s, SetStatusView{Releases: tc.releases, ReleasesErr: tc.err}, now, plain))
		})
	}
	if out := FormatReleaseSetStatus(waiting, SetStatusView{Releases: releases}, now, Terminal{TTY: true}); strings.Contains(out, "\x1b") {
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

// round2Set is a set with what round two added: a resolved source, stages with
// maxUnavailable, bakeTime and progressDeadline and their status, and
// clusterOverrides; with the Clusters (their labels pick the overrides) and the
// Releases.
func round2Set() (*v1.ReleaseSet, SetStatusView) {
	two, half := intstr.FromInt32(2), intstr.FromString("50%")
	s := testSet("team-a", "podinfo",
		setCondition(v1.ConditionReady, metav1.ConditionFalse, "Progressing", "2 of 4 Releases Ready at the revision."),
		setCondition(v1.ConditionProgressing, metav1.ConditionTrue, "Progressing", "Stage main is rolling out the revision."),
		setCondition(v1.ConditionHalted, metav1.ConditionFalse, "NotHalted", ""),
		func(s *v1.ReleaseSet) {
			s.Spec.Strategy.Stages[0].BakeTime = &metav1.Duration{Duration: 10 * time.Minute}
			s.Spec.Strategy.Stages[0].MaxUnavailable = &two
			s.Spec.Strategy.Stages[1].Approval = ""
			s.Spec.Strategy.Stages[1].MaxUnavailable = &half
			s.Spec.Strategy.Stages[1].BakeTime = &metav1.Duration{Duration: 5 * time.Minute}
			s.Spec.Strategy.Stages[1].ProgressDeadline = &metav1.Duration{Duration: 15 * time.Minute}
			s.Spec.ClusterOverrides = []v1.ClusterOverride{
				{ClusterSelector: &metav1.LabelSelector{}, Values: raw(`{"cluster":"$(cluster.name)","region":"$(cluster.labels['region'])"}`)},
				{ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"ring": "main"}}, Values: raw(`{"replicas":3,"ingress":{"host":"$(cluster.name).example.com"}}`)},
				{ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"size": "large"}}, Values: raw(`{"replicas":6,"ingress":{"class":"big"}}`)},
			}
			s.Status.Source = &v1.ReleaseSetSource{ChartVersion: "6.7.1", ValuesDigest: "sha256:4f1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e"}
			s.Status.Stages = []v1.StageStatus{
				{Name: "canary", Phase: v1.StageComplete, Clusters: 1, Updated: 1, Ready: 1, StartedAt: at(40 * time.Minute), CompletedAt: at(25 * time.Minute)},
				{Name: "main", Phase: v1.StageProgressing, Clusters: 3, Updated: 2, Ready: 1, Unavailable: 1, Baking: 1,
					StartedAt: metav1NewTime(now.Add(-11*time.Minute - 48*time.Second))},
			}
		})
	view := SetStatusView{
		Clusters: []v1.Cluster{
			cluster("dev-1", map[string]string{"ring": "canary", "region": "eu-west-1"}),
			cluster("dev-2", map[string]string{"ring": "main", "region": "us-east-1", "size": "large"}),
			cluster("dev-3", map[string]string{"ring": "main"}),
		},
		Releases: []v1.Release{
			setRelease("dev-1", revNew, ready()),
			setRelease("dev-2", revNew, ready()),
			setRelease("dev-3", revNew, notReady(v1.ReasonProgressing, "Waiting for 2 Deployments to be ready.")),
			setRelease("gone", revOld, ready()),
		},
	}
	return s, view
}

func raw(s string) *runtime.RawExtension { return &runtime.RawExtension{Raw: []byte(s)} }

func metav1NewTime(t time.Time) *metav1.Time { m := metav1.NewTime(t); return &m }

func cluster(name string, labels map[string]string) v1.Cluster {
	return v1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
}

// releaseset status shows round two's fields: the source beside the revision; per
// stage the unavailable and baking Releases against maxUnavailable and bakeTime and
// when it started, with its deadline; per Release the overrides that select its
// Cluster (and, with --show-values, their values for it); and why a set halted at a
// deadline, with what to do.
func TestFormatReleaseSetStatusRound2(t *testing.T) {
	progressing, view := round2Set()
	deadline, _ := round2Set()
	deadline.Status.Stages[1].Phase = v1.StageHalted
	deadline.Status.Stages[1].StartedAt = at(20 * time.Minute)
	deadline.Status.Conditions[1] = metav1.Condition{Type: v1.ConditionProgressing, Status: metav1.ConditionFalse, Reason: v1.ReasonStageDeadlineExceeded,
		Message: "The rollout is halted.", LastTransitionTime: *at(5 * time.Minute)}
	deadline.Status.Conditions[2] = metav1.Condition{Type: v1.ConditionHalted, Status: metav1.ConditionTrue, Reason: v1.ReasonStageDeadlineExceeded,
		Message: "Stage main did not complete within its progressDeadline 15m: podinfo-dev-3 is not Ready (Progressing).", LastTransitionTime: *at(5 * time.Minute)}
	forbidden := &RequestError{Verb: "list", Resource: v1.ResourceClusters,
		Err: apierrors.NewForbidden(schema.GroupResource{Group: v1.GroupName, Resource: v1.ResourceClusters}, "", errors.New("no"))}
	tests := map[string]struct {
		s    *v1.ReleaseSet
		view SetStatusView
	}{
		"releaseset_status_round2":                    {progressing, view},
		"releaseset_status_round2_show_values":        {progressing, SetStatusView{Releases: view.Releases, Clusters: view.Clusters, ShowValues: true}},
		"releaseset_status_round2_clusters_forbidden": {progressing, SetStatusView{Releases: view.Releases, ClustersErr: forbidden, ShowValues: true}},
		"releaseset_status_deadline_exceeded":         {deadline, view},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			golden(t, name, FormatReleaseSetStatus(tc.s, tc.view, now, plain))
		})
	}
}

func TestStageTiming(t *testing.T) {
	fifteen := &metav1.Duration{Duration: 15 * time.Minute}
	tests := map[string]struct {
		st       v1.StageStatus
		deadline *metav1.Duration
		want     string
	}{
		"not started":                 {v1.StageStatus{}, fifteen, "-"},
		"started, no deadline":        {v1.StageStatus{StartedAt: at(5 * time.Minute)}, nil, "5m ago"},
		"started, deadline to come":   {v1.StageStatus{StartedAt: metav1NewTime(now.Add(-11*time.Minute - 48*time.Second))}, fifteen, "11m ago, deadline in 3m12s"},
		"deadline in under a second":  {v1.StageStatus{StartedAt: metav1NewTime(now.Add(-15*time.Minute + time.Millisecond))}, fifteen, "14m ago, deadline in 1s"},
		"deadline exactly now":        {v1.StageStatus{StartedAt: at(15 * time.Minute)}, fifteen, "15m ago, deadline passed"},
		"deadline passed":             {v1.StageStatus{StartedAt: at(20 * time.Minute)}, fifteen, "20m ago, deadline passed"},
		"hours left":                  {v1.StageStatus{StartedAt: at(time.Minute)}, &metav1.Duration{Duration: 2 * time.Hour}, "60s ago, deadline in 1h59m"},
		"completed: no deadline then": {v1.StageStatus{StartedAt: at(40 * time.Minute), CompletedAt: at(25 * time.Minute)}, fifteen, "40m ago, completed 25m ago"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := StageTiming(tc.st, tc.deadline, now); got != tc.want {
				t.Errorf("StageTiming = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestOverrides(t *testing.T) {
	set, _ := round2Set()
	set.Spec.ClusterOverrides = append(set.Spec.ClusterOverrides,
		v1.ClusterOverride{ClusterSelector: nil, Values: raw(`{"never":true}`)},
		v1.ClusterOverride{ClusterSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "region", Operator: metav1.LabelSelectorOpDoesNotExist}}},
			Values: raw(`{"region":null,"tags":["$(cluster.name)","$(cluster.labels['ring'])-$(cluster.labels['none'])",1]}`)})
	tests := map[string]struct {
		labels     map[string]string
		wantIdx    []int
		wantValues map[string]any
	}{
		"canary in eu": {
			labels: map[string]string{"ring": "canary", "region": "eu-west-1"}, wantIdx: []int{0},
			wantValues: map[string]any{"cluster": "c", "region": "eu-west-1"},
		},
		"main, large: later overrides win, maps merge": {
			labels: map[string]string{"ring": "main", "region": "us", "size": "large"}, wantIdx: []int{0, 1, 2},
			wantValues: map[string]any{"cluster": "c", "region": "us", "replicas": float64(6),
				"ingress": map[string]any{"host": "c.example.com", "class": "big"}},
		},
		"no region label: empty, then null from a later override; lists replaced per element": {
			labels: map[string]string{"ring": "main"}, wantIdx: []int{0, 1, 4},
			wantValues: map[string]any{"cluster": "c", "region": nil, "replicas": float64(3),
				"ingress": map[string]any{"host": "c.example.com"}, "tags": []any{"c", "main-", float64(1)}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			idx, err := OverridesFor(set, tc.labels)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantIdx, idx); diff != "" {
				t.Errorf("OverridesFor (-want +got):\n%s", diff)
			}
			vals, err := OverrideValues(set, idx, "c", tc.labels)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantValues, vals); diff != "" {
				t.Errorf("OverrideValues (-want +got):\n%s", diff)
			}
		})
	}
}
