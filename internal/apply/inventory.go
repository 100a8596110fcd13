package apply

import (
	"slices"

	"kumodo.io/convoy/api/v1alpha1"
)

// The ReleaseInventory's object list, as pure functions. The controller
// writes the list; these functions compute it:
//
//   - before or after a wave is applied: Merge(inventory, Entries(wave objects)),
//     so the list grows as waves apply and a crash loses track of nothing;
//   - after a wave is applied: Applied(inventory, changes), the generations the
//     apply left the objects at and the uids of the objects it created;
//   - after a prune: AfterPrune(inventory, Entries(render), result.Failed), exactly
//     the render plus what could not be deleted (tried again next time).

// Merge returns old ∪ applied, one entry per object (group, kind, namespace,
// name; the version does not count). An object in both takes its version and
// wave from applied, and its generation and uid too unless applied has none (0,
// ""): a list grown before an apply keeps what the last apply recorded. The result is sorted
// by wave, group, kind, namespace and name; neither argument is modified.
func Merge(old, applied []v1alpha1.InventoryObject) []v1alpha1.InventoryObject {
	index := make(map[identity]int, len(old)+len(applied))
	out := make([]v1alpha1.InventoryObject, 0, len(old)+len(applied))
	for _, list := range [][]v1alpha1.InventoryObject{old, applied} {
		for _, e := range list {
			id := identityOf(e.ObjectReference)
			if i, ok := index[id]; ok {
				if e.Generation == 0 {
					e.Generation = out[i].Generation
				}
				if e.UID == "" {
					e.UID = out[i].UID
				}
				out[i] = e
				continue
			}
			index[id] = len(out)
			out = append(out, e)
		}
	}
	slices.SortStableFunc(out, compareEntries)
	return out
}

// Stale returns what inventory lists and render lacks, in reverse wave order
// (highest wave first, and within a wave the reverse of inventory order): the
// order to delete them in.
func Stale(inventory, render []v1alpha1.InventoryObject) []v1alpha1.InventoryObject {
	inRender := make(map[identity]bool, len(render))
	for _, e := range render {
		inRender[identityOf(e.ObjectReference)] = true
	}
	var stale []v1alpha1.InventoryObject
	for _, e := range inventory {
		if !inRender[identityOf(e.ObjectReference)] {
			stale = append(stale, e)
		}
	}
	return ReverseWaveOrder(stale)
}

// ReverseWaveOrder returns entries highest wave first, and within a wave in
// the reverse of inventory order: the order in which to delete them.
func ReverseWaveOrder(entries []v1alpha1.InventoryObject) []v1alpha1.InventoryObject {
	out := slices.Clone(entries)
	slices.SortStableFunc(out, func(a, b v1alpha1.InventoryObject) int { return -compareEntries(a, b) })
	return out
}

// AfterPrune is the inventory after a prune: the render, plus the stale
// objects whose delete failed (so the next reconcile tries again). Objects
// the prune deleted, found gone, left alone on purpose (prune disabled,
// taken over by another Release, CRDs) or kept (helm.sh/resource-policy:
// keep) are no longer tracked. The generations and uids
// recorded in inventory are kept.
func AfterPrune(inventory, render, failed []v1alpha1.InventoryObject) []v1alpha1.InventoryObject {
	out := Merge(failed, render)
	recorded := make(map[identity]v1alpha1.InventoryObject, len(inventory))
	for _, e := range inventory {
		recorded[identityOf(e.ObjectReference)] = e
	}
	for i := range out {
		r := recorded[identityOf(out[i].ObjectReference)]
		if out[i].Generation == 0 {
			out[i].Generation = r.Generation
		}
		if out[i].UID == "" {
			out[i].UID = r.UID
		}
	}
	return out
}

// Applied records in the inventory entries the generation that the apply left each
// object at (created, configured or unchanged), so that the observer does not take a
// view of the object from before the apply for the new render's health. Every applied
// object is recorded, not only the changed ones: an entry can hold an older
// generation than the object has (an apply whose inventory write was lost, an object
// deleted by hand and created again with generation 1), and the observer must compare
// its view with what is on the cluster now. An object without a generation keeps its
// entry's.
//
// A generation says nothing of which object it is: an object of the same name may
// have existed before the apply created this one (deleted with an earlier Release of
// the same name, or by hand), at any generation, and the observer's view may still be
// of it. So the uid of an object the apply created is recorded too (decision 0234),
// and an entry that has a uid follows the object the apply found (someone else may
// have replaced it). An entry without a uid gets none from an apply that did not
// create the object: the steady state writes nothing new.
func Applied(entries []v1alpha1.InventoryObject, changes []Change) []v1alpha1.InventoryObject {
	applied := make(map[identity]Change, len(changes))
	for _, c := range changes {
		applied[identityOf(c.Object)] = c
	}
	out := slices.Clone(entries)
	for i := range out {
		c, ok := applied[identityOf(out[i].ObjectReference)]
		if !ok {
			continue
		}
		if c.UID != "" && (c.Action == Created || out[i].UID != "") {
			out[i].UID = c.UID
		}
		if g := c.Generation; g > 0 && (out[i].Generation != 0 || g != 1) {
			// Generation 1 on an entry without one is not recorded: the object's spec
			// never changed since it was created, so no view of this object predates
			// what was applied (the uid tells it from an earlier one).
			out[i].Generation = g
		}
	}
	return out
}
