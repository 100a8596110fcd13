package releaseset

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
)

func stage(name string, phase convoyv1alpha1.StagePhase) convoyv1alpha1.StageStatus {
	return convoyv1alpha1.StageStatus{Name: name, Phase: phase, Clusters: 1}
}

func approval(stage, revision, by string, at metav1.Time) convoyv1alpha1.StageApproval {
	return convoyv1alpha1.StageApproval{Stage: stage, Revision: revision, ApprovedBy: by, ApprovedAt: &at}
}

func TestPromote(t *testing.T) {
	now := metav1.NewTime(time.Date(2026, 12, 6, 8, 0, 0, 0, time.UTC))
	before := metav1.NewTime(now.Add(-time.Hour))
	halted := metav1.Condition{Type: convoyv1alpha1.ConditionHalted, Status: metav1.ConditionTrue,
		Reason: convoyv1alpha1.ReasonReleaseFailed, Message: "Release podinfo-dev-1 RolledBack"}
	massRemoval := metav1.Condition{Type: convoyv1alpha1.ConditionHalted, Status: metav1.ConditionTrue,
		Reason: convoyv1alpha1.ReasonMassRemoval, Message: "2 of the 3 Releases would be deleted at once"}
	cases := map[string]struct {
		generation int64
		status     convoyv1alpha1.ReleaseSetStatus
		approvals  []convoyv1alpha1.StageApproval
		ack        *convoyv1alpha1.RemovalAcknowledgement
		want       []convoyv1alpha1.StageApproval
		wantAck    *convoyv1alpha1.RemovalAcknowledgement
		err        string // a part of the error; "" when promoted
	}{
		"acknowledges the held removals, and approves nothing else": {
			status: convoyv1alpha1.ReleaseSetStatus{Conditions: []metav1.Condition{massRemoval}, HeldRemovals: []string{"podinfo-dev-2", "podinfo-dev-3"},
				Stages: []convoyv1alpha1.StageStatus{stage("rest", convoyv1alpha1.StageWaitingForApproval)}},
			wantAck: &convoyv1alpha1.RemovalAcknowledgement{Releases: []string{"podinfo-dev-2", "podinfo-dev-3"}, AcknowledgedAt: &now, AcknowledgedBy: "alice"},
		},
		"a new acknowledgement replaces the earlier one": {
			status:  convoyv1alpha1.ReleaseSetStatus{Conditions: []metav1.Condition{massRemoval}, HeldRemovals: []string{"podinfo-dev-3"}},
			ack:     &convoyv1alpha1.RemovalAcknowledgement{Releases: []string{"podinfo-dev-1"}, AcknowledgedAt: &before, AcknowledgedBy: "bob"},
			wantAck: &convoyv1alpha1.RemovalAcknowledgement{Releases: []string{"podinfo-dev-3"}, AcknowledgedAt: &now, AcknowledgedBy: "alice"},
		},
		"held removals of a status of an older generation are not acknowledged": {
			generation: 4,
			status:     convoyv1alpha1.ReleaseSetStatus{Conditions: []metav1.Condition{massRemoval}, HeldRemovals: []string{"podinfo-dev-3"}},
			err:        "the controller has not observed generation 4",
		},
		"approves the waiting stage": {
			status: convoyv1alpha1.ReleaseSetStatus{Stages: []convoyv1alpha1.StageStatus{
				stage("canary", convoyv1alpha1.StageComplete), stage("rest", convoyv1alpha1.StageWaitingForApproval)}},
			want: []convoyv1alpha1.StageApproval{approval("rest", revision, "alice", now)},
		},
		"drops the approvals of other revisions, keeps this revision's": {
			status: convoyv1alpha1.ReleaseSetStatus{Stages: []convoyv1alpha1.StageStatus{
				stage("canary", convoyv1alpha1.StageComplete), stage("eu", convoyv1alpha1.StageComplete),
				stage("rest", convoyv1alpha1.StageWaitingForApproval)}},
			approvals: []convoyv1alpha1.StageApproval{approval("rest", "sha256:old", "bob", before), approval("eu", revision, "bob", before)},
			want:      []convoyv1alpha1.StageApproval{approval("eu", revision, "bob", before), approval("rest", revision, "alice", now)},
		},
		"a second approval of the stage replaces the first": {
			status:    convoyv1alpha1.ReleaseSetStatus{Stages: []convoyv1alpha1.StageStatus{stage("rest", convoyv1alpha1.StageWaitingForApproval)}},
			approvals: []convoyv1alpha1.StageApproval{approval("rest", revision, "bob", before)},
			want:      []convoyv1alpha1.StageApproval{approval("rest", revision, "alice", now)},
		},
		"no stage waits": {
			status: convoyv1alpha1.ReleaseSetStatus{Stages: []convoyv1alpha1.StageStatus{
				stage("canary", convoyv1alpha1.StageProgressing), stage("rest", convoyv1alpha1.StageWaiting)}},
			err: "no stage waits for approval (stages: canary Progressing, rest Waiting)",
		},
		"no stages yet": {err: "no stage waits for approval (the status lists no stages)"},
		"halted": {
			status: convoyv1alpha1.ReleaseSetStatus{Conditions: []metav1.Condition{halted}, Stages: []convoyv1alpha1.StageStatus{
				stage("canary", convoyv1alpha1.StageHalted), stage("rest", convoyv1alpha1.StageWaitingForApproval)}},
			err: "halted (Release podinfo-dev-1 RolledBack): promote does not override a halt",
		},
		"status of an older generation": {
			generation: 4,
			status:     convoyv1alpha1.ReleaseSetStatus{Stages: []convoyv1alpha1.StageStatus{stage("rest", convoyv1alpha1.StageWaitingForApproval)}},
			err:        "the controller has not observed generation 4",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := &convoyv1alpha1.ReleaseSet{ObjectMeta: metav1.ObjectMeta{Name: "podinfo", Generation: 3}, Approvals: tc.approvals,
				RemovalAcknowledgement: tc.ack, Status: tc.status}
			if tc.generation != 0 {
				s.Generation = tc.generation
			}
			s.Status.ObservedGeneration, s.Status.Revision = 3, revision
			err := Promote(s, "alice", now)
			switch {
			case tc.err == "" && err != nil:
				t.Fatalf("Promote: %v", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Fatalf("Promote: %v, want an error with %q", err, tc.err)
			case tc.err != "":
				if diff := cmp.Diff(tc.approvals, s.Approvals); diff != "" {
					t.Errorf("a refused promote changed approvals (-before +after):\n%s", diff)
				}
				if diff := cmp.Diff(tc.ack, s.RemovalAcknowledgement); diff != "" {
					t.Errorf("a refused promote changed the removal acknowledgement (-before +after):\n%s", diff)
				}
				return
			}
			if diff := cmp.Diff(tc.want, s.Approvals); diff != "" {
				t.Errorf("approvals (-want +got):\n%s", diff)
			}
			wantAck := tc.wantAck
			if wantAck == nil {
				wantAck = tc.ack
			}
			if diff := cmp.Diff(wantAck, s.RemovalAcknowledgement); diff != "" {
				t.Errorf("removal acknowledgement (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStageCell(t *testing.T) {
	cases := map[string]struct {
		stages []convoyv1alpha1.StageStatus
		want   string
	}{
		"no stages yet": {want: ""},
		"first not Complete": {stages: []convoyv1alpha1.StageStatus{stage("canary", convoyv1alpha1.StageComplete),
			stage("rest", convoyv1alpha1.StageWaitingForApproval)}, want: "rest (WaitingForApproval)"},
		"all Complete": {stages: []convoyv1alpha1.StageStatus{stage("canary", convoyv1alpha1.StageComplete),
			stage("rest", convoyv1alpha1.StageComplete)}, want: "Complete"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := StageCell(tc.stages); got != tc.want {
				t.Errorf("StageCell = %q, want %q", got, tc.want)
			}
		})
	}
}
