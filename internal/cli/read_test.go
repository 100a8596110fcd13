package cli

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// release list, status and history of a Release, its Renders and its
// ReleaseInventory as convoy apiserver stores and returns them (golden files): the
// status the controller and the observer would write, every time in it relative to
// the Release's creation, read with a clock 90 minutes and a half later so that each
// age is a whole number of minutes.
func TestReleaseListStatusHistoryFromAPIServer(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	created := createRelease(t, ns, "podinfo").CreationTimestamp.Time
	ts := func(d time.Duration) *metav1.Time { t := metav1.NewTime(created.Add(d)); return &t }

	for _, rd := range []struct {
		ref, version string
		objects      int32
	}{{refB, "6.7.1", 2}, {refA, "6.7.0", 2}} { // refA's Render is listed first whether or not it is a second newer (ties go by name)
		r := &v1.Render{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: v1.RenderRef(rd.ref).RenderName("podinfo"), Labels: map[string]string{v1.LabelRelease: "podinfo"}},
			RenderRef:  rd.ref, Release: "podinfo", Chart: v1.RenderChart{Name: "podinfo", Version: rd.version}, ObjectCount: rd.objects,
			Manifests: gz(t, "kind: ConfigMap\n"),
		}
		if err := admin(t).rest.Post().Namespace(ns).Resource(v1.ResourceRenders).Body(r).Do(testCtx(t)).Error(); err != nil {
			t.Fatalf("creating Render %s: %v", r.Name, err)
		}
	}
	dep := v1.ObjectReference{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: ns, Name: "podinfo"}
	svc := v1.ObjectReference{Version: "v1", Kind: "Service", Namespace: ns, Name: "podinfo"}
	inv := &v1.ReleaseInventory{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "podinfo"},
		RenderRef:  refB,
		Objects:    []v1.InventoryObject{{ObjectReference: svc}, {ObjectReference: dep, Wave: 1}},
	}
	stored := &v1.ReleaseInventory{}
	if err := admin(t).rest.Post().Namespace(ns).Resource(v1.ResourceReleaseInventories).Body(inv).Do(testCtx(t)).Into(stored); err != nil {
		t.Fatalf("creating the ReleaseInventory: %v", err)
	}
	stored.Status = v1.ReleaseInventoryStatus{
		RenderRef: refB, AssessedAt: ts(80 * time.Minute), Health: v1.HealthProgressing,
		Objects: []v1.ObjectHealth{{ObjectReference: svc, Health: v1.HealthHealthy},
			{ObjectReference: dep, Health: v1.HealthProgressing, Message: "1 of 2 replicas updated"}},
		Waves: []v1.WaveHealth{{Wave: 0, Health: v1.HealthHealthy}, {Wave: 1, Health: v1.HealthProgressing}},
	}
	if err := admin(t).rest.Put().Namespace(ns).Resource(v1.ResourceReleaseInventories).Name("podinfo").SubResource("status").Body(stored).Do(testCtx(t)).Error(); err != nil {
		t.Fatalf("writing the ReleaseInventory's status: %v", err)
	}
	writeStatus(t, ns, "podinfo", func(r *v1.Release) {
		cond := func(typ string, status metav1.ConditionStatus, reason, msg string) metav1.Condition {
			return metav1.Condition{Type: typ, Status: status, Reason: reason, Message: msg, LastTransitionTime: *ts(75 * time.Minute)}
		}
		r.Status.Conditions = []metav1.Condition{
			cond(v1.ConditionApplied, metav1.ConditionFalse, v1.ReasonWaitingForSyncWave, "Sync wave 1 is applied; wave 2 waits for its health."),
			cond(v1.ConditionHealthy, metav1.ConditionFalse, v1.ReasonProgressing, "Objects of the last applied render are still progressing."),
			cond(v1.ConditionReady, metav1.ConditionFalse, v1.ReasonWaitingForSyncWave, "Sync wave 1 is applied; wave 2 waits for its health."),
		}
		r.Status.Render = &v1.RenderStatus{Ref: refB, ChartVersion: "6.7.1", RenderedAt: ts(70 * time.Minute)}
		r.Status.LastSuccessful = &v1.LastSuccessful{RenderRef: refA, ChartVersion: "6.7.0", AppliedAt: ts(10 * time.Minute)}
		r.Status.Rollout = &v1.RolloutStatus{Phase: v1.RolloutProgressing, RenderRef: refB, PreviousRenderRef: refA,
			StartedAt: ts(75 * time.Minute), Deadline: ts(120 * time.Minute), Message: "Waiting for the render to become healthy."}
		r.Status.SyncWave = &v1.SyncWaveStatus{Current: 1, Total: 2}
	})

	later := func() time.Time { return created.Add(90*time.Minute + 30*time.Second) }
	unns := strings.NewReplacer(ns, "NAMESPACE")
	for _, tc := range []struct {
		golden string
		args   []string
	}{
		{"release_list_apiserver", []string{"release", "list", "-n", ns}},
		{"release_status_apiserver", []string{"release", "status", "podinfo", "-n", ns}},
		{"release_history_apiserver", []string{"release", "history", "podinfo", "-n", ns}},
	} {
		res := pluginAt(t, later, tc.args...)
		if res.code != 0 {
			t.Errorf("%v: exit %d, stderr %s", tc.args, res.code, res.stderr)
			continue
		}
		golden(t, tc.golden, unns.Replace(res.stdout))
	}
}
