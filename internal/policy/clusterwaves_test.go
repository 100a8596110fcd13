package policy

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// A lower cluster wave holds the higher ones until it is Applied and Healthy for its
// spec; a render it already reported Healthy that it only re-assesses, after convoy
// applied it again (a drift put back), does not hold them.
func TestLowerWaveReady(t *testing.T) {
	cond := func(typ string, status metav1.ConditionStatus, reason string, gen int64) metav1.Condition {
		return metav1.Condition{Type: typ, Status: status, Reason: reason, ObservedGeneration: gen}
	}
	applied := cond(v1.ConditionApplied, metav1.ConditionTrue, v1.ReasonApplied, 2)
	cases := map[string]struct {
		deleting   bool
		conditions []metav1.Condition
		want       bool
	}{
		"Applied and Healthy": {
			conditions: []metav1.Condition{applied, cond(v1.ConditionHealthy, metav1.ConditionTrue, v1.ReasonHealthy, 2)}, want: true,
		},
		"Applied, the render it reported Healthy re-assessed": {
			conditions: []metav1.Condition{applied, cond(v1.ConditionHealthy, metav1.ConditionUnknown, v1.ReasonReassessing, 2)}, want: true,
		},
		"Applied, a new render not assessed yet": {
			conditions: []metav1.Condition{applied, cond(v1.ConditionHealthy, metav1.ConditionUnknown, v1.ReasonNotAssessed, 2)}, want: false,
		},
		"Applied, Degraded": {
			conditions: []metav1.Condition{applied, cond(v1.ConditionHealthy, metav1.ConditionFalse, v1.ReasonDegraded, 2)}, want: false,
		},
		"Applied, Progressing": {
			conditions: []metav1.Condition{applied, cond(v1.ConditionHealthy, metav1.ConditionFalse, v1.ReasonProgressing, 2)}, want: false,
		},
		"a re-assessment of an older generation (an edit since)": {
			conditions: []metav1.Condition{applied, cond(v1.ConditionHealthy, metav1.ConditionUnknown, v1.ReasonReassessing, 1)}, want: false,
		},
		"Healthy but Applied of an older generation": {
			conditions: []metav1.Condition{cond(v1.ConditionApplied, metav1.ConditionTrue, v1.ReasonApplied, 1), cond(v1.ConditionHealthy, metav1.ConditionTrue, v1.ReasonHealthy, 2)}, want: false,
		},
		"re-assessed but not Applied (a new render waits)": {
			conditions: []metav1.Condition{cond(v1.ConditionApplied, metav1.ConditionFalse, v1.ReasonWaitingForSync, 2), cond(v1.ConditionHealthy, metav1.ConditionUnknown, v1.ReasonReassessing, 2)}, want: false,
		},
		"no conditions yet": {want: false},
		"being deleted":     {deleting: true, want: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := LowerWaveReady(2, tc.deleting, tc.conditions); got != tc.want {
				t.Errorf("LowerWaveReady = %v, want %v", got, tc.want)
			}
		})
	}
}

// The Healthy condition of a render re-applied with a changed object says that the
// observer re-assesses a render it last reported Healthy (Reassessing), and only then.
func TestReassessingOnlyForARenderLastReportedHealthy(t *testing.T) {
	wasHealthy := &Condition{Type: v1.ConditionHealthy, Status: StatusTrue, Reason: v1.ReasonHealthy}
	wasReassessing := &Condition{Type: v1.ConditionHealthy, Status: StatusUnknown, Reason: v1.ReasonReassessing}
	wasNotAssessed := &Condition{Type: v1.ConditionHealthy, Status: StatusUnknown, Reason: v1.ReasonNotAssessed}
	wasDegraded := &Condition{Type: v1.ConditionHealthy, Status: StatusFalse, Reason: v1.ReasonDegraded}
	// staleHealthy: the observer's assessment of generation 3; this reconcile's apply
	// wrote generation 4 (the drift put back).
	staleHealthy := func(ref string) option {
		return health(Health{RenderRef: ref, Generation: 3, State: v1.HealthHealthy})
	}
	reapplied := Result{Reason: v1.ReasonApplied, InventoryGeneration: 4}
	cases := map[string]struct {
		prev    *Condition
		in      Input
		attempt Result
		want    string // the Healthy reason
	}{
		"the render reported Healthy, re-applied": {
			prev: wasHealthy, in: input(automatic(), rendered(refOld), lastSuccessful(refOld), staleHealthy(refOld)),
			attempt: reapplied, want: v1.ReasonReassessing,
		},
		"still re-assessed at the next reconcile": {
			prev: wasReassessing, in: input(automatic(), rendered(refOld), lastSuccessful(refOld), staleHealthy(refOld), func(in *Input) { in.InventoryGeneration = 4 }),
			attempt: Succeeded(), want: v1.ReasonReassessing,
		},
		"the observer assessed it Healthy again": {
			prev: wasReassessing, in: input(automatic(), rendered(refOld), lastSuccessful(refOld),
				health(Health{RenderRef: refOld, Generation: 4, State: v1.HealthHealthy}), func(in *Input) { in.InventoryGeneration = 4 }),
			attempt: Succeeded(), want: v1.ReasonHealthy,
		},
		"the observer assessed it Progressing": {
			prev: wasReassessing, in: input(automatic(), rendered(refOld), lastSuccessful(refOld),
				health(Health{RenderRef: refOld, Generation: 4, State: v1.HealthProgressing}), func(in *Input) { in.InventoryGeneration = 4 }),
			attempt: Succeeded(), want: v1.ReasonProgressing,
		},
		"a new render applied": {
			prev: wasHealthy, in: input(automatic(), rendered(refNew), lastSuccessful(refOld), staleHealthy(refOld)),
			attempt: reapplied, want: v1.ReasonNotAssessed,
		},
		"a render never reported Healthy": {
			prev: wasNotAssessed, in: input(automatic(), rendered(refOld), lastSuccessful(refOld), staleHealthy(refOld)),
			attempt: reapplied, want: v1.ReasonNotAssessed,
		},
		"a render last reported Degraded": {
			prev: wasDegraded, in: input(automatic(), rendered(refOld), lastSuccessful(refOld), staleHealthy(refOld)),
			attempt: reapplied, want: v1.ReasonNotAssessed,
		},
		"the last assessment was not Healthy": {
			prev: wasHealthy, in: input(automatic(), rendered(refOld), lastSuccessful(refOld),
				health(Health{RenderRef: refOld, Generation: 3, State: v1.HealthProgressing})),
			attempt: reapplied, want: v1.ReasonNotAssessed,
		},
		"no Healthy condition yet": {
			in:      input(automatic(), rendered(refOld), lastSuccessful(refOld), staleHealthy(refOld)),
			attempt: reapplied, want: v1.ReasonNotAssessed,
		},
		"a rollout starts for the render": {
			prev: wasHealthy, in: input(automatic(), rendered(refOld), lastSuccessful(refOld), staleHealthy(refOld), failurePolicy(time.Minute),
				func(in *Input) { in.Requests.ForceRequestedAt = t1 }),
			attempt: reapplied, want: v1.ReasonNotAssessed,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			plan, out := reconcile(tc.in, tc.attempt)
			got := Reassessing(tc.prev, tc.in, out)
			if got.Healthy.Reason != tc.want {
				t.Errorf("Healthy %+v (plan %+v, status %+v), want reason %s", got.Healthy, plan, out.Status, tc.want)
			}
			if diff := cmp.Diff(ReadyCondition(got.Applied, got.Healthy), got.Ready); diff != "" {
				t.Errorf("Ready does not follow Healthy (-want +got):\n%s", diff)
			}
			if tc.want != v1.ReasonReassessing {
				if diff := cmp.Diff(out, got); diff != "" {
					t.Errorf("Reassessing changed the Outcome (-want +got):\n%s", diff)
				}
				return
			}
			if got.Healthy.Status != StatusUnknown || got.Applied.Status != StatusTrue {
				t.Errorf("Applied %+v, Healthy %+v; want Applied True, Healthy Unknown", got.Applied, got.Healthy)
			}
		})
	}
}
