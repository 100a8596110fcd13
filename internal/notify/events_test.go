package notify

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

const (
	refA = "sha256:aaaaaaaaaa0000000000000000000000000000000000000000000000000000aa"
	refB = "sha256:bbbbbbbbbb0000000000000000000000000000000000000000000000000000bb"
)

var (
	t0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	t1 = t0.Add(time.Minute)
	t2 = t0.Add(2 * time.Minute)
)

func mt(t time.Time) metav1.Time { return metav1.NewTime(t) }

func cond(typ, status, reason, msg string, at time.Time) metav1.Condition {
	return metav1.Condition{Type: typ, Status: metav1.ConditionStatus(status), Reason: reason, Message: msg, LastTransitionTime: mt(at)}
}

// rel is a Release "web" of shop with the given status.
func rel(st v1.ReleaseStatus) *v1.Release {
	return &v1.Release{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", UID: "u1", Labels: map[string]string{"tier": "web"}}, Status: st}
}

func renderOf(ref string, at time.Time) *v1.RenderStatus {
	r := mt(at)
	return &v1.RenderStatus{Ref: ref, ChartVersion: "1.2.3", Commit: "0123456789abcdef0123", RenderedAt: &r}
}

func applied(ref string, at time.Time) *v1.LastSuccessful {
	a := mt(at)
	return &v1.LastSuccessful{RenderRef: ref, ChartVersion: "1.2.3", AppliedAt: &a}
}

var webObject = Object{Kind: KindRelease, Namespace: "shop", Name: "web", UID: "u1", Labels: map[string]string{"tier": "web"}}

func TestTransitionRelease(t *testing.T) {
	waiting := v1.ReleaseStatus{
		Conditions: []metav1.Condition{cond(v1.ConditionApplied, "False", v1.ReasonWaitingForSync, "render aaaaaaaaaa waits for /sync", t0)},
		Render:     renderOf(refA, t1),
	}
	ready := v1.ReleaseStatus{
		Conditions: []metav1.Condition{
			cond(v1.ConditionApplied, "True", v1.ReasonApplied, "applied", t1),
			cond(v1.ConditionReady, "True", "Ready", "Applied and Healthy", t2),
		},
		Render:         renderOf(refA, t0),
		LastSuccessful: applied(refA, t1),
	}
	started := mt(t0)
	rolledBack := v1.ReleaseStatus{
		Conditions: []metav1.Condition{
			cond(v1.ConditionApplied, "False", v1.ReasonRolledBack, "rolled back", t2),
			cond(v1.ConditionReady, "True", "Ready", "ok", t2),
		},
		Render:         renderOf(refB, t0),
		LastSuccessful: applied(refA, t2),
		Rollout:        &v1.RolloutStatus{Phase: v1.RolloutRolledBack, RenderRef: refB, StartedAt: &started, Message: "deadline passed"},
	}
	failed := rolledBack.DeepCopy()
	failed.Rollout.Phase = v1.RolloutFailed
	failed.Conditions[0].Reason = v1.ReasonDeployFailed
	overdueMsg := "waits; the observer has not assessed the ReleaseInventory since 2026-12-01T10:00:00Z: check that convoy observer runs and can reach the Cluster."

	for _, tc := range []struct {
		name      string
		prev, cur *v1.Release
		want      []Event
	}{
		{
			name: "a manual Release's new render waits for /sync",
			prev: rel(v1.ReleaseStatus{}), cur: rel(waiting),
			want: []Event{{Type: v1.AlertEventApprovalWaiting, Object: webObject,
				Render: Render{Ref: refA, ChartVersion: "1.2.3", Commit: "0123456789abcdef0123"},
				Reason: v1.ReasonWaitingForSync, Message: "render aaaaaaaaaa waits for /sync", Time: t1,
				Key: "u1/ApprovalWaiting/" + refA}},
		},
		{name: "the same wait again: nothing", prev: rel(waiting), cur: rel(waiting)},
		{
			name: "WaitingForSync for the render already applied (manual, in sync): nothing",
			cur:  rel(v1.ReleaseStatus{Conditions: waiting.Conditions, Render: renderOf(refA, t0), LastSuccessful: applied(refA, t0)}),
		},
		{
			name: "another render waits: a new ApprovalWaiting",
			prev: rel(waiting),
			cur:  rel(v1.ReleaseStatus{Conditions: waiting.Conditions, Render: renderOf(refB, t2)}),
			want: []Event{{Type: v1.AlertEventApprovalWaiting, Object: webObject,
				Render: Render{Ref: refB, ChartVersion: "1.2.3", Commit: "0123456789abcdef0123"},
				Reason: v1.ReasonWaitingForSync, Message: "render aaaaaaaaaa waits for /sync", Time: t2,
				Key: "u1/ApprovalWaiting/" + refB}},
		},
		{
			name: "a new render reached Ready",
			prev: rel(waiting), cur: rel(ready),
			want: []Event{{Type: v1.AlertEventApplied, Object: webObject, Render: Render{Ref: refA, ChartVersion: "1.2.3"},
				Reason: "Ready", Message: "Applied and Healthy", Time: t2, Key: "u1/Applied/" + refA}},
		},
		{name: "Ready stays: nothing", prev: rel(ready), cur: rel(ready)},
		{
			name: "a rollout rolled back: RolledBack, not Applied of the render it went back to",
			prev: rel(ready), cur: rel(rolledBack),
			want: []Event{{Type: v1.AlertEventRolledBack, Object: webObject,
				Render: Render{Ref: refB, ChartVersion: "1.2.3", Commit: "0123456789abcdef0123"},
				Reason: v1.ReasonRolledBack, Message: "deadline passed", Time: t2,
				Key: "u1/RolledBack/" + refB + "/" + unix(t0)}},
		},
		{
			name: "a rollout failed",
			prev: rel(ready), cur: rel(*failed),
			want: []Event{{Type: v1.AlertEventRolloutFailed, Object: webObject,
				Render: Render{Ref: refB, ChartVersion: "1.2.3", Commit: "0123456789abcdef0123"},
				Reason: "RolloutFailed", Message: "deadline passed", Time: t2,
				Key: "u1/RolloutFailed/" + refB + "/" + unix(t0)}},
		},
		{
			name: "a hook failed",
			prev: rel(v1.ReleaseStatus{Render: renderOf(refA, t0)}),
			cur: rel(v1.ReleaseStatus{Render: renderOf(refA, t0),
				Conditions: []metav1.Condition{cond(v1.ConditionApplied, "False", v1.ReasonHookFailed, "hook migrate failed", t1)}}),
			want: []Event{{Type: v1.AlertEventHookFailed, Object: webObject,
				Render: Render{Ref: refA, ChartVersion: "1.2.3", Commit: "0123456789abcdef0123"},
				Reason: v1.ReasonHookFailed, Message: "hook migrate failed", Time: t1,
				Key: "u1/HookFailed/" + refA + "/" + unix(t1)}},
		},
		{
			name: "the chart failed its verification (Applied reason VerificationFailed)",
			cur: rel(v1.ReleaseStatus{
				Conditions: []metav1.Condition{cond(v1.ConditionApplied, "False", ReasonVerificationFailed, "no signature", t1)}}),
			want: []Event{{Type: v1.AlertEventVerificationFailed, Object: webObject,
				Reason: ReasonVerificationFailed, Message: "no signature", Time: t1,
				Key: "u1/VerificationFailed//" + unix(t1)}},
		},
		{
			name: "the assessment is overdue",
			prev: rel(ready),
			cur: rel(v1.ReleaseStatus{Render: renderOf(refA, t0), LastSuccessful: applied(refA, t0),
				Conditions: []metav1.Condition{cond(v1.ConditionHealthy, "Unknown", v1.ReasonNotAssessed, overdueMsg, t0)}}),
			want: []Event{{Type: v1.AlertEventAssessmentOverdue, Object: webObject,
				Render: Render{Ref: refA, ChartVersion: "1.2.3", Commit: "0123456789abcdef0123"},
				Reason: v1.ReasonNotAssessed, Message: overdueMsg, Time: t0,
				Key: "u1/AssessmentOverdue/" + unix(t0)}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var prev any
			if tc.prev != nil {
				prev = tc.prev
			}
			got := Transition(prev, tc.cur, nil)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Transition (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTransitionReleaseSet(t *testing.T) {
	set := func(st v1.ReleaseSetStatus) *v1.ReleaseSet {
		return &v1.ReleaseSet{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "fleet", UID: "s1"}, Status: st}
	}
	done := mt(t1)
	waiting := v1.ReleaseSetStatus{Revision: refA, Source: &v1.ReleaseSetSource{ChartVersion: "6.7.1"},
		Stages: []v1.StageStatus{{Name: "canary", Phase: v1.StageComplete, CompletedAt: &done}, {Name: "main", Phase: v1.StageWaitingForApproval}}}
	halted := v1.ReleaseSetStatus{Revision: refA, Source: &v1.ReleaseSetSource{ChartVersion: "6.7.1"},
		Conditions: []metav1.Condition{cond(v1.ConditionHalted, "True", v1.ReasonReleaseFailed, "Release fleet-a failed", t2)}}
	obj := Object{Kind: KindReleaseSet, Namespace: "shop", Name: "fleet", UID: "s1"}
	// exact is a set of st without status.source whose template names version, or
	// commit in Git.
	exact := func(st v1.ReleaseSetStatus, version string, commit ...string) *v1.ReleaseSet {
		s := set(st)
		s.Status.Source = nil
		s.Spec.Template.Spec.Chart = v1.ChartSource{Repository: "https://charts.example", Name: "web", Version: version}
		if len(commit) > 0 {
			s.Spec.Template.Spec.Chart = v1.ChartSource{Git: &v1.GitChartSource{URL: "https://git.example/charts", Ref: v1.GitRef{Commit: commit[0]}}}
		}
		return s
	}
	for _, tc := range []struct {
		name      string
		prev, cur *v1.ReleaseSet
		want      []Event
	}{
		{
			name: "a Manual stage waits for /promote",
			prev: set(v1.ReleaseSetStatus{Revision: refA}), cur: set(waiting),
			want: []Event{{Type: v1.AlertEventPromotionWaiting, Object: obj, Render: Render{Ref: refA, ChartVersion: "6.7.1"},
				Stage: "main", Reason: v1.ReasonWaitingForApproval, Message: "stage main waits for /promote at revision aaaaaaaaaa",
				Time: t1, Key: "s1/PromotionWaiting/" + refA + "/main"}},
		},
		{name: "still waiting: nothing", prev: set(waiting), cur: set(waiting)},
		{
			name: "a template of an exact version has no status.source: the version is the template's",
			prev: set(v1.ReleaseSetStatus{Revision: refA}), cur: exact(waiting, "6.7.1"),
			want: []Event{{Type: v1.AlertEventPromotionWaiting, Object: obj, Render: Render{Ref: refA, ChartVersion: "6.7.1"},
				Stage: "main", Reason: v1.ReasonWaitingForApproval, Message: "stage main waits for /promote at revision aaaaaaaaaa",
				Time: t1, Key: "s1/PromotionWaiting/" + refA + "/main"}},
		},
		{
			name: "a template of a commit has no status.source: the commit is the template's",
			prev: set(v1.ReleaseSetStatus{Revision: refA}), cur: exact(waiting, "", "4f2c0d9e8b7a"),
			want: []Event{{Type: v1.AlertEventPromotionWaiting, Object: obj, Render: Render{Ref: refA, Commit: "4f2c0d9e8b7a"},
				Stage: "main", Reason: v1.ReasonWaitingForApproval, Message: "stage main waits for /promote at revision aaaaaaaaaa",
				Time: t1, Key: "s1/PromotionWaiting/" + refA + "/main"}},
		},
		{
			name: "halted",
			prev: set(waiting), cur: set(halted),
			want: []Event{{Type: v1.AlertEventHalted, Object: obj, Render: Render{Ref: refA, ChartVersion: "6.7.1"},
				Reason: v1.ReasonReleaseFailed, Message: "Release fleet-a failed", Time: t2,
				Key: "s1/Halted/" + refA + "/ReleaseFailed/" + unix(t2)}},
		},
		{name: "Halted False: nothing", cur: set(v1.ReleaseSetStatus{Conditions: []metav1.Condition{cond(v1.ConditionHalted, "False", v1.ReasonNotHalted, "", t0)}})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var prev any
			if tc.prev != nil {
				prev = tc.prev
			}
			if diff := cmp.Diff(tc.want, Transition(prev, tc.cur, nil)); diff != "" {
				t.Errorf("Transition (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTransitionDrift(t *testing.T) {
	since := mt(t1)
	inv := func(d *v1.DriftStatus) *v1.ReleaseInventory {
		i := &v1.ReleaseInventory{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", UID: "i1"}}
		i.Status.RenderRef = refA
		i.Status.Drift = d
		return i
	}
	drift := &v1.DriftStatus{Since: &since, Drifted: []v1.DriftedObject{{
		ObjectReference: v1.ObjectReference{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "shop", Name: "web"},
		Fields:          []string{".spec.replicas"}}}}
	r := rel(v1.ReleaseStatus{LastSuccessful: applied(refA, t0)})
	got := Transition(inv(&v1.DriftStatus{}), inv(drift), r)
	want := []Event{{Type: v1.AlertEventDriftDetected, Object: webObject, Render: Render{Ref: refA, ChartVersion: "1.2.3"},
		Reason: "DriftDetected", Message: "1 object differs from the render on the cluster: Deployment shop/web (.spec.replicas)",
		Time: t1, Key: "i1/DriftDetected/" + refA + "/" + unix(t1)}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Transition (-want +got):\n%s", diff)
	}
	if got := Transition(inv(drift), inv(drift), r); len(got) != 0 {
		t.Errorf("the same drift again: %v, want nothing", got)
	}
	if got := Transition(nil, inv(drift), nil); len(got) != 0 {
		t.Errorf("a drift without its Release: %v, want nothing", got)
	}
}
