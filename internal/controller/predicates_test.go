package controller

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// The trigger list of docs/sync-policy.md ("What starts a reconcile") and the seed's,
// one row per sentence.
func TestReleaseUpdateTriggers(t *testing.T) {
	base := testRelease("podinfo", resourceVersion("10"), generation(3),
		annotation(v1.AnnotationSyncRequestedAt, "2026-12-02T10:04:05Z"))
	changed := func(opts ...releaseOption) *v1.Release {
		return with(base, append([]releaseOption{resourceVersion("11")}, opts...)...)
	}
	cases := map[string]struct {
		seed     string
		old, new *v1.Release
		want     bool
	}{
		"SP-25 a generation change": {
			seed: "metadata.generation changes. Only a change to spec changes the generation.",
			old:  base, new: changed(generation(4), values(`{"replicaCount":2}`)), want: true,
		},
		"SP-26 a change of sync-requested-at": {
			seed: "The annotation convoy.kumodo.io/sync-requested-at changes.",
			old:  base, new: changed(annotation(v1.AnnotationSyncRequestedAt, "2026-12-02T10:05:00Z")), want: true,
		},
		"SP-26 sync-requested-at set for the first time": {
			seed: "The annotation convoy.kumodo.io/sync-requested-at changes.",
			old:  testRelease("podinfo", resourceVersion("10")), new: changed(), want: true,
		},
		"SP-27 an informer resync (same resourceVersion)": {
			seed: "The informer resync occurs.",
			old:  base, new: with(base), want: true,
		},
		"a set deletion timestamp": {
			seed: "design: a set deletion timestamp",
			old:  with(base, finalizer()), new: changed(finalizer(), deleting()), want: true,
		},
		"SP-31 a status write": {
			seed: "A status write on a Release does not start a reconcile of that Release.",
			old:  base,
			new: changed(condition(v1.ConditionApplied, "True", v1.ReasonApplied),
				statusOnly(func(s *v1.ReleaseStatus) { s.ObservedGeneration = 3 })),
			want: false,
		},
		"SP-32 mutations changed through the main resource": {
			seed: "A change to mutations or lifecycle through the main resource does not change the generation.",
			old:  base, new: changed(mutation("ConfigMap", `{"metadata":{"labels":{"a":"b"}}}`)), want: false,
		},
		"SP-32 lifecycle changed through the main resource": {
			seed: "A change to mutations or lifecycle through the main resource does not change the generation.",
			old:  base, new: changed(lifecycleHook("migrate")), want: false,
		},
		"SP-33 mutations changed through /mutations (which writes sync-requested-at)": {
			seed: "A write through the /mutations or /lifecycle subresource starts a reconcile at once.",
			old:  base,
			new: changed(mutation("ConfigMap", `{}`),
				annotation(v1.AnnotationSyncRequestedAt, "2026-12-02T10:05:00Z")),
			want: true,
		},
		"the finalizer added by the controller": {
			seed: "design: no controller loop",
			old:  base, new: changed(finalizer()), want: false,
		},
		"a label or another annotation": {
			seed: "design: only the listed events",
			old:  base, new: changed(label("team", "a"), annotation("note", "x")), want: false,
		},
		"only sync-force-requested-at changed": {
			seed: "design: only sync-requested-at is a trigger; /sync?force=true writes both",
			old:  base, new: changed(annotation(v1.AnnotationSyncForceRequestedAt, "2026-12-02T10:05:00Z")), want: false,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := releaseUpdateTriggers(tc.old, tc.new)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nreleaseUpdateTriggers (-want +got):\n%s", tc.seed, diff)
			}
			// The predicates the controller uses give the same answer, and a request
			// (not a resync) goes through the request watch only, at its priority.
			e := event.UpdateEvent{ObjectOld: tc.old, ObjectNew: tc.new}
			plain, requested := releasePredicate().Update(e), releasePriorityPredicate().Update(e)
			if diff := cmp.Diff(tc.want, plain || requested); diff != "" {
				t.Errorf("releasePredicate().Update || releasePriorityPredicate().Update (-want +got):\n%s", diff)
			}
			if plain && requested {
				t.Error("both watches enqueue the update")
			}
			isResync := tc.old.ResourceVersion == tc.new.ResourceVersion
			if requested != (tc.want && !isResync) {
				t.Errorf("releasePriorityPredicate().Update = %v, want it for every trigger but a resync", requested)
			}
		})
	}
}

func TestSP24_ReleasePredicateLetsEveryCreateThrough(t *testing.T) {
	p, prio := releasePredicate(), releasePriorityPredicate()
	got := map[string]bool{
		"create":                      p.Create(event.CreateEvent{Object: testRelease("a")}) || prio.Create(event.CreateEvent{Object: testRelease("a")}),
		"delete":                      p.Delete(event.DeleteEvent{Object: testRelease("a")}) || prio.Delete(event.DeleteEvent{Object: testRelease("a")}),
		"generic":                     p.Generic(event.GenericEvent{Object: testRelease("a")}) || prio.Generic(event.GenericEvent{Object: testRelease("a")}),
		"create through both watches": p.Create(event.CreateEvent{Object: testRelease("a")}) && prio.Create(event.CreateEvent{Object: testRelease("a")}),
	}
	want := map[string]bool{"create": true, "delete": true, "generic": true, "create through both watches": false}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// A new Release waits behind the work of Releases under way (0), an initial list
// behind everything but resyncs.
func TestCreatePriority(t *testing.T) {
	if got := createPriority(false); got != priorityCreated || got >= 0 || got <= handler.LowPriority {
		t.Errorf("a create: priority %d, want between the resyncs (%d) and the work under way (0)", got, handler.LowPriority)
	}
	if got := createPriority(true); got != handler.LowPriority {
		t.Errorf("the initial list: priority %d, want %d", got, handler.LowPriority)
	}
}

// SP-29, seed: "The release controller reconciles a Release when one of these events
// occurs: … The observer writes new health data to the ReleaseInventory." New health
// data is any change of the status but an object's message and assessedAt, which the
// controller never reads (docs/decisions/0132-message-only-status.md).
func TestSP29_InventoryStatusChangeTriggers(t *testing.T) {
	inv := func(rv string, f func(*v1.ReleaseInventory)) *v1.ReleaseInventory {
		i := &v1.ReleaseInventory{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "podinfo", ResourceVersion: rv}}
		i.Status.RenderRef = "sha256:1"
		i.Status.Health = v1.HealthProgressing
		if f != nil {
			f(i)
		}
		return i
	}
	web := v1.ObjectReference{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "team-a", Name: "web"}
	cases := map[string]struct {
		old, new *v1.ReleaseInventory
		want     bool
	}{
		"new health data": {
			old: inv("1", nil), new: inv("2", func(i *v1.ReleaseInventory) { i.Status.Health = v1.HealthHealthy }), want: true,
		},
		"new wave health": {
			old: inv("1", nil),
			new: inv("2", func(i *v1.ReleaseInventory) {
				i.Status.Waves = []v1.WaveHealth{{Wave: 0, Health: v1.HealthHealthy}}
			}),
			want: true,
		},
		"an object's health": {
			old: inv("1", func(i *v1.ReleaseInventory) {
				i.Status.Objects = []v1.ObjectHealth{{ObjectReference: web, Health: v1.HealthProgressing, Message: "Replicas: 0/1"}}
			}),
			new: inv("2", func(i *v1.ReleaseInventory) {
				i.Status.Objects = []v1.ObjectHealth{{ObjectReference: web, Health: v1.HealthDegraded, Message: "Replicas: 0/1"}}
			}),
			want: true,
		},
		"the drift": {
			old: inv("1", nil),
			new: inv("2", func(i *v1.ReleaseInventory) {
				i.Status.Drift = &v1.DriftStatus{Drifted: []v1.DriftedObject{{ObjectReference: web, Fields: []string{".spec.replicas"}}}}
			}),
			want: true,
		},
		"only an object's message and the time of the assessment": {
			old: inv("1", func(i *v1.ReleaseInventory) {
				i.Status.AssessedAt = &metav1.Time{Time: time.Unix(1, 0)}
				i.Status.Objects = []v1.ObjectHealth{{ObjectReference: web, Health: v1.HealthProgressing, Message: "Deployment generation is 1, but latest observed generation is 0"}}
			}),
			new: inv("2", func(i *v1.ReleaseInventory) {
				i.Status.AssessedAt = &metav1.Time{Time: time.Unix(2, 0)}
				i.Status.Objects = []v1.ObjectHealth{{ObjectReference: web, Health: v1.HealthProgressing, Message: "Available: 0/1"}}
			}),
			want: false,
		},
		"the controller's write of the object list": {
			old: inv("1", nil),
			new: inv("2", func(i *v1.ReleaseInventory) {
				i.Objects = []v1.InventoryObject{{ObjectReference: v1.ObjectReference{Version: "v1", Kind: "ConfigMap", Name: "a"}}}
			}),
			want: false,
		},
		"a resync": {old: inv("1", nil), new: inv("1", nil), want: false},
		"its deletion started": {
			old:  inv("1", nil),
			new:  inv("2", func(i *v1.ReleaseInventory) { i.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)} }),
			want: true,
		},
		"a write while it is being deleted": {
			old: inv("2", func(i *v1.ReleaseInventory) { i.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)} }),
			new: inv("3", func(i *v1.ReleaseInventory) {
				i.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)}
				i.Objects = []v1.InventoryObject{{ObjectReference: v1.ObjectReference{Version: "v1", Kind: "ConfigMap", Name: "a"}}}
			}),
			want: false,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := inventoryPredicate().Update(event.UpdateEvent{ObjectOld: tc.old, ObjectNew: tc.new})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if inventoryPredicate().Create(event.CreateEvent{Object: inv("1", nil)}) {
		t.Error("the creation of an inventory (by the controller) must not trigger")
	}
	deleting := inv("2", func(i *v1.ReleaseInventory) { i.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)} })
	if !inventoryPredicate().Create(event.CreateEvent{Object: deleting}) {
		t.Error("the first sight of an inventory whose deletion started must trigger: it may wait for its finalizer")
	}
}

func TestSP30_ClusterWaveConditionChange(t *testing.T) {
	base := testRelease("db", resourceVersion("1"),
		condition(v1.ConditionApplied, "True", v1.ReasonApplied),
		condition(v1.ConditionHealthy, "Unknown", v1.ReasonNotAssessed),
		condition(v1.ConditionReady, "False", v1.ReasonNotAssessed))
	cases := map[string]struct {
		new  *v1.Release
		want bool
	}{
		"Healthy becomes True": {
			new: with(base, resourceVersion("2"), condition(v1.ConditionHealthy, "True", v1.ReasonHealthy)), want: true,
		},
		"Applied becomes False": {
			new: with(base, resourceVersion("2"), condition(v1.ConditionApplied, "False", v1.ReasonDeployFailed)), want: true,
		},
		"only the reason of Applied changes": {
			new: with(base, resourceVersion("2"), condition(v1.ConditionApplied, "True", "Other")), want: false,
		},
		"only Ready changes": {
			new: with(base, resourceVersion("2"), condition(v1.ConditionReady, "True", "Ready")), want: false,
		},
		"a resync": {new: with(base), want: false},
		// Decision 0091: the Releases it held where it was may go on.
		"it moves to another Cluster": {
			new: with(base, resourceVersion("2"), generation(2), func(r *v1.Release) { r.Spec.Cluster = "prod-eu" }), want: true,
		},
		"it moves to another cluster wave": {
			new: with(base, resourceVersion("2"), generation(2), func(r *v1.Release) { r.Spec.ClusterWave = 3 }), want: true,
		},
		"a spec change": {
			new: with(base, resourceVersion("2"), generation(2), values(`{"a":1}`)), want: false,
		},
		// Decision 0162: a Release not ready whose deletion starts lets the higher waves go on.
		"its deletion starts": {new: with(base, resourceVersion("2"), deleting()), want: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := clusterWavePredicate().Update(event.UpdateEvent{ObjectOld: base, ObjectNew: tc.new})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	// A ready Release: an edit holds the higher waves (its conditions are of the spec
	// before), and the status of its new generation releases them, though no
	// condition's status changed (waveReady).
	ready := with(base, condition(v1.ConditionHealthy, "True", v1.ReasonHealthy))
	edited := with(ready, resourceVersion("2"), generation(2), values(`{"a":1}`))
	reconciled := with(edited, resourceVersion("3"),
		condition(v1.ConditionApplied, "True", v1.ReasonApplied), condition(v1.ConditionHealthy, "True", v1.ReasonHealthy))
	for name, tc := range map[string]struct {
		old, new *v1.Release
		want     bool
	}{
		"a ready Release is edited":                              {old: ready, new: edited, want: true},
		"the status of its new generation is written":            {old: edited, new: reconciled, want: true},
		"a status write of the same generation, still ready":     {old: reconciled, new: with(reconciled, resourceVersion("4")), want: false},
		"a second edit before the first one's status is written": {old: edited, new: with(edited, resourceVersion("4"), generation(3)), want: false},
	} {
		t.Run(name, func(t *testing.T) {
			got := clusterWavePredicate().Update(event.UpdateEvent{ObjectOld: tc.old, ObjectNew: tc.new})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
