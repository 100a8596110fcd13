package fleet_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/testenv"
)

// A ReleaseSet's budgets on a real fleet: Clusters rs-1 and rs-2 (ring=canary) and
// rs-3 (ring=main), all labelled budget=on; each part has a set of its own with the
// stages canary (maxParallel 1, and what the part is about) then rest (Automatic).
// The Cluster made unreachable (its link holds every connection) comes last.
func TestReleaseSetBudgetsOnAFleet(t *testing.T) {
	f := startRSFleet(t,
		map[string]string{"budget": "on", "ring": "canary"},
		map[string]string{"budget": "on", "ring": "canary"},
		map[string]string{"budget": "on", "ring": "main"},
	)
	t.Run("BakeTimeHoldsTheNextStage", f.bakeTimeHoldsTheNextStage)
	t.Run("AnUnappliableCanaryHalts", f.anUnappliableCanaryHalts)
	t.Run("ARefusedHookOnTheCanaryHalts", f.aRefusedHookOnTheCanaryHalts)
	t.Run("AProgressDeadlineHalts", f.aProgressDeadlineHalts)
	t.Run("AnUnavailableCluster", f.anUnavailableCluster)
}

// budgetStages are the stages canary (ring=canary, maxParallel 1, changed by canary)
// and rest (Automatic).
func budgetStages(canary func(*v1.Stage)) []v1.Stage {
	c := v1.Stage{Name: "canary", ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"ring": "canary"}},
		MaxParallel: rsPtr(intstr.FromInt32(1))}
	if canary != nil {
		canary(&c)
	}
	return []v1.Stage{c, {Name: "rest", Approval: v1.ApprovalAutomatic}}
}

var budgetFleet = map[string]string{"budget": "on"}

// The stage rest starts (its Release is created) only once both canary Releases have
// been Ready at the revision for bakeTime: the times on the objects show it.
func (f *rsFleet) bakeTimeHoldsTheNextStage(t *testing.T) {
	f.t = t
	const set, bake = "bake", 8 * time.Second
	f.create(f.set(set, budgetFleet, `{"value":"one"}`, budgetStages(func(s *v1.Stage) {
		s.BakeTime = &metav1.Duration{Duration: bake}
	})...))
	s := f.waitPhases(set, "", "canary Complete, rest Complete")
	rels := f.releases(set)
	var baked time.Time
	for i := 1; i <= 2; i++ {
		rel := rels[f.release(set, i)]
		since := readySince(&rel)
		t.Logf("Release %s Ready at the revision since %s", rel.Name, since.Format(time.RFC3339))
		if end := since.Add(bake); end.After(baked) {
			baked = end
		}
	}
	rest := rels[f.release(set, 3)]
	if created := rest.CreationTimestamp.Time; created.Before(baked) {
		t.Errorf("Release %s of stage rest created at %s, before the canary's Releases had baked for %s (%s)",
			rest.Name, created.Format(time.RFC3339), bake, baked.Format(time.RFC3339))
	}
	canary := s.Status.Stages[0]
	if canary.StartedAt == nil || canary.CompletedAt == nil || canary.CompletedAt.Time.Before(baked) {
		t.Errorf("stage canary startedAt %v, completedAt %v; want both, completedAt not before %s", canary.StartedAt, canary.CompletedAt,
			baked.Format(time.RFC3339))
	}
	if r := s.Status.Stages[1]; r.StartedAt == nil || r.StartedAt.Before(canary.CompletedAt) {
		t.Errorf("stage rest startedAt %v, before the canary completed (%v)", r.StartedAt, canary.CompletedAt)
	}
}

// readySince is when rel became Ready at its render: the later of Ready's
// lastTransitionTime and the apply of its current render.
func readySince(rel *v1.Release) time.Time {
	var since time.Time
	if c := apimeta.FindStatusCondition(rel.Status.Conditions, v1.ConditionReady); c != nil {
		since = c.LastTransitionTime.Time
	}
	if ls, r := rel.Status.LastSuccessful, rel.Status.Render; ls != nil && ls.AppliedAt != nil && r != nil && ls.RenderRef == r.Ref &&
		ls.AppliedAt.After(since) {
		since = ls.AppliedAt.Time
	}
	return since
}

// A revision whose canary the API server refuses (replicas -1: Applied=False,
// Unappliable, which no retry cures) halts the set with ReleaseFailed, naming the
// Release, its Cluster and the reason; the other canary Release and the stage rest
// keep the revision before.
func (f *rsFleet) anUnappliableCanaryHalts(t *testing.T) {
	halted := f.failingCanaryHalts(t, "refused", `{"value":"two","invalid":true}`)
	for _, want := range []string{f.release("refused", 1), f.clusters[0], v1.ReasonUnappliable, "change the template"} {
		if halted == nil || halted.Status != metav1.ConditionTrue || halted.Reason != v1.ReasonReleaseFailed || !strings.Contains(halted.Message, want) {
			t.Errorf("Halted %+v, want True/%s saying %q", halted, v1.ReasonReleaseFailed, want)
		}
	}
}

// A revision whose canary's PreApply hook the API server refuses halts the set as
// an unappliable object does: the Release's Applied reason is a lasting failure
// (HookFailed or Unappliable, whichever step refuses it first), no retry cures it, and
// no other Release gets the revision.
func (f *rsFleet) aRefusedHookOnTheCanaryHalts(t *testing.T) {
	halted := f.failingCanaryHalts(t, "hook", `{"value":"two","refusedHook":true}`)
	first := f.release("hook", 1)
	if halted == nil || halted.Status != metav1.ConditionTrue || halted.Reason != v1.ReasonReleaseFailed ||
		!strings.Contains(halted.Message, first) ||
		!(strings.Contains(halted.Message, v1.ReasonHookFailed) || strings.Contains(halted.Message, v1.ReasonUnappliable)) {
		t.Errorf("Halted %+v, want True/%s naming %s and HookFailed or Unappliable", halted, v1.ReasonReleaseFailed, first)
	}
}

// failingCanaryHalts rolls the set out Complete, then a revision of values that the
// canary cannot apply: it waits until the canary stage is Halted and the rest Waiting,
// checks that the Releases after the canary keep the revision before, and returns the
// set's Halted condition.
func (f *rsFleet) failingCanaryHalts(t *testing.T, set, values string) *metav1.Condition {
	f.t = t
	f.create(f.set(set, budgetFleet, `{"value":"one"}`, budgetStages(nil)...))
	s := f.waitPhases(set, "", "canary Complete, rest Complete")
	rev1 := s.Status.Revision
	before := f.releases(set)

	f.updateTemplate(set, func(t *v1.ReleaseTemplate) {
		t.Spec.Values = &runtime.RawExtension{Raw: []byte(values)}
	})
	s = f.waitPhases(set, rev1, "canary Halted, rest Waiting")
	f.wantUntouched(set, before, rev1, f.release(set, 2), f.release(set, 3))
	return apimeta.FindStatusCondition(s.Status.Conditions, v1.ConditionHalted)
}

// wantUntouched checks for a few seconds that the Releases names of set keep the
// generation they had in before, at revision rev.
func (f *rsFleet) wantUntouched(set string, before map[string]v1.Release, rev string, names ...string) {
	f.t.Helper()
	testenv.Consistently(f.t, f.ctx, "the Releases after the halt untouched", 5*time.Second, func() (bool, string) {
		now := f.releases(set)
		for _, n := range names {
			was, is := before[n], now[n]
			if is.Generation != was.Generation || is.Annotations[v1.AnnotationReleaseSetRevision] != rev {
				return false, fmt.Sprintf("Release %s: generation %d at revision %s, was %d at %s", n, is.Generation,
					is.Annotations[v1.AnnotationReleaseSetRevision], was.Generation, rev)
			}
		}
		return true, ""
	})
}

// A canary that never becomes Ready (its Pod asks for a node that does not exist)
// halts the set once the stage's progressDeadline passes: StageDeadlineExceeded,
// naming the stage and the Release; no later Release is written.
func (f *rsFleet) aProgressDeadlineHalts(t *testing.T) {
	f.t = t
	const set, deadline = "late", 15 * time.Second
	f.create(f.set(set, budgetFleet, `{"value":"one","broken":true}`, budgetStages(func(s *v1.Stage) {
		s.ProgressDeadline = &metav1.Duration{Duration: deadline}
	})...))
	s := f.waitPhases(set, "", "canary Halted, rest Waiting")
	halted := apimeta.FindStatusCondition(s.Status.Conditions, v1.ConditionHalted)
	for _, want := range []string{"Stage canary", "progressDeadline 15s", f.release(set, 1), "change the template"} {
		if halted == nil || halted.Status != metav1.ConditionTrue || halted.Reason != v1.ReasonStageDeadlineExceeded || !strings.Contains(halted.Message, want) {
			t.Errorf("Halted %+v, want True/%s saying %q", halted, v1.ReasonStageDeadlineExceeded, want)
		}
	}
	if started := s.Status.Stages[0].StartedAt; started == nil || halted == nil || halted.LastTransitionTime.Before(&metav1.Time{Time: started.Add(deadline)}) {
		t.Errorf("stage canary started %v, halted %v: want the halt no sooner than the deadline %s after the start", started, halted, deadline)
	}
	testenv.Consistently(t, f.ctx, "no Release but the first canary's", 3*time.Second, func() (bool, string) {
		rels := f.releases(set)
		_, has := rels[f.release(set, 1)]
		return len(rels) == 1 && has, fmt.Sprintf("%d Releases", len(rels))
	})
}

// A Cluster whose link holds every connection is not Ready. With maxUnavailable 0 its
// stage waits and says which Cluster it waits for; with maxUnavailable 1 the stage
// completes without it and the next one starts; once back, it gets the revision.
func (f *rsFleet) anUnavailableCluster(t *testing.T) {
	f.t = t
	const set = "avail"
	canary2, rest := f.release(set, 2), f.release(set, 3)
	f.create(f.set(set, budgetFleet, `{"value":"one"}`, budgetStages(nil)...))
	s := f.waitPhases(set, "", "canary Complete, rest Complete")
	rev1 := s.Status.Revision

	f.links[1].Hang()
	f.waitCluster(2, metav1.ConditionFalse)
	f.updateTemplate(set, func(t *v1.ReleaseTemplate) { t.Spec.Values = &runtime.RawExtension{Raw: []byte(`{"value":"two"}`)} })
	f.waitDeployed(1, f.release(set, 1), "two")
	testenv.Eventually(t, f.ctx, "stage canary waits for the Cluster not Ready, and says so", 2*time.Minute, func() (bool, string) {
		s = f.getSet(set)
		p := apimeta.FindStatusCondition(s.Status.Conditions, v1.ConditionProgressing)
		c := s.Status.Stages[0]
		return s.Status.Revision != rev1 && c.Phase == v1.StageProgressing && c.Ready == 1 && c.Unavailable == 1 &&
				p != nil && strings.Contains(p.Message, "Cluster not Ready: "+f.clusters[1]) && strings.Contains(p.Message, "maxUnavailable 0"),
			fmt.Sprintf("stage %+v; conditions %s", c, rsConditions(s.Status.Conditions))
	})
	rev2 := s.Status.Revision
	if got := f.releases(set)[canary2].Annotations[v1.AnnotationReleaseSetRevision]; got != rev2 {
		t.Errorf("Release %s of the Cluster not Ready at revision %q, want %s (written without a maxParallel slot)", canary2, got, rev2)
	}
	testenv.Consistently(t, f.ctx, "the stage rest waits", 3*time.Second, func() (bool, string) {
		r := f.releases(set)[rest]
		return r.Annotations[v1.AnnotationReleaseSetRevision] == rev1, fmt.Sprintf("Release %s at %s", rest, r.Annotations[v1.AnnotationReleaseSetRevision])
	})

	f.updateSpec(set, func(spec *v1.ReleaseSetSpec) { spec.Strategy.Stages[0].MaxUnavailable = rsPtr(intstr.FromInt32(1)) })
	s = f.waitPhases(set, rev1, "canary Complete, rest Complete")
	if c := s.Status.Stages[0]; c.Unavailable != 1 {
		t.Errorf("stage canary %+v, want unavailable 1", c)
	}
	f.waitDeployed(3, rest, "two")

	f.links[1].Pass()
	f.waitCluster(2, metav1.ConditionTrue)
	f.waitDeployed(2, canary2, "two")
	testenv.Eventually(t, f.ctx, "stage canary with every Cluster back", 2*time.Minute, func() (bool, string) {
		c := f.getSet(set).Status.Stages[0]
		return c.Phase == v1.StageComplete && c.Ready == 2 && c.Unavailable == 0, fmt.Sprintf("stage %+v", c)
	})
}

// waitCluster waits until the i-th Cluster's Ready condition is status. The Cluster's
// status is rechecked every minute, and at once when its kubeconfig Secret changes:
// the Secret is touched so that the wait is short.
func (f *rsFleet) waitCluster(i int, status metav1.ConditionStatus) {
	f.t.Helper()
	secret := &corev1.Secret{}
	if err := f.c.Get(f.ctx, client.ObjectKey{Namespace: f.ns, Name: f.clusters[i-1]}, secret); err != nil {
		f.t.Fatal(err)
	}
	patch := client.MergeFrom(secret.DeepCopy())
	if secret.Annotations == nil {
		secret.Annotations = map[string]string{}
	}
	secret.Annotations["convoy.kumodo.io/test-touched"] = time.Now().Format(time.RFC3339Nano)
	if err := f.c.Patch(f.ctx, secret, patch); err != nil {
		f.t.Fatal(err)
	}
	testenv.Eventually(f.t, f.ctx, fmt.Sprintf("Cluster %s Ready=%s", f.clusters[i-1], status), 2*time.Minute, func() (bool, string) {
		cl := &v1.Cluster{}
		if err := f.c.Get(f.ctx, client.ObjectKey{Name: f.clusters[i-1]}, cl); err != nil {
			return false, err.Error()
		}
		c := apimeta.FindStatusCondition(cl.Status.Conditions, v1.ConditionReady)
		return c != nil && c.Status == status, fmt.Sprintf("Ready %+v", c)
	})
}

// updateSpec changes the spec of set name.
func (f *rsFleet) updateSpec(name string, change func(*v1.ReleaseSetSpec)) {
	f.t.Helper()
	testenv.Eventually(f.t, f.ctx, "update of ReleaseSet "+name, 30*time.Second, func() (bool, string) {
		s := f.getSet(name)
		change(&s.Spec)
		if err := f.c.Update(f.ctx, s); err != nil {
			return false, err.Error()
		}
		return true, ""
	})
}
