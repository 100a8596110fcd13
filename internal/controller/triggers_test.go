package controller

import (
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// quiet is how long a negative trigger test watches for a reconcile that must not come.
const quiet = 3 * time.Second

// noReconcile checks that name is not reconciled for quiet.
func (e *env) noReconcile(what, name string, n int) {
	e.t.Helper()
	e.consistently(what+" must not start a reconcile", quiet, func() (bool, string) {
		got := e.reconciles(name)
		return got == n, fmt.Sprintf("%d reconciles, want %d", got, n)
	})
}

// The seed's "What starts a reconcile" against the real API server: each trigger of
// the main resource and the subresources, and each write that must not trigger.
func TestSP08_SP13_SP24_SP25_SP26_SP31_SP32_SP33_ReleaseTriggers(t *testing.T) {
	e := newEnv(t, envOptions{}) // resync 10m: only the events under test reconcile
	e.createRelease("web")

	// SP-24: the create.
	e.waitReconciled("web", 0)
	e.waitApplied("web", "False", v1.ReasonWaitingForSync)
	n := e.settle("web")
	before := e.release("web")

	// SP-31: a status write starts no reconcile and changes neither the generation nor
	// the annotation.
	written := before.DeepCopy()
	apimeta.SetStatusCondition(&written.Status.Conditions, metav1.Condition{
		Type: "Observed", Status: metav1.ConditionTrue, Reason: "ByTest", Message: "a status write",
	})
	if err := e.client.Status().Patch(e.ctx, written, client.MergeFrom(before)); err != nil {
		t.Fatal(err)
	}
	after := e.release("web")
	if after.Generation != before.Generation || after.Annotations[v1.AnnotationSyncRequestedAt] != before.Annotations[v1.AnnotationSyncRequestedAt] {
		t.Fatalf("SP-31 a status write changed generation %d→%d or the annotation", before.Generation, after.Generation)
	}
	e.noReconcile("SP-31 a status write", "web", n)

	// SP-32: mutations and lifecycle through the main resource: no generation change,
	// no reconcile.
	e.update("web", mutation("ConfigMap", `{"metadata":{"labels":{"tier":"web"}}}`))
	e.update("web", lifecycleHook("migrate"), func(r *v1.Release) {
		r.Lifecycle.Hooks[0].Job = &batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers:    []corev1.Container{{Name: "migrate", Image: "busybox"}},
		}}}
	})
	// The hook goes again, also through the main resource, so that the apply below runs
	// no hook Job (hooks have their own tests, hooks_test.go).
	e.update("web", func(r *v1.Release) { r.Lifecycle = nil })
	if g := e.release("web").Generation; g != before.Generation {
		t.Fatalf("SP-32 generation %d→%d after a main-resource mutations/lifecycle change", before.Generation, g)
	}
	e.noReconcile("SP-32 a mutations or lifecycle change through the main resource", "web", n)

	// SP-33: a write through /mutations starts a reconcile at once.
	rel := e.release("web")
	patch := client.RawPatch(types.MergePatchType, []byte(`{"mutations":[{"target":{"kind":"ConfigMap"},"patch":"metadata: {labels: {tier: api}}"}]}`))
	if err := e.client.SubResource(v1.SubresourceMutations).Patch(e.ctx, rel, patch); err != nil {
		t.Fatalf("PATCH /mutations: %v", err)
	}
	e.waitReconciled("web", n)
	if rel := e.release("web"); rel.Annotations[v1.AnnotationSyncRequestedAt] == "" || rel.Generation != before.Generation {
		t.Errorf("SP-33 after /mutations: annotation %q, generation %d; want the annotation set, the generation kept",
			rel.Annotations[v1.AnnotationSyncRequestedAt], rel.Generation)
	}
	// SP-13: in manual mode the /mutations write counts as a /sync: the render, with
	// the mutation, is applied and the request handled.
	rel = e.waitApplied("web", "True", v1.ReasonApplied)
	if got, want := rel.Status.LastHandledSyncAt, rel.Annotations[v1.AnnotationSyncRequestedAt]; got == nil || got.UTC().Format(time.RFC3339) != want {
		t.Errorf("SP-13 lastHandledSyncAt = %v, want the annotation %s written by /mutations", got, want)
	}
	if cm := e.configMap("web-config"); cm == nil || cm.Labels["tier"] != "api" {
		t.Errorf("SP-13 web-config = %+v, want it applied with the mutation's label", cm)
	}
	n = e.settle("web")

	// SP-33: and through /lifecycle.
	rel = e.release("web")
	patch = client.RawPatch(types.MergePatchType, []byte(`{"lifecycle":{"hooks":[{"name":"seed","phase":"PostApply",`+
		`"job":{"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"seed","image":"busybox"}]}}}}]}}`))
	if err := e.client.SubResource(v1.SubresourceLifecycle).Patch(e.ctx, rel, patch); err != nil {
		t.Fatalf("PATCH /lifecycle: %v", err)
	}
	e.waitReconciled("web", n)
	n = e.settle("web")

	// SP-26: sync-requested-at set through the main resource (kubectl annotate).
	e.update("web", annotation(v1.AnnotationSyncRequestedAt, time.Now().Add(time.Hour).UTC().Format(time.RFC3339)))
	e.waitReconciled("web", n)
	n = e.settle("web")

	// SP-08/SP-26: and through POST /sync.
	e.sync("web", false)
	e.waitReconciled("web", n)
	n = e.settle("web")

	// SP-25: a spec change changes the generation and starts a reconcile.
	e.update("web", values(`{"greeting":"bonjour"}`))
	e.waitReconciled("web", n)
	if g := e.release("web").Generation; g != before.Generation+1 {
		t.Errorf("SP-25 generation = %d after a spec change, want %d", g, before.Generation+1)
	}
	e.eventually("observedGeneration", func() (bool, string) {
		r := e.release("web")
		return r.Status.ObservedGeneration == r.Generation, fmt.Sprintf("observedGeneration %d", r.Status.ObservedGeneration)
	})
}

func TestSP12_SP32_MainResourceMutationsUsedAtTheNextReconcile(t *testing.T) {
	// seed: "convoy uses the change at the next periodic reconcile."
	e := newEnv(t, envOptions{})
	e.createRelease("web", automatic())
	e.waitApplied("web", "True", v1.ReasonApplied)
	n := e.settle("web")

	e.update("web", mutation("ConfigMap", `{"metadata":{"labels":{"tier":"web"}}}`))
	e.noReconcile("a mutations change through the main resource", "web", n)
	if cm := e.configMap("web-config"); cm.Labels["tier"] != "" {
		t.Fatalf("the mutation was applied without a reconcile: labels %v", cm.Labels)
	}
	// The next reconcile, whatever starts it (here a /sync, which in automatic mode
	// only starts a reconcile), applies the render with the mutation.
	e.sync("web", false)
	e.eventually("the mutation applied", func() (bool, string) {
		cm := e.configMap("web-config")
		return cm != nil && cm.Labels["tier"] == "web", fmt.Sprintf("labels %v", cm.Labels)
	})
	// SP-12: in automatic mode the /sync only started a reconcile; lastHandledSyncAt
	// is not used.
	if rel := e.release("web"); rel.Status.LastHandledSyncAt != nil {
		t.Errorf("SP-12 lastHandledSyncAt = %v in automatic mode, want unset", rel.Status.LastHandledSyncAt)
	}
}

func TestSP27_InformerResyncReconciles(t *testing.T) {
	e := newEnv(t, envOptions{resync: time.Second})
	e.createRelease("web") // manual, no interval: nothing but the resync reconciles it
	e.waitApplied("web", "False", v1.ReasonWaitingForSync)
	n := e.reconciles("web")
	e.waitReconciled("web", n+2)
	if r, _ := e.lastResult("web"); r.res.RequeueAfter != 0 || r.err != nil {
		t.Errorf("last result %+v, want no scheduled requeue", r)
	}
}

func TestSP28_SP36_ScheduledRequeueArrives(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.createRelease("web", interval(time.Second))
	e.waitApplied("web", "False", v1.ReasonWaitingForSync)
	n := e.reconciles("web")
	e.waitReconciled("web", n+2)
	if r, _ := e.lastResult("web"); r.res.RequeueAfter != time.Second || r.err != nil {
		t.Errorf("last result %+v, want RequeueAfter = interval", r)
	}
}

func TestSP37_NoPeriodicReconcileWithoutInterval(t *testing.T) {
	// seed: "With interval not set or 0, convoy schedules no periodic reconcile."
	e := newEnv(t, envOptions{})
	e.createRelease("web", automatic())
	e.waitApplied("web", "True", v1.ReasonApplied)
	n := e.settle("web")
	if r, _ := e.lastResult("web"); r.res.RequeueAfter != 0 || r.err != nil {
		t.Errorf("last result %+v, want no scheduled requeue", r)
	}
	e.noReconcile("an automatic Release without interval", "web", n)
}

func TestSP29_InventoryHealthDataReconciles(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.createRelease("web", automatic())
	rel := e.waitApplied("web", "True", v1.ReasonApplied)
	n := e.settle("web")

	inv := &v1.ReleaseInventory{}
	if err := e.client.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: "web"}, inv); err != nil {
		t.Fatal(err)
	}
	// The controller's kind of write (the object list, not status) does not trigger.
	labelled := inv.DeepCopy()
	labelled.Labels = map[string]string{"by": "test"}
	if err := e.client.Patch(e.ctx, labelled, client.MergeFrom(inv)); err != nil {
		t.Fatal(err)
	}
	e.noReconcile("a write of the inventory outside status", "web", n)

	// The observer's write of new health data does, and the Release reports it.
	e.writeHealthy("web", rel.Status.LastSuccessful.RenderRef)
	e.waitReconciled("web", n)
	e.eventually("Healthy and Ready True", func() (bool, string) {
		r := e.release("web")
		h := apimeta.FindStatusCondition(r.Status.Conditions, v1.ConditionHealthy)
		ready := apimeta.FindStatusCondition(r.Status.Conditions, v1.ConditionReady)
		return h != nil && h.Status == metav1.ConditionTrue && ready != nil && ready.Status == metav1.ConditionTrue,
			fmt.Sprintf("Healthy %+v, Ready %+v", h, ready)
	})
}

func TestSP30_LowerClusterWaveChangeReconcilesHigherWaves(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.createRelease("db", automatic())
	e.createRelease("web", automatic(), clusterWave(1))
	db := e.waitApplied("db", "True", v1.ReasonApplied)
	e.waitApplied("web", "False", v1.ReasonWaitingForClusterWave)
	if cm := e.configMap("web-config"); cm != nil {
		t.Fatal("web of cluster wave 1 was applied while db of wave 0 is not Healthy")
	}

	// The observer reports db healthy: db's Healthy turns True, which reconciles web.
	inv := &v1.ReleaseInventory{}
	if err := e.client.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: "db"}, inv); err != nil {
		t.Fatal(err)
	}
	observed := inv.DeepCopy()
	observed.Status = v1.ReleaseInventoryStatus{RenderRef: db.Status.LastSuccessful.RenderRef, Health: v1.HealthHealthy}
	if err := e.client.Status().Patch(e.ctx, observed, client.MergeFrom(inv)); err != nil {
		t.Fatal(err)
	}
	e.waitApplied("web", "True", v1.ReasonApplied)
	if cm := e.configMap("web-config"); cm == nil {
		t.Error("web-config was not applied once db became Healthy")
	}
}

// The zero-writes goal: a steady Release costs no API write, however often it is
// reconciled (api.md; SP-31: no loop between the controller's status writes and its
// triggers).
func TestSteadyReleaseCausesNoWrites(t *testing.T) {
	e := newEnv(t, envOptions{resync: time.Second})
	e.createRelease("web", automatic(), interval(time.Second))
	e.waitApplied("web", "True", v1.ReasonApplied)
	// Let the first reconciles finish their writes.
	n := e.reconciles("web")
	e.waitReconciled("web", n+2)

	// A watch from the resourceVersion of a list sees only what changes after it.
	watch := func(list client.ObjectList) <-chan struct{} {
		if err := e.client.List(e.ctx, list, client.InNamespace(e.ns)); err != nil {
			t.Fatal(err)
		}
		w, err := e.client.Watch(e.ctx, list, client.InNamespace(e.ns),
			&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: list.GetResourceVersion()}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(w.Stop)
		events := make(chan struct{}, 100)
		go func() {
			for range w.ResultChan() {
				events <- struct{}{}
			}
		}()
		return events
	}
	releases := watch(&v1.ReleaseList{})
	inventories := watch(&v1.ReleaseInventoryList{})
	renders := watch(&v1.RenderList{})
	configMaps := watch(&corev1.ConfigMapList{})

	n = e.reconciles("web")
	e.waitReconciled("web", n+4)
	for what, ch := range map[string]<-chan struct{}{"Release": releases, "ReleaseInventory": inventories, "Render": renders, "ConfigMap": configMaps} {
		if got := len(ch); got > 0 {
			t.Errorf("%d writes to %s objects during steady reconciles, want none", got, what)
		}
	}
}

// The API requests of a Release's first apply, once the caches are warm (the issue's
// goal: at most 12 for a 4-object Release). The test chart renders one object.
func TestFirstApplyAPIRequests(t *testing.T) {
	counter := &requestCounter{}
	e := newEnv(t, envOptions{requests: counter})
	// Warm the caches (the informers, the Render metadata informer, discovery).
	e.createRelease("warm", automatic())
	e.waitApplied("warm", "True", v1.ReasonApplied)
	e.settle("warm")
	// The events go out after the reconcile, from the broadcaster's goroutine: wait
	// for the requests, not only the reconciles, to stop.
	before := e.requestsSettled(counter)
	e.createRelease("web", automatic())
	e.waitApplied("web", "True", v1.ReasonApplied)
	e.settle("web")
	after := e.requestsSettled(counter)
	_, log := counter.snapshot()
	n := after - before
	t.Logf("%d API requests for the first apply of a one-object Release:\n%s", n, strings.Join(log[before:], "\n"))
	// The finalizer, the Render, the inventory, the status and one event: 5; and the
	// object: its GET and dry run (the pre-apply dry run) and its apply: 3.
	if n > 8 {
		t.Errorf("%d API requests, want at most 8", n)
	}
}
