package releaseset

import (
	"fmt"
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

// The tables of maxUnavailable, lasting failures, bakeTime and progressDeadline. The
// sets have stage canary (ring=canary, maxParallel 1) and stage rest (Automatic, so
// that a later stage that starts shows as writes); t0 is when the canary started.

var t0 = metav1.Unix(1_000_000, 0)

func at(d time.Duration) metav1.Time { return metav1.NewTime(t0.Add(d)) }

// stageOption changes the canary stage.
type stageOption func(*v1.Stage)

func maxUnavailable(v intstr.IntOrString) stageOption {
	return func(s *v1.Stage) { s.MaxUnavailable = &v }
}

func bakeTime(d time.Duration) stageOption {
	return func(s *v1.Stage) { s.BakeTime = &metav1.Duration{Duration: d} }
}

func progressDeadline(d time.Duration) stageOption {
	return func(s *v1.Stage) { s.ProgressDeadline = &metav1.Duration{Duration: d} }
}

// budgetSet is the set "web" at the values raw (r1: testSet's), its canary changed by
// opts, then stage rest (Automatic).
func budgetSet(raw string, opts ...stageOption) *v1.ReleaseSet {
	c := canary()
	for _, o := range opts {
		o(&c)
	}
	set := testSet("web", stages(c, v1.Stage{Name: "rest", Approval: v1.ApprovalAutomatic}))
	if raw != "" {
		values(raw)(set)
	}
	return set
}

// withStages records a status at the set's revision with the stages given.
func withStages(set *v1.ReleaseSet, st ...v1.StageStatus) *v1.ReleaseSet {
	set = set.DeepCopy()
	set.Status.Revision = revisionOf(set)
	set.Status.Stages = st
	return set
}

// started is a stage status of a stage that started at t (and completed at done,
// unless nil).
func started(name string, phase v1.StagePhase, t metav1.Time, done *metav1.Time) v1.StageStatus {
	return v1.StageStatus{Name: name, Phase: phase, StartedAt: &t, CompletedAt: done}
}

// readyAt makes the Release Ready at its generation since t.
func readyAt(t metav1.Time) relOption {
	return func(r *v1.Release) {
		ready()(r)
		r.Status.Conditions[0].LastTransitionTime = t
	}
}

// appliedAt records that the Release's current render (or another render, when
// current is false) was applied at t.
func appliedAt(t metav1.Time, current bool) relOption {
	return func(r *v1.Release) {
		r.Status.Render = &v1.RenderStatus{Ref: "sha256:current"}
		ref := "sha256:current"
		if !current {
			ref = "sha256:earlier"
		}
		r.Status.LastSuccessful = &v1.LastSuccessful{RenderRef: ref, AppliedAt: &t}
	}
}

// appliedFalse makes the Release observed, not Ready, its Applied condition False with
// reason, of the Release's generation (or of the one before, when stale).
func appliedFalse(reason, msg string, stale bool) relOption {
	return func(r *v1.Release) {
		notReady()(r)
		gen := r.Generation
		if stale {
			gen--
		}
		r.Status.Conditions = append(r.Status.Conditions, metav1.Condition{Type: v1.ConditionApplied, Status: metav1.ConditionFalse,
			Reason: reason, Message: msg, ObservedGeneration: gen})
	}
}

// timedSummary is summary with what the tables of this file also compare: each stage
// as "name unavailable=N baking=N startedAt/completedAt" (times as offsets from t0,
// "-" when unset), and RequeueAfter.
type timedSummary struct {
	Summary summary
	Times   []string
	Requeue time.Duration
}

func offset(t *metav1.Time) string {
	if t == nil {
		return "-"
	}
	return t.Sub(t0.Time).String()
}

func summarizeTimed(p Plan) timedSummary {
	s := timedSummary{Summary: summarize(p), Requeue: p.RequeueAfter}
	for _, st := range p.Status.Stages {
		s.Times = append(s.Times, fmt.Sprintf("%s unavailable=%d baking=%d %s/%s", st.Name, st.Unavailable, st.Baking,
			offset(st.StartedAt), offset(st.CompletedAt)))
	}
	return s
}

var (
	deadlineHalt  = []string{"Ready=False/StageDeadlineExceeded", "Progressing=False/StageDeadlineExceeded", "Halted=True/StageDeadlineExceeded"}
	canaryFleet   = []v1.Cluster{cluster("c1", ring("canary")), cluster("c2", ring("canary")), cluster("c3")}
	canaryDownC1  = []v1.Cluster{cluster("c1", ring("canary"), unreachable()), cluster("c2", ring("canary")), cluster("c3")}
	canaryUnobsC1 = []v1.Cluster{cluster("c1", ring("canary"), unobservedCluster()), cluster("c2", ring("canary")), cluster("c3")}
	oneCanaryDown = []v1.Cluster{cluster("c1", ring("canary"), unreachable()), cluster("c3")}
	canaryStarted = func(s *v1.ReleaseSet) *v1.ReleaseSet {
		return withStages(s, started("canary", v1.StageProgressing, t0, nil))
	}
	canaryFinished = func(s *v1.ReleaseSet, done metav1.Time) *v1.ReleaseSet {
		return withStages(s, started("canary", v1.StageComplete, t0, &done), started("rest", v1.StageComplete, done, &done))
	}
)

type budgetCase struct {
	set      *v1.ReleaseSet
	clusters []v1.Cluster
	releases func(set *v1.ReleaseSet) []v1.Release
	now      metav1.Time
	want     timedSummary
	// message, when set, are texts the condition Progressing's message must hold.
	message []string
}

func runBudgetCases(t *testing.T, cases map[string]budgetCase) {
	t.Helper()
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var releases []v1.Release
			if tc.releases != nil {
				releases = tc.releases(tc.set)
			}
			plan := Decide(Input{Set: tc.set, Clusters: tc.clusters, Releases: releases, Now: tc.now})
			if diff := cmp.Diff(tc.want, summarizeTimed(plan)); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
			c := apimeta.FindStatusCondition(plan.Status.Conditions, v1.ConditionProgressing)
			for _, m := range tc.message {
				if !strings.Contains(c.Message, m) {
					t.Errorf("Progressing message %q does not say %q", c.Message, m)
				}
			}
		})
	}
}

func TestDecideMaxUnavailable(t *testing.T) {
	mu := func(v intstr.IntOrString) *v1.ReleaseSet { return budgetSet("", maxUnavailable(v)) }
	one, zero := intstr.FromInt32(1), intstr.FromInt32(0)
	canaryC2Ready := func(c1 ...relOption) func(s *v1.ReleaseSet) []v1.Release {
		return func(s *v1.ReleaseSet) []v1.Release {
			return []v1.Release{rel(s, "c1", c1...), rel(s, "c2", readyAt(t0))}
		}
	}
	runBudgetCases(t, map[string]budgetCase{
		"the Release of a Cluster not Ready is written without a maxParallel slot": {
			set: budgetSet(""), clusters: canaryDownC1, now: t0,
			want: timedSummary{Summary: summary{Create: []string{"web-c1@r1", "web-c2@r1"},
				Stages: []string{"canary Progressing 2/0/0", "rest Waiting 1/0/0"}, Conditions: progressing},
				Times: []string{"canary unavailable=1 baking=0 0s/-", "rest unavailable=0 baking=0 -/-"}},
		},
		"a Release of a Cluster not Ready, updated and not Ready, is not in flight": {
			set: canaryStarted(budgetSet("")), clusters: canaryDownC1, now: at(time.Minute),
			releases: func(s *v1.ReleaseSet) []v1.Release { return []v1.Release{rel(s, "c1", notReady())} },
			want: timedSummary{Summary: summary{Create: []string{"web-c2@r1"},
				Stages: []string{"canary Progressing 2/1/0", "rest Waiting 1/0/0"}, Conditions: progressing},
				Times: []string{"canary unavailable=1 baking=0 0s/-", "rest unavailable=0 baking=0 -/-"}},
		},
		"maxUnavailable 0 (unset): the stage waits for the Cluster, and says which": {
			set: canaryStarted(budgetSet("")), clusters: canaryDownC1, now: at(time.Minute), releases: canaryC2Ready(notReady()),
			want: timedSummary{Summary: summary{Stages: []string{"canary Progressing 2/2/1", "rest Waiting 1/0/0"}, Conditions: progressing},
				Times: []string{"canary unavailable=1 baking=0 0s/-", "rest unavailable=0 baking=0 -/-"}},
			message: []string{"Cluster not Ready: c1 (Ready=False, Unreachable)", "maxUnavailable 0", "bring the Cluster back"},
		},
		"maxUnavailable 0: a canary whose Cluster is not Ready lets no later stage start, even with a Ready Release": {
			set: canaryStarted(budgetSet("", maxUnavailable(zero))), clusters: oneCanaryDown, now: at(time.Minute),
			releases: func(s *v1.ReleaseSet) []v1.Release { return []v1.Release{rel(s, "c1", readyAt(t0))} },
			want: timedSummary{Summary: summary{Stages: []string{"canary Progressing 1/1/1", "rest Waiting 1/0/0"}, Conditions: progressing},
				Times: []string{"canary unavailable=1 baking=0 0s/-", "rest unavailable=0 baking=0 -/-"}},
		},
		"a Cluster without status is not Ready": {
			set: canaryStarted(budgetSet("")), clusters: canaryUnobsC1, now: at(time.Minute), releases: canaryC2Ready(notReady()),
			want: timedSummary{Summary: summary{Stages: []string{"canary Progressing 2/2/1", "rest Waiting 1/0/0"}, Conditions: progressing},
				Times: []string{"canary unavailable=1 baking=0 0s/-", "rest unavailable=0 baking=0 -/-"}},
			message: []string{"c1 (no Ready condition)"},
		},
		"maxUnavailable 1: the stage completes without the Cluster and the next starts": {
			set: canaryStarted(mu(one)), clusters: canaryDownC1, now: at(time.Minute), releases: canaryC2Ready(notReady()),
			want: timedSummary{Summary: summary{Create: []string{"web-c3@r1"},
				Stages: []string{"canary Complete 2/2/1", "rest Progressing 1/0/0"}, Conditions: progressing},
				Times: []string{"canary unavailable=1 baking=0 0s/1m0s", "rest unavailable=0 baking=0 1m0s/-"}},
		},
		"maxUnavailable 1: a Release of a Cluster not Ready in a Complete stage still gets a new revision": {
			set: canaryFinished(budgetSet("", maxUnavailable(one)), at(time.Minute)), clusters: canaryDownC1, now: at(time.Hour),
			releases: func(s *v1.ReleaseSet) []v1.Release {
				return []v1.Release{rel(s, "c1", from(setR2), notReady()), rel(s, "c2", readyAt(t0)), rel(s, "c3", readyAt(t0))}
			},
			want: timedSummary{Summary: summary{Update: []string{"web-c1@r1"},
				Stages: []string{"canary Complete 2/1/1", "rest Complete 1/1/1"}, Conditions: complete},
				Times: []string{"canary unavailable=1 baking=0 0s/1m0s", "rest unavailable=0 baking=0 1m0s/1m0s"}},
		},
		"maxUnavailable 50% of 2 is 1": {
			set: canaryStarted(mu(intstr.FromString("50%"))), clusters: canaryDownC1, now: at(time.Minute), releases: canaryC2Ready(notReady()),
			want: timedSummary{Summary: summary{Create: []string{"web-c3@r1"},
				Stages: []string{"canary Complete 2/2/1", "rest Progressing 1/0/0"}, Conditions: progressing},
				Times: []string{"canary unavailable=1 baking=0 0s/1m0s", "rest unavailable=0 baking=0 1m0s/-"}},
		},
		"maxUnavailable 40% of 2 rounds down to 0": {
			set: canaryStarted(mu(intstr.FromString("40%"))), clusters: canaryDownC1, now: at(time.Minute), releases: canaryC2Ready(notReady()),
			want: timedSummary{Summary: summary{Stages: []string{"canary Progressing 2/2/1", "rest Waiting 1/0/0"}, Conditions: progressing},
				Times: []string{"canary unavailable=1 baking=0 0s/-", "rest unavailable=0 baking=0 -/-"}},
		},
		"maxUnavailable counts Clusters, not Releases Ready: two Clusters down is one too many": {
			set: canaryStarted(mu(one)), now: at(time.Minute),
			clusters: []v1.Cluster{cluster("c1", ring("canary"), unreachable()), cluster("c2", ring("canary"), unreachable()), cluster("c3")},
			releases: canaryC2Ready(notReady()),
			want: timedSummary{Summary: summary{Stages: []string{"canary Progressing 2/2/1", "rest Waiting 1/0/0"}, Conditions: progressing},
				Times: []string{"canary unavailable=2 baking=0 0s/-", "rest unavailable=0 baking=0 -/-"}},
		},
	})
}

func TestMaxUnavailable(t *testing.T) {
	cases := []struct {
		v    *intstr.IntOrString
		n    int
		want int
	}{
		{nil, 5, 0},
		{ptr.To(intstr.FromInt32(2)), 5, 2},
		{ptr.To(intstr.FromInt32(9)), 5, 5},
		{ptr.To(intstr.FromString("50%")), 3, 1},
		{ptr.To(intstr.FromString("34%")), 3, 1},
		{ptr.To(intstr.FromString("33%")), 3, 0},
		{ptr.To(intstr.FromString("100%")), 3, 3},
		{ptr.To(intstr.FromString("oops")), 3, 0},
	}
	for _, tc := range cases {
		if got := MaxUnavailable(tc.v, tc.n); got != tc.want {
			t.Errorf("MaxUnavailable(%v, %d) = %d, want %d", tc.v, tc.n, got, tc.want)
		}
	}
}

func TestDecideLastingFailures(t *testing.T) {
	s2 := budgetSet(`{"replicas":2}`)
	failing := func(opt relOption) func(s *v1.ReleaseSet) []v1.Release {
		return func(s *v1.ReleaseSet) []v1.Release {
			return []v1.Release{rel(s, "c1", opt), rel(s, "c2", from(setR1), readyAt(t0)), rel(s, "c3", from(setR1), readyAt(t0))}
		}
	}
	haltedTimes := []string{"canary unavailable=0 baking=0 0s/-", "rest unavailable=0 baking=0 -/-"}
	runningTimes := haltedTimes
	runBudgetCases(t, map[string]budgetCase{
		"an Applied reason that retrying does not cure (HookFailed) halts the set; nothing more gets the revision": {
			set: canaryStarted(s2), clusters: canaryFleet, now: at(time.Minute),
			releases: failing(appliedFalse(v1.ReasonHookFailed, "PreApply hook job migrate failed: BackoffLimitExceeded.", false)),
			want: timedSummary{Summary: summary{Stages: []string{"canary Halted 2/1/0", "rest Waiting 1/0/0"}, Conditions: halted},
				Times: haltedTimes},
			message: []string{"Release web-c1 (Cluster c1) cannot apply revision", "reason HookFailed: PreApply hook job migrate failed: BackoffLimitExceeded.",
				"change the template"},
		},
		"Unappliable (the API server refused an object) halts the set": {
			set: canaryStarted(s2), clusters: canaryFleet, now: at(time.Minute),
			releases: failing(appliedFalse(v1.ReasonUnappliable, "Deployment web: spec.replicas: Invalid value: -1", false)),
			want: timedSummary{Summary: summary{Stages: []string{"canary Halted 2/1/0", "rest Waiting 1/0/0"}, Conditions: halted},
				Times: haltedTimes},
		},
		"WaitingForSync (a manual Release) is no failure": {
			set: canaryStarted(s2), clusters: canaryFleet, now: at(time.Minute),
			releases: failing(appliedFalse(v1.ReasonWaitingForSync, "Render sha256:x waits for a /sync.", false)),
			want: timedSummary{Summary: summary{Stages: []string{"canary Progressing 2/1/0", "rest Waiting 1/0/0"}, Conditions: progressing},
				Times: runningTimes},
		},
		"a transient failure (ClusterNotReady) is no halt": {
			set: canaryStarted(s2), clusters: canaryFleet, now: at(time.Minute),
			releases: failing(appliedFalse(v1.ReasonClusterNotReady, "Cluster c1 is not Ready.", false)),
			want: timedSummary{Summary: summary{Stages: []string{"canary Progressing 2/1/0", "rest Waiting 1/0/0"}, Conditions: progressing},
				Times: runningTimes},
		},
		"an Applied failure of an earlier generation (an earlier render) is no halt": {
			set: canaryStarted(s2), clusters: canaryFleet, now: at(time.Minute),
			releases: failing(appliedFalse(v1.ReasonHookFailed, "old", true)),
			want: timedSummary{Summary: summary{Stages: []string{"canary Progressing 2/1/0", "rest Waiting 1/0/0"}, Conditions: progressing},
				Times: runningTimes},
		},
		"an Applied failure of a status that does not observe the generation is no halt": {
			set: canaryStarted(s2), clusters: canaryFleet, now: at(time.Minute),
			releases: failing(func(r *v1.Release) {
				appliedFalse(v1.ReasonHookFailed, "old", false)(r)
				r.Generation++
			}),
			want: timedSummary{Summary: summary{Stages: []string{"canary Progressing 2/1/0", "rest Waiting 1/0/0"}, Conditions: progressing},
				Times: runningTimes},
		},
		"an Applied failure at an earlier revision is no halt of this one: the Release gets it": {
			set: s2, clusters: canaryFleet, now: t0,
			releases: func(s *v1.ReleaseSet) []v1.Release {
				return []v1.Release{rel(s, "c1", from(setR1), appliedFalse(v1.ReasonHookFailed, "old", false)),
					rel(s, "c2", from(setR1), readyAt(t0)), rel(s, "c3", from(setR1), readyAt(t0))}
			},
			want: timedSummary{Summary: summary{Update: []string{"web-c1@r2"},
				Stages: []string{"canary Progressing 2/0/0", "rest Waiting 1/0/0"}, Conditions: progressing},
				Times: runningTimes},
		},
	})
}

func TestDecideBakeTime(t *testing.T) {
	baking := budgetSet("", bakeTime(10*time.Second))
	bothReady := func(opts ...relOption) func(s *v1.ReleaseSet) []v1.Release {
		return func(s *v1.ReleaseSet) []v1.Release {
			return []v1.Release{rel(s, "c1", readyAt(at(2*time.Second))), rel(s, "c2", append([]relOption{readyAt(at(4 * time.Second))}, opts...)...)}
		}
	}
	runBudgetCases(t, map[string]budgetCase{
		"Releases Ready for less than bakeTime hold the stage; Decide says when to look again": {
			set: canaryStarted(baking), clusters: canaryFleet, now: at(5 * time.Second), releases: bothReady(),
			want: timedSummary{Summary: summary{Stages: []string{"canary Progressing 2/2/2", "rest Waiting 1/0/0"}, Conditions: progressing},
				Times: []string{"canary unavailable=0 baking=2 0s/-", "rest unavailable=0 baking=0 -/-"}, Requeue: 9 * time.Second},
			message: []string{"2 Releases baking (bakeTime 10s): the stage completes at 1970-01-12T13:46:54Z"},
		},
		"one baked, one baking": {
			set: canaryStarted(baking), clusters: canaryFleet, now: at(12 * time.Second), releases: bothReady(),
			want: timedSummary{Summary: summary{Stages: []string{"canary Progressing 2/2/2", "rest Waiting 1/0/0"}, Conditions: progressing},
				Times: []string{"canary unavailable=0 baking=1 0s/-", "rest unavailable=0 baking=0 -/-"}, Requeue: 2 * time.Second},
		},
		"every Release baked: Complete, and the next stage starts": {
			set: canaryStarted(baking), clusters: canaryFleet, now: at(14 * time.Second), releases: bothReady(),
			want: timedSummary{Summary: summary{Create: []string{"web-c3@r1"},
				Stages: []string{"canary Complete 2/2/2", "rest Progressing 1/0/0"}, Conditions: progressing},
				Times: []string{"canary unavailable=0 baking=0 0s/14s", "rest unavailable=0 baking=0 14s/-"}},
		},
		"Ready since counts from the apply of the current render when Ready did not flap": {
			set: canaryStarted(baking), clusters: canaryFleet, now: at(14 * time.Second), releases: bothReady(appliedAt(at(6*time.Second), true)),
			want: timedSummary{Summary: summary{Stages: []string{"canary Progressing 2/2/2", "rest Waiting 1/0/0"}, Conditions: progressing},
				Times: []string{"canary unavailable=0 baking=1 0s/-", "rest unavailable=0 baking=0 -/-"}, Requeue: 2 * time.Second},
		},
		"the apply of another render does not count": {
			set: canaryStarted(baking), clusters: canaryFleet, now: at(14 * time.Second), releases: bothReady(appliedAt(at(6*time.Second), false)),
			want: timedSummary{Summary: summary{Create: []string{"web-c3@r1"},
				Stages: []string{"canary Complete 2/2/2", "rest Progressing 1/0/0"}, Conditions: progressing},
				Times: []string{"canary unavailable=0 baking=0 0s/14s", "rest unavailable=0 baking=0 14s/-"}},
		},
		"Releases Ready before the stage started bake from its start": {
			set: baking, clusters: canaryFleet, now: t0,
			releases: func(s *v1.ReleaseSet) []v1.Release {
				return []v1.Release{rel(s, "c1", readyAt(at(-time.Hour))), rel(s, "c2", readyAt(at(-time.Hour)))}
			},
			want: timedSummary{Summary: summary{Stages: []string{"canary Progressing 2/2/2", "rest Waiting 1/0/0"}, Conditions: progressing},
				Times: []string{"canary unavailable=0 baking=2 0s/-", "rest unavailable=0 baking=0 -/-"}, Requeue: 10 * time.Second},
		},
		"a stage of Clusters all not Ready (within maxUnavailable) has nothing to bake": {
			set: canaryStarted(budgetSet("", bakeTime(time.Minute), maxUnavailable(intstr.FromInt32(1)))), now: at(time.Second),
			clusters: oneCanaryDown, releases: func(s *v1.ReleaseSet) []v1.Release { return []v1.Release{rel(s, "c1", notReady())} },
			want: timedSummary{Summary: summary{Create: []string{"web-c3@r1"},
				Stages: []string{"canary Complete 1/1/0", "rest Progressing 1/0/0"}, Conditions: progressing},
				Times: []string{"canary unavailable=1 baking=0 0s/1s", "rest unavailable=0 baking=0 1s/-"}},
		},
		"a stage that completed does not bake again when a Release is Ready again": {
			set: canaryFinished(baking, at(14*time.Second)), clusters: canaryFleet, now: at(time.Hour),
			releases: func(s *v1.ReleaseSet) []v1.Release {
				return []v1.Release{rel(s, "c1", readyAt(at(time.Hour))), rel(s, "c2", readyAt(t0)), rel(s, "c3", readyAt(t0))}
			},
			want: timedSummary{Summary: summary{Stages: []string{"canary Complete 2/2/2", "rest Complete 1/1/1"}, Conditions: complete},
				Times: []string{"canary unavailable=0 baking=0 0s/14s", "rest unavailable=0 baking=0 14s/14s"}},
		},
	})
}

func TestDecideProgressDeadline(t *testing.T) {
	timed := budgetSet("", progressDeadline(time.Minute))
	c1NotReady := func(s *v1.ReleaseSet) []v1.Release {
		return []v1.Release{rel(s, "c1", notReady(), func(r *v1.Release) {
			r.Status.Conditions[0].Message = "Deployment web: 0 of 1 replicas available."
		})}
	}
	allReady := func(since metav1.Time) func(s *v1.ReleaseSet) []v1.Release {
		return func(s *v1.ReleaseSet) []v1.Release {
			return []v1.Release{rel(s, "c1", readyAt(since)), rel(s, "c2", readyAt(since))}
		}
	}
	runBudgetCases(t, map[string]budgetCase{
		"a stage that starts records when; Decide looks again at its deadline": {
			set: timed, clusters: canaryFleet, now: t0,
			want: timedSummary{Summary: summary{Create: []string{"web-c1@r1"},
				Stages: []string{"canary Progressing 2/0/0", "rest Waiting 1/0/0"}, Conditions: progressing},
				Times: []string{"canary unavailable=0 baking=0 0s/-", "rest unavailable=0 baking=0 -/-"}},
		},
		"before the deadline the stage progresses": {
			set: canaryStarted(timed), clusters: canaryFleet, now: at(20 * time.Second), releases: c1NotReady,
			want: timedSummary{Summary: summary{Stages: []string{"canary Progressing 2/1/0", "rest Waiting 1/0/0"}, Conditions: progressing},
				Times: []string{"canary unavailable=0 baking=0 0s/-", "rest unavailable=0 baking=0 -/-"}, Requeue: 40 * time.Second},
		},
		"at the deadline a stage not Complete halts the set: nothing more is written": {
			set: canaryStarted(timed), clusters: canaryFleet, now: at(time.Minute), releases: c1NotReady,
			want: timedSummary{Summary: summary{Stages: []string{"canary Halted 2/1/0", "rest Waiting 1/0/0"}, Conditions: deadlineHalt},
				Times: []string{"canary unavailable=0 baking=0 0s/-", "rest unavailable=0 baking=0 -/-"}},
			message: []string{"Stage canary did not complete within its progressDeadline 1m0s", "deadline 1970-01-12T13:47:40Z",
				"web-c1 (Cluster c1): Ready=False, Progressing: Deployment web: 0 of 1 replicas available",
				"web-c2 (Cluster c2): not created yet", "change the template", "raise the stage's progressDeadline"},
		},
		"a deadline halt lasts: the stage Ready late does not go on": {
			set: withStages(timed, started("canary", v1.StageHalted, t0, nil)), clusters: canaryFleet, now: at(2 * time.Minute),
			releases: allReady(at(90 * time.Second)),
			want: timedSummary{Summary: summary{Stages: []string{"canary Halted 2/2/2", "rest Waiting 1/0/0"}, Conditions: deadlineHalt},
				Times: []string{"canary unavailable=0 baking=0 0s/-", "rest unavailable=0 baking=0 -/-"}},
		},
		"a stage Ready before its deadline, seen after it, is Complete": {
			set: canaryStarted(timed), clusters: canaryFleet, now: at(2 * time.Minute), releases: allReady(at(30 * time.Second)),
			want: timedSummary{Summary: summary{Create: []string{"web-c3@r1"},
				Stages: []string{"canary Complete 2/2/2", "rest Progressing 1/0/0"}, Conditions: progressing},
				Times: []string{"canary unavailable=0 baking=0 0s/2m0s", "rest unavailable=0 baking=0 2m0s/-"}},
		},
		"the bake is part of the deadline": {
			set: canaryStarted(budgetSet("", progressDeadline(time.Minute), bakeTime(time.Minute))), clusters: canaryFleet,
			now: at(time.Minute), releases: allReady(at(30 * time.Second)),
			want: timedSummary{Summary: summary{Stages: []string{"canary Halted 2/2/2", "rest Waiting 1/0/0"}, Conditions: deadlineHalt},
				Times: []string{"canary unavailable=0 baking=0 0s/-", "rest unavailable=0 baking=0 -/-"}},
			message: []string{"every Release is Ready but has not baked for bakeTime yet"},
		},
		"a raised progressDeadline lets the stage go on": {
			set: withStages(budgetSet("", progressDeadline(time.Hour)), started("canary", v1.StageHalted, t0, nil)), clusters: canaryFleet,
			now: at(2 * time.Minute), releases: c1NotReady,
			want: timedSummary{Summary: summary{Stages: []string{"canary Progressing 2/1/0", "rest Waiting 1/0/0"}, Conditions: progressing},
				Times: []string{"canary unavailable=0 baking=0 0s/-", "rest unavailable=0 baking=0 -/-"}, Requeue: 58 * time.Minute},
		},
		"a new revision starts the clock over": {
			set: func() *v1.ReleaseSet {
				s := budgetSet(`{"replicas":2}`, progressDeadline(time.Minute))
				s.Status = withStages(timed, started("canary", v1.StageHalted, t0, nil)).Status
				return s
			}(), clusters: canaryFleet, now: at(time.Hour),
			releases: func(s *v1.ReleaseSet) []v1.Release { return []v1.Release{rel(s, "c1", from(setR1), notReady())} },
			want: timedSummary{Summary: summary{Update: []string{"web-c1@r2"},
				Stages: []string{"canary Progressing 2/0/0", "rest Waiting 1/0/0"}, Conditions: progressing},
				Times: []string{"canary unavailable=0 baking=0 1h0m0s/-", "rest unavailable=0 baking=0 -/-"}},
		},
		"a Cluster not Ready past the deadline is named": {
			set: canaryStarted(timed), clusters: canaryDownC1, now: at(time.Minute),
			releases: func(s *v1.ReleaseSet) []v1.Release {
				return []v1.Release{rel(s, "c1", notReady()), rel(s, "c2", readyAt(t0))}
			},
			want: timedSummary{Summary: summary{Stages: []string{"canary Halted 2/2/1", "rest Waiting 1/0/0"}, Conditions: deadlineHalt},
				Times: []string{"canary unavailable=1 baking=0 0s/-", "rest unavailable=0 baking=0 -/-"}},
			message: []string{"Cluster c1 is not Ready"},
		},
	})
}

// The same input twice gives the same status, whatever time it is: times come from
// the stored status, so a steady set writes nothing; a status from an earlier
// revision is not carried over.
func TestDecideSteadyStateWithTimes(t *testing.T) {
	set := budgetSet("", maxUnavailable(intstr.FromInt32(1)), bakeTime(10*time.Second), progressDeadline(time.Minute))
	clusters := canaryDownC1
	releases := func(s *v1.ReleaseSet) []v1.Release {
		return []v1.Release{rel(s, "c1", notReady()), rel(s, "c2", readyAt(t0)), rel(s, "c3", readyAt(t0))}
	}
	// The canary starts and bakes, completes, then the rest: a few reconciles.
	for _, now := range []metav1.Time{t0, at(5 * time.Second), at(10 * time.Second), at(11 * time.Second), at(30 * time.Second)} {
		plan := Decide(Input{Set: set, Clusters: clusters, Releases: releases(set), Now: now})
		set = set.DeepCopy()
		set.Status = plan.Status
	}
	wantTimes := []string{"canary unavailable=1 baking=0 0s/10s", "rest unavailable=0 baking=0 10s/10s"}
	if diff := cmp.Diff(wantTimes, summarizeTimed(Plan{Status: set.Status}).Times); diff != "" {
		t.Fatalf("stages after the rollout (-want +got):\n%s", diff)
	}
	for _, now := range []metav1.Time{at(31 * time.Second), at(time.Hour), at(24 * time.Hour)} {
		plan := Decide(Input{Set: set, Clusters: clusters, Releases: releases(set), Now: now})
		if plan.Writes() || plan.RequeueAfter != 0 {
			t.Errorf("at %s: writes %v, requeue %s; want none", offset(&now), summarize(plan), plan.RequeueAfter)
		}
		if diff := cmp.Diff(set.Status, plan.Status); diff != "" {
			t.Errorf("at %s: status changed (-before +after):\n%s", offset(&now), diff)
		}
	}
}
