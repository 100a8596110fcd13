package apply

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"kumodo.io/convoy/api/v1alpha1"
)

func TestApplyWaveAppliesOnlyTheWaveAskedFor(t *testing.T) {
	e := integration(t)
	first := configMap(e.ns, "first", map[string]string{"k": "v"})
	second := configMap(e.ns, "second", map[string]string{"k": "v"})
	objs := []Object{{Wave: 1, Object: second}, {Wave: 0, Object: first}}
	plan, err := e.applier.DryRun(e.ctx, objs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int32{0, 1}, plan.Waves()); diff != "" {
		t.Errorf("Waves (-want +got):\n%s", diff)
	}

	res, err := e.applier.ApplyWave(e.ctx, plan, 0)
	if err != nil {
		t.Fatal(err)
	}
	e.mustExist(t, first)
	e.mustNotExist(t, second)
	if diff := cmp.Diff([]v1alpha1.InventoryObject{entry("v1", "ConfigMap", e.ns, "first", 0)}, res.Entries); diff != "" {
		t.Errorf("wave 0 entries (-want +got):\n%s", diff)
	}
	created, _ := e.get(t, first)
	if diff := cmp.Diff([]Change{{Object: res.Entries[0].ObjectReference, Action: Created, UID: created.GetUID()}}, res.Changes); diff != "" {
		t.Errorf("wave 0 changes (-want +got):\n%s", diff)
	}

	// The inventory grows as waves apply.
	inventory := Merge(nil, res.Entries)
	res, err = e.applier.ApplyWave(e.ctx, plan, 1)
	if err != nil {
		t.Fatal(err)
	}
	e.mustExist(t, first, second)
	inventory = Merge(inventory, res.Entries)
	if diff := cmp.Diff(Entries(objs), inventory); diff != "" {
		t.Errorf("inventory after both waves (-want +got):\n%s", diff)
	}
}

func TestApplyUnchangedObjectWritesNothing(t *testing.T) {
	e := integration(t)
	cm := configMap(e.ns, "c", map[string]string{"k": "v"})
	e.applyAll(t, Object{Object: cm})
	before, _ := e.get(t, cm)

	t.Run("after a dry run", func(t *testing.T) {
		plan, err := e.applier.DryRun(e.ctx, []Object{{Object: cm}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		res, err := e.applier.ApplyWave(e.ctx, plan, 0)
		if err != nil {
			t.Fatal(err)
		}
		if res.Changed() {
			t.Errorf("changes: %v, want none", res.Changes)
		}
	})
	t.Run("without a dry run (forced)", func(t *testing.T) {
		plan, err := NewPlan([]Object{{Object: cm}})
		if err != nil {
			t.Fatal(err)
		}
		res, err := e.applier.ApplyWave(e.ctx, plan, 0)
		if err != nil {
			t.Fatal(err)
		}
		if res.Changed() {
			t.Errorf("changes: %v, want none", res.Changes)
		}
	})
	after, _ := e.get(t, cm)
	if before.GetResourceVersion() != after.GetResourceVersion() {
		t.Errorf("resourceVersion changed from %s to %s", before.GetResourceVersion(), after.GetResourceVersion())
	}

	// A changed render is applied, and reported so.
	changed := configMap(e.ns, "c", map[string]string{"k": "v2"})
	plan, err := e.applier.DryRun(e.ctx, []Object{{Object: changed}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.applier.ApplyWave(e.ctx, plan, 0)
	if err != nil {
		t.Fatal(err)
	}
	live, _ := e.get(t, cm)
	if diff := cmp.Diff([]Change{{Object: Object{Object: cm}.Entry().ObjectReference, Action: Configured, UID: live.GetUID()}}, res.Changes); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	if got, _, _ := unstructured.NestedString(live.Object, "data", "k"); got != "v2" {
		t.Errorf("data.k = %q, want v2", got)
	}
}

func TestApplyForcesConflicts(t *testing.T) {
	e := integration(t)
	theirs := configMap(e.ns, "c", map[string]string{"k": "theirs"})
	if err := e.client.Apply(e.ctx, client.ApplyConfigurationFromUnstructured(theirs.DeepCopy()), client.FieldOwner("someone-else")); err != nil {
		t.Fatal(err)
	}
	ours := configMap(e.ns, "c", map[string]string{"k": "ours"})

	for name, plan := range map[string]func() (*Plan, error){
		"after a dry run":            func() (*Plan, error) { return e.applier.DryRun(e.ctx, []Object{{Object: ours}}, nil) },
		"without a dry run (forced)": func() (*Plan, error) { return NewPlan([]Object{{Object: ours}}) },
	} {
		t.Run(name, func(t *testing.T) {
			// Give the field back to the other manager.
			if err := e.client.Apply(e.ctx, client.ApplyConfigurationFromUnstructured(theirs.DeepCopy()), client.FieldOwner("someone-else"), client.ForceOwnership); err != nil {
				t.Fatal(err)
			}
			p, err := plan()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := e.applier.ApplyWave(e.ctx, p, 0); err != nil {
				t.Fatal(err)
			}
			live, _ := e.get(t, ours)
			if got, _, _ := unstructured.NestedString(live.Object, "data", "k"); got != "ours" {
				t.Errorf("data.k = %q, want ours", got)
			}
			if owner := fieldOwner(live, "f:data", "f:k"); owner != v1alpha1.FieldManager {
				t.Errorf("data.k is owned by %q, want %q", owner, v1alpha1.FieldManager)
			}
		})
	}
}

// fieldOwner returns the manager whose Apply entry owns the field at path.
func fieldOwner(u *unstructured.Unstructured, path ...string) string {
	for _, mf := range u.GetManagedFields() {
		if mf.FieldsV1 == nil {
			continue
		}
		var fields map[string]any
		if err := jsonUnmarshal(mf.FieldsV1.GetRawBytes(), &fields); err != nil {
			continue
		}
		node := fields
		found := true
		for _, p := range path {
			next, ok := node[p].(map[string]any)
			if !ok {
				found = false
				break
			}
			node = next
		}
		if found {
			return mf.Manager
		}
	}
	return ""
}
