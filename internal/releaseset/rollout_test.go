package releaseset_test

import (
	"fmt"
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/releaseset"
	"kumodo.io/convoy/internal/testenv"
)

// canaryThenManualRest are the stages of the tests: canary (ring=canary, maxParallel 1),
// then rest, approval Manual.
func canaryThenManualRest(approval v1.ApprovalMode) []v1.Stage {
	return []v1.Stage{
		{Name: "canary", ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"ring": "canary"}},
			MaxParallel: ptrTo(intstr.FromInt32(1))},
		{Name: "rest", Approval: approval},
	}
}

var threeClusters = map[string]map[string]string{"canary": {"ring": "canary"}, "two": {}, "three": {}}

// A ReleaseSet over three Clusters with stages canary and rest (Manual): each revision,
// the first included, goes to the canary Cluster first; the rest gets nothing until
// the canary's Release is Ready and the stage is promoted; then every Release is
// Ready, and a steady set makes no API write over several resync periods.
func TestEveryRevisionRollsOutStageByStage(t *testing.T) {
	f := newFleet(t, threeClusters)
	canary, two, three := f.release("web", "canary"), f.release("web", "two"), f.release("web", "three")
	order := f.watchStageOrder("web", []string{canary}, []string{two, three})
	// Values as a person writes them: spacing, a key order, a number with a fraction.
	f.create(f.stagedSet("web", `{ "value": "one", "ratio": 1.50, "a": {"z": 1, "b": "&"} }`, canaryThenManualRest(v1.ApprovalManual)...))

	// Revision 1: the canary, then approval.
	s := f.waitPhases("web", "", "canary Complete, rest WaitingForApproval")
	rev1 := s.Status.Revision
	if c := apimeta.FindStatusCondition(s.Status.Conditions, v1.ConditionProgressing); c == nil || c.Reason != v1.ReasonWaitingForApproval {
		t.Errorf("Progressing %+v while the rest waits for approval, want reason %s", c, v1.ReasonWaitingForApproval)
	}
	testenv.Consistently(t, f.ctx, "no Release of the stage rest before its approval", 3*time.Second, func() (bool, string) {
		rels := f.releases("web")
		_, a := rels[two]
		_, b := rels[three]
		return !a && !b, fmt.Sprintf("Releases %v", slicesOf(rels))
	})
	f.mustPromote("web")
	s = f.waitPhases("web", "", "canary Complete, rest Complete")
	f.wantEveryReleaseReadyAt(s, rev1, canary, two, three)

	if got := f.writes("created"); got != 3 {
		t.Errorf("convoy_releaseset_release_writes_total{action=created} %v after the first revision, want 3", got)
	}

	// Steady state: no write to the set nor to its Releases over several resyncs.
	before, updates := f.resourceVersions("web"), f.writes("updated")
	testenv.Consistently(t, f.ctx, "no API write in steady state", 4*resync, func() (bool, string) {
		now := f.resourceVersions("web")
		return maps.Equal(before, now), fmt.Sprintf("resourceVersions %v, then %v", before, now)
	})
	if got := f.writes("updated"); got != updates {
		t.Errorf("convoy_releaseset_release_writes_total{action=updated} %v after the steady state, was %v", got, updates)
	}

	// Revision 2: the canary again, then a new approval.
	f.updateTemplate("web", func(t *v1.ReleaseTemplate) { t.Spec.Values = rawJSON(`{"value":"two"}`) })
	s = f.waitPhases("web", rev1, "canary Complete, rest WaitingForApproval")
	rev2 := s.Status.Revision
	for _, n := range []string{two, three} {
		if rel := f.releases("web")[n]; rel.Annotations[v1.AnnotationReleaseSetRevision] != rev1 {
			t.Errorf("Release %s at revision %q before the stage rest was approved, want %s", n, rel.Annotations[v1.AnnotationReleaseSetRevision], rev1)
		}
	}
	f.mustPromote("web")
	s = f.waitPhases("web", rev1, "canary Complete, rest Complete")
	f.wantEveryReleaseReadyAt(s, rev2, canary, two, three)
	order.check(t)
}

// A revision whose canary fails its rollout (never Healthy, rolled back) halts the
// set: Halted names the Release, the stage is Halted, the later stage keeps its
// revision, and promote does not override the halt.
func TestAFailedReleaseHaltsTheSet(t *testing.T) {
	f := newFleet(t, threeClusters)
	canary, two, three := f.release("web", "canary"), f.release("web", "two"), f.release("web", "three")
	f.create(f.stagedSet("web", `{"value":"one"}`, canaryThenManualRest(v1.ApprovalAutomatic)...))
	s := f.waitPhases("web", "", "canary Complete, rest Complete")
	rev1 := s.Status.Revision
	rest := map[string]v1.Release{two: f.releases("web")[two], three: f.releases("web")[three]}

	f.updateTemplate("web", func(t *v1.ReleaseTemplate) {
		t.Spec.Values = rawJSON(`{"value":"two","broken":true}`)
		t.Spec.FailurePolicy = &v1.FailurePolicy{HealthTimeout: &metav1.Duration{Duration: 3 * time.Second}, Action: v1.FailureActionRollback}
	})
	s = f.waitPhases("web", rev1, "canary Halted, rest Waiting")
	halted := apimeta.FindStatusCondition(s.Status.Conditions, v1.ConditionHalted)
	if halted == nil || halted.Status != metav1.ConditionTrue || halted.Reason != v1.ReasonReleaseFailed || !strings.Contains(halted.Message, canary) {
		t.Errorf("Halted %+v, want True/%s naming Release %s", halted, v1.ReasonReleaseFailed, canary)
	}
	if ready := apimeta.FindStatusCondition(s.Status.Conditions, v1.ConditionReady); ready == nil || ready.Status != metav1.ConditionFalse {
		t.Errorf("Ready %+v on a halted set, want False", ready)
	}
	testenv.Consistently(t, f.ctx, "the Releases of the later stage untouched", 3*time.Second, func() (bool, string) {
		for n, was := range rest {
			now := f.releases("web")[n]
			if now.Generation != was.Generation || now.Annotations[v1.AnnotationReleaseSetRevision] != rev1 {
				return false, fmt.Sprintf("Release %s: generation %d at revision %s, was %d at %s", n, now.Generation,
					now.Annotations[v1.AnnotationReleaseSetRevision], was.Generation, rev1)
			}
		}
		return true, ""
	})
	if code, body := f.promote("web"); code != http.StatusConflict {
		t.Errorf("promote of a halted set: %d %s, want 409", code, body)
	}
}

// A Cluster whose labels stop matching the set's selector loses its Release (within
// maxRemovals); the others keep theirs.
func TestAClusterThatStopsMatchingLosesItsRelease(t *testing.T) {
	f := newFleet(t, threeClusters)
	set := f.stagedSet("web", `{"value":"one"}`)
	set.Spec.Strategy.MaxRemovals = ptrTo(intstr.FromInt32(1))
	f.create(set)
	f.waitPhases("web", "", "rest Complete")
	cl := &v1.Cluster{}
	if err := f.c.Get(f.ctx, client.ObjectKey{Name: f.cluster("three")}, cl); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(cl.DeepCopy())
	cl.Labels["fleet"] = "elsewhere"
	if err := f.c.Patch(f.ctx, cl, patch); err != nil {
		t.Fatal(err)
	}
	gone := f.release("web", "three")
	testenv.Eventually(t, f.ctx, "Release "+gone+" deleted", time.Minute, func() (bool, string) {
		err := f.c.Get(f.ctx, client.ObjectKey{Namespace: f.ns, Name: gone}, &v1.Release{})
		return apierrors.IsNotFound(err), fmt.Sprintf("get: %v", err)
	})
	s := f.waitPhases("web", "", "rest Complete")
	if got := s.Status.Stages[0].Clusters; got != 2 {
		t.Errorf("stage rest has %d Clusters, want 2", got)
	}
	for _, n := range []string{f.release("web", "canary"), f.release("web", "two")} {
		if _, ok := f.releases("web")[n]; !ok {
			t.Errorf("Release %s of a Cluster that still matches is gone", n)
		}
	}
}

// wantEveryReleaseReadyAt checks that set is Ready and each Release named is Ready at rev.
func (f *fleet) wantEveryReleaseReadyAt(s *v1.ReleaseSet, rev string, names ...string) {
	f.t.Helper()
	if c := apimeta.FindStatusCondition(s.Status.Conditions, v1.ConditionReady); c == nil || c.Status != metav1.ConditionTrue {
		f.t.Errorf("Ready %+v, want True", c)
	}
	rels := f.releases(s.Name)
	for _, n := range names {
		rel, ok := rels[n]
		if !ok {
			f.t.Errorf("no Release %s", n)
			continue
		}
		if !readyAt(&rel, rev) {
			f.t.Errorf("Release %s not Ready at %s: revision %s, conditions %s", n, rev,
				rel.Annotations[v1.AnnotationReleaseSetRevision], conditions(rel.Status.Conditions))
		}
	}
}

func slicesOf(m map[string]v1.Release) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// Deleting a ReleaseSet deletes its Releases (the garbage collector, through their
// owner references), and what they applied with them (their deletionPolicy Delete).
func TestDeletingTheSetDeletesItsReleases(t *testing.T) {
	f := newFleet(t, map[string]map[string]string{"one": {}, "two": {}})
	f.create(f.stagedSet("web", `{"value":"one"}`))
	f.waitPhases("web", "", "rest Complete")
	names := []string{f.release("web", "one"), f.release("web", "two")}
	for _, n := range names {
		if cm := f.configMap(n + "-config"); cm == nil {
			t.Fatalf("no ConfigMap %s-config of Release %s", n, n)
		}
	}
	if err := f.c.Delete(f.ctx, f.set("web")); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, f.ctx, "the set's Releases and their ConfigMaps deleted", 2*time.Minute, func() (bool, string) {
		for _, n := range names {
			if err := f.c.Get(f.ctx, client.ObjectKey{Namespace: f.ns, Name: n}, &v1.Release{}); !apierrors.IsNotFound(err) {
				return false, fmt.Sprintf("Release %s: %v", n, err)
			}
			if cm := f.configMap(n + "-config"); cm != nil {
				return false, "ConfigMap " + cm.Name + " still there"
			}
		}
		return true, ""
	})
}

// A Release of the name the set would write, that the set does not control, is left
// as it is: the set says so in a Warning event, and rolls out to its other Clusters.
func TestAReleaseOfTheSameNameThatIsNotTheSetsIsLeftAlone(t *testing.T) {
	f := newFleet(t, map[string]map[string]string{"one": {}, "two": {}})
	mine := &v1.Release{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: f.release("web", "two")},
		Spec: v1.ReleaseSpec{Cluster: f.cluster("two"), Chart: v1.ChartSource{Repository: charts, Name: "fleet", Version: "0.1.0"},
			Values: rawJSON(`{"value":"mine"}`)},
	}
	f.create(mine)
	f.create(f.stagedSet("web", `{"value":"one"}`))
	testenv.Eventually(t, f.ctx, "the set's own Release Ready, and a Warning about the other", time.Minute, func() (bool, string) {
		s := f.set("web")
		warned := f.warning("web", releaseset.EventReleaseCreated, mine.Name)
		return len(s.Status.Stages) == 1 && s.Status.Stages[0].Ready == 1 && warned,
			fmt.Sprintf("stages %+v, warned %t", s.Status.Stages, warned)
	})
	got := &v1.Release{}
	if err := f.c.Get(f.ctx, client.ObjectKeyFromObject(mine), got); err != nil {
		t.Fatal(err)
	}
	if string(got.Spec.Values.Raw) != `{"value":"mine"}` || len(got.OwnerReferences) > 0 || got.Labels[v1.LabelReleaseSet] != "" {
		t.Errorf("the Release the set does not control was changed: values %s, owners %v, labels %v",
			got.Spec.Values.Raw, got.OwnerReferences, got.Labels)
	}
	if c := apimeta.FindStatusCondition(f.set("web").Status.Conditions, v1.ConditionReady); c == nil || c.Status != metav1.ConditionFalse {
		t.Errorf("Ready %+v while a Cluster has no Release of the set, want False", c)
	}
}

// A controller of a shard reconciles only the ReleaseSets labelled with its shard, and
// the Releases of such a set carry the set's shard label (its template has none), so
// that the shard's controller and observer, which cache only their shard's Releases,
// take them: the set's rollout completes.
func TestAShardReconcilesOnlyItsReleaseSets(t *testing.T) {
	f := newFleet(t, map[string]map[string]string{"one": {}}, inShard("a"))
	ours, theirs := f.stagedSet("web", `{"value":"one"}`), f.stagedSet("other", `{"value":"one"}`)
	ours.Labels = map[string]string{v1.LabelShard: "a"}
	theirs.Labels = map[string]string{v1.LabelShard: "b"}
	f.create(ours)
	f.create(theirs)
	f.waitPhases("web", "", "rest Complete")
	if rel := f.releases("web")[f.release("web", "one")]; rel.Labels[v1.LabelShard] != "a" {
		t.Errorf("the Release of a set of shard a has labels %v, want %s=a", rel.Labels, v1.LabelShard)
	}
	testenv.Consistently(t, f.ctx, "the set of shard b left alone", 2*resync, func() (bool, string) {
		s, rels := f.set("other"), f.releases("other")
		return s.Status.Revision == "" && len(rels) == 0, fmt.Sprintf("status %+v, %d Releases", s.Status, len(rels))
	})
}
