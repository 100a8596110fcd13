package releaseset_test

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/testenv"
)

// A selector typo that drops two of three Clusters (more than maxRemovals 1) halts the set with reason MassRemoval and deletes nothing; fixing
// the selector lifts the halt. Clusters relabelled one after the other count together
// (within the removal window): the set halts again and keeps the Release it holds
// until /promote acknowledges the removal, after which the Releases go and the third
// stays.
func TestAMassRemovalHaltsUntilPromoted(t *testing.T) {
	f := newFleet(t, threeClusters)
	set := f.stagedSet("web", `{"value":"one"}`)
	// One removal at a time may go (the default, 25% of 3 rounded down, lets none).
	set.Spec.Strategy.MaxRemovals = ptrTo(intstr.FromInt32(1))
	f.create(set)
	f.waitPhases("web", "", "rest Complete")
	kept, two, three := f.release("web", "canary"), f.release("web", "two"), f.release("web", "three")
	all := []string{kept, two, three}

	// The typo: the selector now also wants ring=canary.
	f.setSelector("web", map[string]string{"fleet": f.id, "ring": "canary"})
	s := f.waitHalted("web", three)
	if want := []string{three, two}; !slices.Equal(s.Status.HeldRemovals, sorted(want)) {
		t.Errorf("held removals %v, want %v", s.Status.HeldRemovals, sorted(want))
	}
	h := apimeta.FindStatusCondition(s.Status.Conditions, v1.ConditionHalted)
	for _, want := range []string{"2 of the 3 Releases", "allows (1)", "kubectl convoy releaseset promote web"} {
		if !strings.Contains(h.Message, want) {
			t.Errorf("Halted message %q lacks %q", h.Message, want)
		}
	}
	f.wantKept("web", 2*resync, all...)
	if got := f.writes("deleted"); got != 0 {
		t.Errorf("convoy_releaseset_release_writes_total{action=deleted} %v while held, want 0", got)
	}
	if !f.warning("web", "Halted", "would be deleted at once") {
		t.Error("no Warning event Halted about the mass removal")
	}

	// Fixed: no halt, nothing deleted.
	f.setSelector("web", map[string]string{"fleet": f.id})
	s = f.waitPhases("web", "", "rest Complete")
	if h := apimeta.FindStatusCondition(s.Status.Conditions, v1.ConditionHalted); h.Status != metav1.ConditionFalse || len(s.Status.HeldRemovals) > 0 {
		t.Errorf("after the selector was fixed: Halted %+v, held %v", h, s.Status.HeldRemovals)
	}
	f.wantKept("web", 0, all...)

	// Two Clusters relabelled one after the other: the second loss at the latest halts.
	f.relabel("two", "fleet", "elsewhere")
	f.relabel("three", "fleet", "elsewhere")
	s = f.waitHalted("web", three)
	f.wantKept("web", 2*resync, kept, three)

	f.mustPromote("web")
	if got := f.set("web").RemovalAcknowledgement; got == nil || !slices.Equal(got.Releases, s.Status.HeldRemovals) || got.AcknowledgedBy == "" {
		t.Errorf("removal acknowledgement %+v, want Releases %v and a user", got, s.Status.HeldRemovals)
	}
	testenv.Eventually(t, f.ctx, "the acknowledged Releases deleted", time.Minute, func() (bool, string) {
		for _, n := range []string{two, three} {
			if err := f.c.Get(f.ctx, client.ObjectKey{Namespace: f.ns, Name: n}, &v1.Release{}); !apierrors.IsNotFound(err) {
				return false, fmt.Sprintf("Release %s: %v", n, err)
			}
		}
		return true, ""
	})
	s = f.waitPhases("web", "", "rest Complete")
	if h := apimeta.FindStatusCondition(s.Status.Conditions, v1.ConditionHalted); h.Status != metav1.ConditionFalse || len(s.Status.HeldRemovals) > 0 {
		t.Errorf("after the acknowledged removal: Halted %+v, held %v; want False and none", h, s.Status.HeldRemovals)
	}
	f.wantKept("web", 0, kept)
	// The acknowledgement was of that removal only: nothing is left to acknowledge.
	if code, body := f.promote("web"); code != http.StatusConflict {
		t.Errorf("a second promote: %d %s, want 409", code, body)
	}
}

// waitHalted waits until set name is Halted=True/MassRemoval holding the Release held
// (among others), and returns the set.
func (f *fleet) waitHalted(name, held string) *v1.ReleaseSet {
	f.t.Helper()
	var s *v1.ReleaseSet
	testenv.Eventually(f.t, f.ctx, "Halted=True/MassRemoval holding "+held, time.Minute, func() (bool, string) {
		s = f.set(name)
		h := apimeta.FindStatusCondition(s.Status.Conditions, v1.ConditionHalted)
		return s.Status.ObservedGeneration == s.Generation && h != nil && h.Status == metav1.ConditionTrue &&
				h.Reason == v1.ReasonMassRemoval && slices.Contains(s.Status.HeldRemovals, held),
			fmt.Sprintf("held %v; conditions %s", s.Status.HeldRemovals, conditions(s.Status.Conditions))
	})
	return s
}

// wantKept checks that the Releases names of set exist and are not being deleted,
// for the period given (at once when 0).
func (f *fleet) wantKept(set string, period time.Duration, names ...string) {
	f.t.Helper()
	check := func() (bool, string) {
		rels := f.releases(set)
		for _, n := range names {
			if r, ok := rels[n]; !ok || r.DeletionTimestamp != nil {
				return false, fmt.Sprintf("Release %s gone or being deleted", n)
			}
		}
		return true, ""
	}
	if period == 0 {
		if ok, msg := check(); !ok {
			f.t.Error(msg)
		}
		return
	}
	testenv.Consistently(f.t, f.ctx, "no Release deleted while the removal is held", period, check)
}

// setSelector sets the clusterSelector of set name to matchLabels.
func (f *fleet) setSelector(name string, matchLabels map[string]string) {
	f.t.Helper()
	testenv.Eventually(f.t, f.ctx, "update of ReleaseSet "+name, 30*time.Second, func() (bool, string) {
		s := f.set(name)
		s.Spec.ClusterSelector = &metav1.LabelSelector{MatchLabels: matchLabels}
		if err := f.c.Update(f.ctx, s); err != nil {
			return false, err.Error()
		}
		return true, ""
	})
}

func sorted(s []string) []string { return slices.Sorted(slices.Values(s)) }

// A paused set whose template changes writes no Release: Progressing=False/Paused, the
// Releases untouched over several resyncs. Resumed, it rolls the new revision out
// stage by stage, the canary first.
func TestAPausedSetWritesNothingUntilResumed(t *testing.T) {
	f := newFleet(t, threeClusters)
	canary, two, three := f.release("web", "canary"), f.release("web", "two"), f.release("web", "three")
	f.create(f.stagedSet("web", `{"value":"one"}`, canaryThenManualRest(v1.ApprovalAutomatic)...))
	rev1 := f.waitPhases("web", "", "canary Complete, rest Complete").Status.Revision

	f.setPaused("web", true)
	f.updateTemplate("web", func(t *v1.ReleaseTemplate) { t.Spec.Values = rawJSON(`{"value":"two"}`) })
	var s *v1.ReleaseSet
	testenv.Eventually(t, f.ctx, "the edited set Progressing=False/Paused", time.Minute, func() (bool, string) {
		s = f.set("web")
		p := apimeta.FindStatusCondition(s.Status.Conditions, v1.ConditionProgressing)
		return s.Status.ObservedGeneration == s.Generation && s.Status.Revision != rev1 && p != nil &&
				p.Status == metav1.ConditionFalse && p.Reason == v1.ReasonPaused,
			fmt.Sprintf("status of generation %d (set at %d) at %s; conditions %s", s.Status.ObservedGeneration, s.Generation,
				s.Status.Revision, conditions(s.Status.Conditions))
	})
	rev2 := s.Status.Revision
	before := f.releaseVersions("web")
	testenv.Consistently(t, f.ctx, "no Release written while paused", 3*resync, func() (bool, string) {
		now := f.releaseVersions("web")
		return maps.Equal(before, now), fmt.Sprintf("resourceVersions %v, then %v", before, now)
	})
	for _, n := range []string{canary, two, three} {
		if rel := f.releases("web")[n]; rel.Annotations[v1.AnnotationReleaseSetRevision] != rev1 {
			t.Errorf("Release %s at revision %q while paused, want %s", n, rel.Annotations[v1.AnnotationReleaseSetRevision], rev1)
		}
	}

	order := f.watchStageOrder("web", []string{canary}, []string{two, three})
	f.setPaused("web", false)
	s = f.waitPhases("web", rev1, "canary Complete, rest Complete")
	if s.Status.Revision != rev2 {
		t.Errorf("revision %s after resume, want %s", s.Status.Revision, rev2)
	}
	f.wantEveryReleaseReadyAt(s, rev2, canary, two, three)
	order.check(t)
}

// relabel sets the label key=value of the test's Cluster name.
func (f *fleet) relabel(name, key, value string) {
	f.t.Helper()
	cl := &v1.Cluster{}
	if err := f.c.Get(f.ctx, client.ObjectKey{Name: f.cluster(name)}, cl); err != nil {
		f.t.Fatal(err)
	}
	patch := client.MergeFrom(cl.DeepCopy())
	cl.Labels[key] = value
	if err := f.c.Patch(f.ctx, cl, patch); err != nil {
		f.t.Fatal(err)
	}
}

// setPaused merge-patches spec.paused of set name, as kubectl convoy releaseset pause
// and resume do.
func (f *fleet) setPaused(name string, paused bool) {
	f.t.Helper()
	patch := client.RawPatch("application/merge-patch+json", []byte(fmt.Sprintf(`{"spec":{"paused":%t}}`, paused)))
	if err := f.c.Patch(f.ctx, &v1.ReleaseSet{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name}}, patch); err != nil {
		f.t.Fatalf("set spec.paused of ReleaseSet %s to %t: %v", name, paused, err)
	}
}

// releaseVersions are the resourceVersions of the Releases of set name.
func (f *fleet) releaseVersions(name string) map[string]string {
	f.t.Helper()
	out := map[string]string{}
	for n, r := range f.releases(name) {
		out[n] = r.ResourceVersion
	}
	return out
}
