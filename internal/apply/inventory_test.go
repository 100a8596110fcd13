package apply

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"kumodo.io/convoy/api/v1alpha1"
)

// entry builds an inventory entry: entry("apps/v1", "Deployment", "ns", "web", 1).
func entry(apiVersion, kind, namespace, name string, wave int32) v1alpha1.InventoryObject {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetNamespace(namespace)
	u.SetName(name)
	return Object{Wave: wave, Object: u}.Entry()
}

var (
	deployWeb   = entry("apps/v1", "Deployment", "app", "web", 1)
	serviceWeb  = entry("v1", "Service", "app", "web", 1)
	configApp   = entry("v1", "ConfigMap", "app", "config", 0)
	namespace   = entry("v1", "Namespace", "", "app", -1)
	jobMigrate  = entry("batch/v1", "Job", "app", "migrate", 2)
	crdWidgets  = entry("apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "widgets.example.com", 0)
	widgetBeta  = entry("example.com/v1beta1", "Widget", "app", "w", 1)
	widgetV1    = entry("example.com/v1", "Widget", "app", "w", 1)
	configApp3  = entry("v1", "ConfigMap", "app", "config", 3)
	secretOther = entry("v1", "Secret", "other", "config", 0)
)

var equateEmpty = cmpopts.EquateEmpty()

func TestEntry(t *testing.T) {
	want := v1alpha1.InventoryObject{
		ObjectReference: v1alpha1.ObjectReference{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "app", Name: "web"},
		Wave:            1,
	}
	if diff := cmp.Diff(want, deployWeb); diff != "" {
		t.Errorf("Entry (-want +got):\n%s", diff)
	}
}

func TestMerge(t *testing.T) {
	cases := map[string]struct {
		old, applied, want []v1alpha1.InventoryObject
	}{
		"empty": {},
		"first wave into an empty inventory": {
			applied: []v1alpha1.InventoryObject{deployWeb, serviceWeb},
			want:    []v1alpha1.InventoryObject{serviceWeb, deployWeb},
		},
		"grows as waves apply: old ∪ applied": {
			old:     []v1alpha1.InventoryObject{configApp, deployWeb},
			applied: []v1alpha1.InventoryObject{jobMigrate},
			want:    []v1alpha1.InventoryObject{configApp, deployWeb, jobMigrate},
		},
		"an object in both is listed once, with the applied wave": {
			old:     []v1alpha1.InventoryObject{configApp, deployWeb},
			applied: []v1alpha1.InventoryObject{configApp3},
			want:    []v1alpha1.InventoryObject{deployWeb, configApp3},
		},
		"a new API version of the same object replaces the old one": {
			old:     []v1alpha1.InventoryObject{widgetBeta},
			applied: []v1alpha1.InventoryObject{widgetV1},
			want:    []v1alpha1.InventoryObject{widgetV1},
		},
		"same name in another namespace or kind is another object": {
			old:     []v1alpha1.InventoryObject{configApp},
			applied: []v1alpha1.InventoryObject{secretOther},
			want:    []v1alpha1.InventoryObject{configApp, secretOther},
		},
		"sorted by wave, group, kind, namespace, name": {
			applied: []v1alpha1.InventoryObject{jobMigrate, serviceWeb, deployWeb, crdWidgets, configApp, namespace},
			want:    []v1alpha1.InventoryObject{namespace, configApp, crdWidgets, serviceWeb, deployWeb, jobMigrate},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			oldCopy := append([]v1alpha1.InventoryObject(nil), tc.old...)
			got := Merge(tc.old, tc.applied)
			if diff := cmp.Diff(tc.want, got, equateEmpty); diff != "" {
				t.Errorf("Merge (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(oldCopy, tc.old, equateEmpty); diff != "" {
				t.Errorf("Merge modified old (-before +after):\n%s", diff)
			}
		})
	}
}

func TestStale(t *testing.T) {
	cases := map[string]struct {
		inventory, render, want []v1alpha1.InventoryObject
	}{
		"nothing applied yet": {
			render: []v1alpha1.InventoryObject{deployWeb},
		},
		"render unchanged": {
			inventory: []v1alpha1.InventoryObject{configApp, deployWeb},
			render:    []v1alpha1.InventoryObject{configApp, deployWeb},
		},
		"what the render dropped, highest wave first": {
			inventory: []v1alpha1.InventoryObject{namespace, configApp, deployWeb, serviceWeb, jobMigrate},
			render:    []v1alpha1.InventoryObject{namespace},
			want:      []v1alpha1.InventoryObject{jobMigrate, deployWeb, serviceWeb, configApp},
		},
		"an object that moved to another wave is not stale": {
			inventory: []v1alpha1.InventoryObject{configApp, deployWeb},
			render:    []v1alpha1.InventoryObject{configApp3},
			want:      []v1alpha1.InventoryObject{deployWeb},
		},
		"an object whose API version changed is not stale": {
			inventory: []v1alpha1.InventoryObject{widgetBeta, crdWidgets},
			render:    []v1alpha1.InventoryObject{widgetV1},
			want:      []v1alpha1.InventoryObject{crdWidgets},
		},
		"an empty render makes everything stale": {
			inventory: []v1alpha1.InventoryObject{crdWidgets, namespace, widgetV1},
			want:      []v1alpha1.InventoryObject{widgetV1, crdWidgets, namespace},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Stale(tc.inventory, tc.render), equateEmpty); diff != "" {
				t.Errorf("Stale (-want +got):\n%s", diff)
			}
		})
	}
}

// generation returns e with the generation g recorded.
func generation(e v1alpha1.InventoryObject, g int64) v1alpha1.InventoryObject {
	e.Generation = g
	return e
}

// uid is e with the uid an apply recorded.
func uid(e v1alpha1.InventoryObject, u types.UID) v1alpha1.InventoryObject {
	e.UID = u
	return e
}

func TestAfterPrune(t *testing.T) {
	cases := map[string]struct {
		inventory, render, failed, want []v1alpha1.InventoryObject
	}{
		"a successful prune leaves exactly the render": {
			render: []v1alpha1.InventoryObject{deployWeb, configApp},
			want:   []v1alpha1.InventoryObject{configApp, deployWeb},
		},
		"a failed delete stays in the inventory": {
			render: []v1alpha1.InventoryObject{configApp},
			failed: []v1alpha1.InventoryObject{jobMigrate},
			want:   []v1alpha1.InventoryObject{configApp, jobMigrate},
		},
		"the generations the inventory recorded are kept": {
			inventory: []v1alpha1.InventoryObject{generation(deployWeb, 3), generation(jobMigrate, 2)},
			render:    []v1alpha1.InventoryObject{deployWeb, configApp},
			failed:    []v1alpha1.InventoryObject{generation(jobMigrate, 2)},
			want:      []v1alpha1.InventoryObject{configApp, generation(deployWeb, 3), generation(jobMigrate, 2)},
		},
		"the uids the inventory recorded are kept": {
			inventory: []v1alpha1.InventoryObject{uid(deployWeb, "u-web"), uid(jobMigrate, "u-job")},
			render:    []v1alpha1.InventoryObject{deployWeb, configApp},
			want:      []v1alpha1.InventoryObject{configApp, uid(deployWeb, "u-web")},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, AfterPrune(tc.inventory, tc.render, tc.failed), equateEmpty); diff != "" {
				t.Errorf("AfterPrune (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEntriesAndWaves(t *testing.T) {
	objs := []Object{
		{Wave: 2, Object: obj("batch/v1", "Job", "app", "migrate")},
		{Wave: 0, Object: obj("v1", "ConfigMap", "app", "config")},
		{Wave: -1, Object: obj("v1", "Namespace", "", "app")},
		{Wave: 0, Object: obj("v1", "Secret", "app", "s")},
	}
	plan, err := NewPlan(objs)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int32{-1, 0, 2}, plan.Waves()); diff != "" {
		t.Errorf("Waves (-want +got):\n%s", diff)
	}
	wave := int32(0)
	want := []v1alpha1.InventoryObject{
		entry("v1", "ConfigMap", "app", "config", 0), entry("v1", "Secret", "app", "s", 0),
	}
	if diff := cmp.Diff(want, plan.Entries(&wave)); diff != "" {
		t.Errorf("Entries(0) (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(Entries(objs), plan.Entries(nil)); diff != "" {
		t.Errorf("Plan.Entries(nil) differs from Entries (-want +got):\n%s", diff)
	}
	if got := len(Entries(objs)); got != 4 {
		t.Errorf("Entries: got %d entries, want 4", got)
	}
	if _, err := NewPlan([]Object{{Wave: 0}}); err == nil {
		t.Error("NewPlan with a nil object: got no error")
	}
}

func obj(apiVersion, kind, namespace, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetNamespace(namespace)
	u.SetName(name)
	return u
}

func TestMergeKeepsRecordedGenerations(t *testing.T) {
	old := []v1alpha1.InventoryObject{generation(deployWeb, 4), configApp}
	grown := Merge(old, []v1alpha1.InventoryObject{deployWeb, jobMigrate})
	want := []v1alpha1.InventoryObject{configApp, generation(deployWeb, 4), jobMigrate}
	if diff := cmp.Diff(want, grown); diff != "" {
		t.Errorf("Merge of entries without a generation (-want +got):\n%s", diff)
	}
	newer := Merge(old, []v1alpha1.InventoryObject{generation(deployWeb, 5)})
	if diff := cmp.Diff([]v1alpha1.InventoryObject{configApp, generation(deployWeb, 5)}, newer); diff != "" {
		t.Errorf("Merge of a newer generation (-want +got):\n%s", diff)
	}
}

func TestAppliedRecordsTheGenerationsOfAppliedObjects(t *testing.T) {
	// Every applied object's generation is recorded: an unchanged one may be newer
	// than its entry (an earlier apply whose inventory write was lost), and one
	// deleted by hand and created again is older (generation 1, entry 5).
	entries := []v1alpha1.InventoryObject{configApp, generation(deployWeb, 2), generation(jobMigrate, 5), serviceWeb}
	changes := []Change{
		{Object: deployWeb.ObjectReference, Action: Configured, Generation: 3},
		{Object: configApp.ObjectReference, Action: Unchanged, Generation: 4},
		{Object: jobMigrate.ObjectReference, Action: Created, Generation: 1},
		{Object: serviceWeb.ObjectReference, Action: Unchanged},
		{Object: crdWidgets.ObjectReference, Action: Created, Generation: 1},
	}
	// A new object at generation 1 keeps an entry without one (no second write of a
	// first apply's inventory).
	entries = append(entries, crdWidgets)
	want := []v1alpha1.InventoryObject{generation(configApp, 4), generation(deployWeb, 3), generation(jobMigrate, 1), serviceWeb, crdWidgets}
	if diff := cmp.Diff(want, Applied(entries, changes)); diff != "" {
		t.Errorf("Applied (-want +got):\n%s", diff)
	}
	if entries[1].Generation != 2 {
		t.Error("Applied modified its argument")
	}
}

func TestMergeKeepsRecordedUIDs(t *testing.T) {
	old := []v1alpha1.InventoryObject{uid(generation(deployWeb, 4), "u-web"), configApp}
	grown := Merge(old, []v1alpha1.InventoryObject{deployWeb, configApp})
	want := []v1alpha1.InventoryObject{configApp, uid(generation(deployWeb, 4), "u-web")}
	if diff := cmp.Diff(want, grown); diff != "" {
		t.Errorf("Merge of entries without a uid (-want +got):\n%s", diff)
	}
}

// An object the apply created may have the name of an earlier object (deleted with an
// earlier Release of the same name), at any generation: the uid tells them apart.
func TestAppliedRecordsTheUIDsOfCreatedObjects(t *testing.T) {
	cases := map[string]struct {
		entry  v1alpha1.InventoryObject
		change Change
		want   v1alpha1.InventoryObject
	}{
		"created: the uid, and no generation 1": {
			entry:  deployWeb,
			change: Change{Object: deployWeb.ObjectReference, Action: Created, Generation: 1, UID: "u-new"},
			want:   uid(deployWeb, "u-new"),
		},
		"created again after a delete by hand: the new uid and generation": {
			entry:  uid(generation(deployWeb, 5), "u-old"),
			change: Change{Object: deployWeb.ObjectReference, Action: Created, Generation: 1, UID: "u-new"},
			want:   uid(generation(deployWeb, 1), "u-new"),
		},
		"configured, the object convoy created": {
			entry:  uid(deployWeb, "u-web"),
			change: Change{Object: deployWeb.ObjectReference, Action: Configured, Generation: 2, UID: "u-web"},
			want:   uid(generation(deployWeb, 2), "u-web"),
		},
		"configured, an object someone else put in its place: its uid": {
			entry:  uid(generation(deployWeb, 2), "u-web"),
			change: Change{Object: deployWeb.ObjectReference, Action: Configured, Generation: 3, UID: "u-other"},
			want:   uid(generation(deployWeb, 3), "u-other"),
		},
		"unchanged, an entry without a uid: none (the steady state writes nothing new)": {
			entry:  generation(deployWeb, 2),
			change: Change{Object: deployWeb.ObjectReference, Action: Unchanged, Generation: 2, UID: "u-web"},
			want:   generation(deployWeb, 2),
		},
		"unchanged, the uid not known: the entry's": {
			entry:  uid(generation(deployWeb, 2), "u-web"),
			change: Change{Object: deployWeb.ObjectReference, Action: Unchanged, Generation: 2},
			want:   uid(generation(deployWeb, 2), "u-web"),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Applied([]v1alpha1.InventoryObject{tc.entry}, []Change{tc.change})
			if diff := cmp.Diff([]v1alpha1.InventoryObject{tc.want}, got); diff != "" {
				t.Errorf("Applied (-want +got):\n%s", diff)
			}
		})
	}
}
