package fleet_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/testenv"
)

// A ReleaseSet on a real fleet (docs/fleets.md): three target control planes, each its own
// kube-apiserver with a kwok node, registered as Clusters rs-1 (ring=canary), rs-2 and
// rs-3 (ring=main; rs-3 not in the fleet at first). One environment, its parts in
// order: each builds on what the one before left.
func TestReleaseSetOnAFleet(t *testing.T) {
	f := startRSFleet(t,
		map[string]string{"fleet": "on", "ring": "canary"},
		map[string]string{"fleet": "on", "ring": "main"},
		map[string]string{"ring": "main"},
	)
	t.Run("StageByStage", f.stageByStage)
	t.Run("ClusterWaves", f.clusterWaves)
	t.Run("PinOneRelease", f.pinOneRelease)
}

// canaryThenManualRest are the stages canary (ring=canary, maxParallel 1) and rest
// (Manual).
func canaryThenManualRest() []v1.Stage {
	return []v1.Stage{
		{Name: "canary", ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"ring": "canary"}},
			MaxParallel: rsPtr(intstr.FromInt32(1))},
		{Name: "rest", Approval: v1.ApprovalManual},
	}
}

// Every revision goes to the canary's cluster first and to the rest only once the
// canary is Ready and a user with convoy-promote approved; the Deployment on each
// target shows it, cluster after cluster. A Cluster labelled into the fleet gets the
// revision its stage reached. A failing revision halts the set, naming the Release,
// and no cluster of the later stage gets it.
func (f *rsFleet) stageByStage(t *testing.T) {
	f.t = t
	const set, approver = "web", "release-manager"
	canary, two, three := f.release(set, 1), f.release(set, 2), f.release(set, 3)
	order := f.watchStageOrder(set, func(name string) int {
		if name == canary {
			return 0
		}
		return 1
	})
	f.grantPromote(approver)
	f.create(f.set(set, map[string]string{"fleet": "on"}, `{"value":"one"}`, canaryThenManualRest()...))

	// Revision 1: the canary's cluster only, until approved.
	s := f.waitPhases(set, "", "canary Complete, rest WaitingForApproval")
	rev1 := s.Status.Revision
	f.waitDeployed(1, canary, "one")
	testenv.Consistently(t, f.ctx, "nothing on rs-2 before the approval", 3*time.Second, func() (bool, string) {
		_, rel := f.releases(set)[two]
		got := f.deployed(2, two)
		return !rel && got == "", fmt.Sprintf("Release %s exists: %t; Deployment's value %q", two, rel, got)
	})
	if code, body := f.promoteAs(approver, set); code != http.StatusOK {
		t.Fatalf("promote as %s (convoy-promote): %d %s", approver, code, body)
	}
	f.waitPhases(set, "", "canary Complete, rest Complete")
	f.waitDeployed(2, two, "one")

	// Revision 2: again the canary first, the rest after a new approval.
	f.updateTemplate(set, func(t *v1.ReleaseTemplate) { t.Spec.Values = &runtime.RawExtension{Raw: []byte(`{"value":"two"}`)} })
	s = f.waitPhases(set, rev1, "canary Complete, rest WaitingForApproval")
	rev2 := s.Status.Revision
	f.waitDeployed(1, canary, "two")
	testenv.Consistently(t, f.ctx, "rs-2 keeps revision 1 before the approval", 3*time.Second, func() (bool, string) {
		rel := f.releases(set)[two]
		got := f.deployed(2, two)
		return rel.Annotations[v1.AnnotationReleaseSetRevision] == rev1 && got == "one",
			fmt.Sprintf("Release %s at %s; Deployment's value %q", two, rel.Annotations[v1.AnnotationReleaseSetRevision], got)
	})
	if code, body := f.promoteAs(approver, set); code != http.StatusOK {
		t.Fatalf("promote as %s: %d %s", approver, code, body)
	}
	f.waitPhases(set, rev1, "canary Complete, rest Complete")
	f.waitDeployed(2, two, "two")

	// A Cluster joins the fleet: it gets the revision its stage (rest) reached.
	f.labelCluster(3, "fleet", "on")
	f.waitDeployed(3, three, "two")
	testenv.Eventually(t, f.ctx, "stage rest Complete with rs-3", time.Minute, func() (bool, string) {
		s := f.getSet(set)
		rest := s.Status.Stages[len(s.Status.Stages)-1]
		return s.Status.Revision == rev2 && rest.Phase == v1.StageComplete && rest.Clusters == 2 && rest.Ready == 2,
			fmt.Sprintf("revision %s, stage rest %+v", s.Status.Revision, rest)
	})
	if rev := f.releases(set)[three].Annotations[v1.AnnotationReleaseSetRevision]; rev != rev2 {
		t.Errorf("Release %s of the Cluster that joined at revision %q, want %s", three, rev, rev2)
	}

	// Revision 3 fails on the canary: the set halts, rs-2 and rs-3 keep revision 2.
	f.updateTemplate(set, func(t *v1.ReleaseTemplate) {
		t.Spec.Values = &runtime.RawExtension{Raw: []byte(`{"value":"three","broken":true}`)}
		t.Spec.FailurePolicy = &v1.FailurePolicy{HealthTimeout: &metav1.Duration{Duration: 3 * time.Second}, Action: v1.FailureActionRollback}
	})
	s = f.waitPhases(set, rev2, "canary Halted, rest Waiting")
	rev3 := s.Status.Revision
	halted := apimeta.FindStatusCondition(s.Status.Conditions, v1.ConditionHalted)
	if halted == nil || halted.Status != metav1.ConditionTrue || halted.Reason != v1.ReasonReleaseFailed || !strings.Contains(halted.Message, canary) {
		t.Errorf("Halted %+v, want True/%s naming Release %s", halted, v1.ReasonReleaseFailed, canary)
	}
	if code, body := f.promoteAs(approver, set); code != http.StatusConflict {
		t.Errorf("promote of a halted set: %d %s, want 409", code, body)
	}
	testenv.Consistently(t, f.ctx, "rs-2 and rs-3 keep revision 2", 5*time.Second, func() (bool, string) {
		rels := f.releases(set)
		for i, name := range map[int]string{2: two, 3: three} {
			rev, got := rels[name].Annotations[v1.AnnotationReleaseSetRevision], f.deployed(i, name)
			if rev != rev2 || got != "two" {
				return false, fmt.Sprintf("Release %s at %s, Deployment's value %q", name, rev, got)
			}
		}
		return true, ""
	})
	order.check(t, canary, rev1, rev2, rev3)
	order.check(t, two, rev1, rev2)
	order.check(t, three, rev2)
}

// A set whose template has clusterWave 1 writes Releases of wave 1: on rs-2, where a
// plain Release of wave 0 is not yet Healthy, the set's Release waits
// (WaitingForClusterWave) and applies once the wave 0 Release is Ready; on rs-3 it
// applies at once.
func (f *rsFleet) clusterWaves(t *testing.T) {
	f.t = t
	const set = "waved"
	slow := &v1.Release{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "slow"},
		Spec: v1.ReleaseSpec{
			Cluster: f.clusters[1], Chart: v1.ChartSource{Repository: f.charts, Name: "rsweb", Version: "0.1.0"},
			Values:     &runtime.RawExtension{Raw: []byte(`{"value":"slow","broken":true}`)},
			SyncPolicy: v1.SyncPolicy{Automatic: rsPtr(true)},
		},
	}
	f.create(slow)
	waved := f.set(set, map[string]string{"ring": "main"}, `{"value":"waved"}`)
	waved.Spec.Template.Spec.ClusterWave = 1
	f.create(waved)

	onTwo, onThree := f.release(set, 2), f.release(set, 3)
	f.waitDeployed(3, onThree, "waved")
	testenv.Eventually(t, f.ctx, "the set's Release on rs-2 waits for wave 0", time.Minute, func() (bool, string) {
		rel := f.releases(set)[onTwo]
		c := apimeta.FindStatusCondition(rel.Status.Conditions, v1.ConditionApplied)
		return c != nil && c.Reason == v1.ReasonWaitingForClusterWave && strings.Contains(c.Message, f.ns+"/slow "),
			fmt.Sprintf("wave %d, Applied %+v", rel.Spec.ClusterWave, c)
	})
	if got := f.deployed(2, onTwo); got != "" {
		t.Errorf("the set's Release of wave 1 applied on rs-2 (Deployment's value %q) while wave 0 was not Healthy", got)
	}

	// Wave 0 becomes Ready: the set's Release follows.
	testenv.Eventually(t, f.ctx, "update of Release slow", 30*time.Second, func() (bool, string) {
		rel := &v1.Release{}
		if err := f.c.Get(f.ctx, client.ObjectKeyFromObject(slow), rel); err != nil {
			return false, err.Error()
		}
		rel.Spec.Values = &runtime.RawExtension{Raw: []byte(`{"value":"slow"}`)}
		if err := f.c.Update(f.ctx, rel); err != nil {
			return false, err.Error()
		}
		return true, ""
	})
	f.waitDeployed(2, "slow", "slow")
	f.waitDeployed(2, onTwo, "waved")
	s := f.waitPhases(set, "", "rest Complete")
	if c := apimeta.FindStatusCondition(s.Status.Conditions, v1.ConditionReady); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("Ready %+v once wave 0 is Ready, want True", c)
	}
}

// One Release of a set pinned through /pin stays at its pinned render while the set
// rolls a new revision to the others; the set does not undo the pin. Another of the
// set's Releases is force-synced through /sync?force=true: the request is handled,
// and the set leaves the request's annotation alone.
func (f *rsFleet) pinOneRelease(t *testing.T) {
	f.t = t
	const set = "pinned"
	f.create(f.set(set, map[string]string{"fleet": "on"}, `{"value":"one"}`))
	s := f.waitPhases(set, "", "rest Complete")
	rev1 := s.Status.Revision
	one, two, three := f.release(set, 1), f.release(set, 2), f.release(set, 3)

	rel := &v1.Release{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: two}}
	if err := f.c.SubResource(v1.SubresourcePin).Patch(f.ctx, rel,
		client.RawPatch(types.MergePatchType, []byte(`{"pin":{"reason":"hold rs-2 for the test"}}`))); err != nil {
		t.Fatalf("pin Release %s: %v", two, err)
	}
	pinned := f.releases(set)[two]
	if pinned.Pin == nil || pinned.Pin.RenderRef == "" || pinned.Status.LastSuccessful == nil || pinned.Pin.RenderRef != pinned.Status.LastSuccessful.RenderRef {
		t.Fatalf("Release %s after /pin: pin %+v, lastSuccessful %+v; want the pin at the last successful render", two, pinned.Pin, pinned.Status.LastSuccessful)
	}
	ref := pinned.Pin.RenderRef

	f.updateTemplate(set, func(t *v1.ReleaseTemplate) { t.Spec.Values = &runtime.RawExtension{Raw: []byte(`{"value":"two"}`)} })
	f.waitDeployed(1, one, "two")
	f.waitDeployed(3, three, "two")
	testenv.Eventually(t, f.ctx, "the set's revision 2 on the pinned Release", time.Minute, func() (bool, string) {
		rel := f.releases(set)[two]
		rev := rel.Annotations[v1.AnnotationReleaseSetRevision]
		return rev != rev1 && rev == f.getSet(set).Status.Revision, "at " + rev
	})
	testenv.Consistently(t, f.ctx, "the pinned Release stays at its pin", 3*rsResync, func() (bool, string) {
		rel := f.releases(set)[two]
		got := f.deployed(2, two)
		last := ""
		if rel.Status.LastSuccessful != nil {
			last = rel.Status.LastSuccessful.RenderRef
		}
		return rel.Pin != nil && rel.Pin.RenderRef == ref && last == ref && got == "one",
			fmt.Sprintf("pin %+v, lastSuccessful %s, Deployment's value %q", rel.Pin, last, got)
	})

	testenv.PostSync(t, f.ctx, f.host.RestConfig(), f.ns, one, true)
	requested := f.releases(set)[one].Annotations[v1.AnnotationSyncForceRequestedAt]
	if requested == "" {
		t.Fatalf("Release %s has no %s after /sync?force=true", one, v1.AnnotationSyncForceRequestedAt)
	}
	at, err := time.Parse(time.RFC3339Nano, requested)
	if err != nil {
		t.Fatalf("%s=%q: %v", v1.AnnotationSyncForceRequestedAt, requested, err)
	}
	testenv.Eventually(t, f.ctx, "the forced sync of "+one+" handled", time.Minute, func() (bool, string) {
		rel := f.releases(set)[one]
		handled := rel.Status.LastHandledForceSyncAt
		// The status holds seconds.
		return handled != nil && !handled.Time.Before(at.Truncate(time.Second)), fmt.Sprintf("lastHandledForceSyncAt %v, requested %s", handled, requested)
	})
	testenv.Consistently(t, f.ctx, "the set leaves the forced sync's annotation and the pin alone", 2*rsResync, func() (bool, string) {
		rels := f.releases(set)
		got, pin := rels[one].Annotations[v1.AnnotationSyncForceRequestedAt], rels[two].Pin
		return got == requested && pin != nil && pin.RenderRef == ref, fmt.Sprintf("%s=%q, pin of %s %+v", v1.AnnotationSyncForceRequestedAt, got, two, pin)
	})
}
