package apply

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"kumodo.io/convoy/api/v1alpha1"
)

func TestDeleteInReverseWaveOrder(t *testing.T) {
	e := integration(t)
	first := configMap(e.ns, "first", nil)
	// A finalizer that nothing removes holds the last wave while it terminates.
	last := with(configMap(e.ns, "last", nil), func(u *unstructured.Unstructured) {
		u.SetFinalizers([]string{"example.com/hold"})
	})
	disabled := with(configMap(e.ns, "disabled", nil), annotate(v1alpha1.AnnotationPrune, v1alpha1.PruneDisabled))
	objs := []Object{{Wave: 0, Object: first}, {Wave: 0, Object: disabled}, {Wave: 2, Object: last}}
	e.applyAll(t, objs...)
	inventory := Entries(objs)

	res, err := e.applier.Delete(e.ctx, DeleteInput{Release: release, Inventory: inventory, Policy: v1alpha1.DeletionPolicyDelete})
	if err != nil {
		t.Fatal(err)
	}
	want := &DeleteResult{Remaining: []v1alpha1.InventoryObject{entryOf(last, 2), entryOf(first, 0), entryOf(disabled, 0)}}
	if diff := cmp.Diff(want, res, equateEmpty); diff != "" {
		t.Errorf("first Delete (-want +got):\n%s", diff)
	}
	live, _ := e.get(t, last)
	if live.GetDeletionTimestamp() == nil {
		t.Errorf("%s is not being deleted", describeObject(last))
	}
	e.mustExist(t, first) // wave 0 waits for wave 2 to be gone

	live.SetFinalizers(nil)
	if err := e.client.Update(e.ctx, live); err != nil {
		t.Fatal(err)
	}
	res, err = e.applier.Delete(e.ctx, DeleteInput{Release: release, Inventory: inventory, Policy: v1alpha1.DeletionPolicyDelete})
	if err != nil {
		t.Fatal(err)
	}
	want = &DeleteResult{
		Gone:    true,
		Deleted: []v1alpha1.InventoryObject{entryOf(last, 2), entryOf(first, 0)},
		Skipped: []v1alpha1.InventoryObject{entryOf(disabled, 0)},
	}
	if diff := cmp.Diff(want, res, equateEmpty); diff != "" {
		t.Errorf("second Delete (-want +got):\n%s", diff)
	}
	e.mustNotExist(t, first, last)
	e.mustExist(t, disabled)
}

func TestDeleteOrphanDeletesNothing(t *testing.T) {
	e := integration(t)
	cm := configMap(e.ns, "c", nil)
	e.applyAll(t, Object{Object: cm})
	res, err := e.applier.Delete(e.ctx, DeleteInput{Release: release, Inventory: Entries([]Object{{Object: cm}}), Policy: v1alpha1.DeletionPolicyOrphan})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Gone || len(res.Deleted) != 0 {
		t.Errorf("Orphan: %+v, want Gone and nothing deleted", res)
	}
	e.mustExist(t, cm)
}
