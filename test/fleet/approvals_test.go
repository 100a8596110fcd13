package fleet_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/testenv"
)

// approvalTargets are the targets of the approval tests: the host itself, and a remote
// Cluster of the fleet reached through its link.
func approvalTargets() []struct{ name, cluster string } {
	return []struct{ name, cluster string }{{"host", ""}, {"remote Cluster", fleet.Name(0)}}
}

// TestApprovalAppliesOnlyTheApprovedRender: a /sync bound to render A waits for a lower
// cluster wave; meanwhile the values change (render B). When the lower wave turns
// Ready, B is not applied under A's approval: the Release says that its approval is of
// another render, and only a /sync of B applies B.
func TestApprovalAppliesOnlyTheApprovedRender(t *testing.T) {
	for _, target := range approvalTargets() {
		t.Run(target.name, func(t *testing.T) {
			ctx, c, ns := setUp(t, 4*time.Minute, "approve")
			startConvoy(t, ctx, ns)
			if target.cluster != "" {
				registerFleet(t, ctx, ns)
			}
			a := approvalEnv{t: t, ctx: ctx, c: c, ns: ns, cluster: target.cluster}

			// The lower wave: a manual Release never synced, Applied=False.
			a.create("db", 0, "first", false)
			a.create("web", 1, "a", false)
			a.waitApplied("db", metav1.ConditionFalse, v1.ReasonWaitingForSync)
			renderA := a.waitRender("web", "")

			testenv.PostBoundSync(t, ctx, host.RestConfig(), ns, "web", renderA, false)
			a.waitApplied("web", metav1.ConditionFalse, v1.ReasonWaitingForClusterWave)

			// A colleague edits the values: render B.
			a.patchValue("web", "b")
			renderB := a.waitRender("web", renderA)
			rel := a.waitApplied("web", metav1.ConditionFalse, v1.ReasonWaitingForSync)
			msg := apimeta.FindStatusCondition(rel.Status.Conditions, v1.ConditionApplied).Message
			for _, want := range []string{v1.RenderRef(renderA).Short(), v1.RenderRef(renderB).Short(), "kubectl convoy release sync"} {
				if !strings.Contains(msg, want) {
					t.Errorf("Applied message %q does not name %q", msg, want)
				}
			}

			// The lower wave turns Ready: its change reconciles web, which applies nothing.
			testenv.PostSync(t, ctx, host.RestConfig(), ns, "db", false)
			a.waitApplied("db", metav1.ConditionTrue, v1.ReasonApplied)
			a.consistently("web applies nothing without an approval of render B", 5*time.Second, func() (bool, string) {
				rel := a.release("web")
				value, exists := a.configMapValue("web")
				return !exists && rel.Status.LastSuccessful == nil && rel.Status.LastHandledSyncAt == nil,
					fmt.Sprintf("ConfigMap web exists: %t (value %q), lastSuccessful %+v, lastHandledSyncAt %v",
						exists, value, rel.Status.LastSuccessful, rel.Status.LastHandledSyncAt)
			})

			// Approving B applies B. (The observer's own /sync after B's assessment may
			// follow, so the request is read right after it is made.)
			testenv.PostBoundSync(t, ctx, host.RestConfig(), ns, "web", renderB, false)
			requested, err := v1.ParseSyncTime(a.release("web").Annotations[v1.AnnotationSyncRequestedAt])
			if err != nil {
				t.Fatal(err)
			}
			a.waitApplied("web", metav1.ConditionTrue, v1.ReasonApplied)
			rel = a.release("web")
			if got := rel.Status.LastSuccessful.RenderRef; got != renderB {
				t.Errorf("lastSuccessful.renderRef = %s, want render B %s", got, renderB)
			}
			if value, _ := a.configMapValue("web"); value != "b" {
				t.Errorf("ConfigMap web has value %q, want b", value)
			}
			if rel.Status.LastHandledSyncAt == nil || rel.Status.LastHandledSyncAt.Time.Before(requested) {
				t.Errorf("lastHandledSyncAt = %v, want the approval of render B at %v handled", rel.Status.LastHandledSyncAt, requested)
			}
		})
	}
}

// TestSwitchToManualAppliesNothingPending: an automatic Release carries a /sync that its
// automatic reconciles never marked handled. One edit sets automatic: false and changes
// the values: the new render waits for a /sync made after the switch.
func TestSwitchToManualAppliesNothingPending(t *testing.T) {
	for _, target := range approvalTargets() {
		t.Run(target.name, func(t *testing.T) {
			ctx, c, ns := setUp(t, 4*time.Minute, "switch")
			startConvoy(t, ctx, ns)
			if target.cluster != "" {
				registerFleet(t, ctx, ns)
			}
			a := approvalEnv{t: t, ctx: ctx, c: c, ns: ns, cluster: target.cluster}

			a.create("web", 0, "a", true)
			a.waitApplied("web", metav1.ConditionTrue, v1.ReasonApplied)
			// Ready: the observer assessed the render and sent its /sync for it.
			a.waitCondition("web", v1.ConditionReady, metav1.ConditionTrue)
			// A /sync in automatic mode (a person's, or the observer's routine one): it only
			// starts a reconcile, and lastHandledSyncAt stays unset.
			testenv.PostSync(t, ctx, host.RestConfig(), ns, "web", false)
			if rel := a.release("web"); rel.Annotations[v1.AnnotationSyncRequestedAt] == "" || rel.Status.LastHandledSyncAt != nil {
				t.Fatalf("before the switch: sync-requested-at %q, lastHandledSyncAt %v; want a request never handled",
					rel.Annotations[v1.AnnotationSyncRequestedAt], rel.Status.LastHandledSyncAt)
			}

			// A change freeze and a chart bump in one edit.
			patch := []byte(`{"spec":{"syncPolicy":{"automatic":false},"values":{"value":"b"}}}`)
			rel := &v1.Release{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}}
			if err := c.Patch(ctx, rel, client.RawPatch(types.MergePatchType, patch)); err != nil {
				t.Fatal(err)
			}
			a.eventually("web reconciled at its new generation, Applied=False/WaitingForSync", func() (bool, string) {
				r := a.release("web")
				cond := apimeta.FindStatusCondition(r.Status.Conditions, v1.ConditionApplied)
				return r.Status.ObservedGeneration == rel.Generation && cond != nil && cond.Reason == v1.ReasonWaitingForSync,
					fmt.Sprintf("observedGeneration %d (want %d), Applied %+v", r.Status.ObservedGeneration, rel.Generation, cond)
			})
			a.consistently("the switch to manual applies nothing", 5*time.Second, func() (bool, string) {
				value, _ := a.configMapValue("web")
				return value == "a", fmt.Sprintf("ConfigMap web has value %q, want a", value)
			})

			// A /sync after the switch applies the new render.
			current := a.waitRender("web", "")
			testenv.PostBoundSync(t, ctx, host.RestConfig(), ns, "web", current, false)
			a.eventually("the /sync after the switch applied value b", func() (bool, string) {
				value, _ := a.configMapValue("web")
				return value == "b", fmt.Sprintf("ConfigMap web has value %q", value)
			})
		})
	}
}

// approvalEnv is one subtest of the approval tests: its namespace and target.
type approvalEnv struct {
	t       *testing.T
	ctx     context.Context
	c       client.Client
	ns      string
	cluster string
}

// create creates a Release of the configmap chart on the target in clusterWave with
// value, automatic or manual.
func (a approvalEnv) create(name string, wave int32, value string, automatic bool) {
	a.t.Helper()
	rel := &v1.Release{
		ObjectMeta: metav1.ObjectMeta{Namespace: a.ns, Name: name},
		Spec: v1.ReleaseSpec{
			Cluster:     a.cluster,
			ClusterWave: wave,
			Chart:       v1.ChartSource{Repository: charts, Name: "configmap", Version: "0.1.0"},
			Values:      &k8sruntime.RawExtension{Raw: fmt.Appendf(nil, `{"value":%q}`, value)},
			SyncPolicy:  v1.SyncPolicy{Automatic: ptr.To(automatic)},
		},
	}
	if err := a.c.Create(a.ctx, rel); err != nil {
		a.t.Fatal(err)
	}
}

func (a approvalEnv) patchValue(name, value string) {
	a.t.Helper()
	rel := &v1.Release{ObjectMeta: metav1.ObjectMeta{Namespace: a.ns, Name: name}}
	patch := fmt.Appendf(nil, `{"spec":{"values":{"value":%q}}}`, value)
	if err := a.c.Patch(a.ctx, rel, client.RawPatch(types.MergePatchType, patch)); err != nil {
		a.t.Fatal(err)
	}
}

func (a approvalEnv) release(name string) *v1.Release {
	a.t.Helper()
	rel := &v1.Release{}
	if err := a.c.Get(a.ctx, client.ObjectKey{Namespace: a.ns, Name: name}, rel); err != nil {
		a.t.Fatal(err)
	}
	return rel
}

// waitRender waits for the Release to report a render other than not and returns it.
func (a approvalEnv) waitRender(name, not string) string {
	a.t.Helper()
	ref := ""
	a.eventually(fmt.Sprintf("Release %s reports a render other than %q", name, not), func() (bool, string) {
		if r := a.release(name).Status.Render; r != nil {
			ref = r.Ref
		}
		return ref != "" && ref != not, "status.render.ref " + ref
	})
	return ref
}

func (a approvalEnv) waitCondition(name, typ string, status metav1.ConditionStatus) {
	a.t.Helper()
	a.eventually(fmt.Sprintf("Release %s %s=%s", name, typ, status), func() (bool, string) {
		c := apimeta.FindStatusCondition(a.release(name).Status.Conditions, typ)
		return c != nil && c.Status == status, fmt.Sprintf("%s: %+v", typ, c)
	})
}

func (a approvalEnv) waitApplied(name string, status metav1.ConditionStatus, reason string) *v1.Release {
	a.t.Helper()
	var rel *v1.Release
	a.eventually(fmt.Sprintf("Release %s Applied=%s/%s", name, status, reason), func() (bool, string) {
		rel = a.release(name)
		c := apimeta.FindStatusCondition(rel.Status.Conditions, v1.ConditionApplied)
		if c == nil {
			return false, "no Applied condition"
		}
		return c.Status == status && c.Reason == reason, fmt.Sprintf("Applied=%s/%s: %s", c.Status, c.Reason, c.Message)
	})
	return rel
}

// configMapValue reads the ConfigMap the Release name applied on the target.
func (a approvalEnv) configMapValue(name string) (string, bool) {
	a.t.Helper()
	cfg := host.RestConfig()
	if a.cluster != "" {
		cfg = fleet.Clusters[0].RestConfig()
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		a.t.Fatal(err)
	}
	cm, err := kube.CoreV1().ConfigMaps(a.ns).Get(a.ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return "", false
	case err != nil:
		a.t.Fatal(err)
	}
	return cm.Data["value"], true
}

func (a approvalEnv) eventually(what string, cond func() (bool, string)) {
	a.t.Helper()
	testenv.Eventually(a.t, a.ctx, what, 90*time.Second, cond)
}

func (a approvalEnv) consistently(what string, d time.Duration, cond func() (bool, string)) {
	a.t.Helper()
	testenv.Consistently(a.t, a.ctx, what, d, cond)
}
