package validation

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
)

// ReleaseInventory validates a ReleaseInventory's object list.
func ReleaseInventory(inv *convoyv1alpha1.ReleaseInventory) field.ErrorList {
	errs := ObjectMeta(&inv.ObjectMeta, true)
	return append(errs, inventoryContent(inv)...)
}

// ReleaseInventoryUpdate validates an updated ReleaseInventory.
func ReleaseInventoryUpdate(inv, old *convoyv1alpha1.ReleaseInventory) field.ErrorList {
	errs := ObjectMetaUpdate(&inv.ObjectMeta, &old.ObjectMeta)
	return append(errs, inventoryContent(inv)...)
}

func inventoryContent(inv *convoyv1alpha1.ReleaseInventory) field.ErrorList {
	var errs field.ErrorList
	if inv.RenderRef != "" {
		errs = append(errs, renderRef(inv.RenderRef, field.NewPath("renderRef"))...)
	}
	for i := range inv.Objects {
		errs = append(errs, objectReference(&inv.Objects[i].ObjectReference, field.NewPath("objects").Index(i))...)
	}
	if sw := inv.SyncWave; sw != nil && (sw.Current < 1 || sw.Current > sw.Total) {
		errs = append(errs, field.Invalid(field.NewPath("syncWave"), *sw,
			"current must be at least 1 and at most total: how many of the render's waves are applied"))
	}
	return errs
}

func objectReference(ref *convoyv1alpha1.ObjectReference, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if ref.Version == "" {
		errs = append(errs, field.Required(path.Child("version"), ""))
	}
	if ref.Kind == "" {
		errs = append(errs, field.Required(path.Child("kind"), ""))
	}
	if ref.Name == "" {
		errs = append(errs, field.Required(path.Child("name"), ""))
	}
	return errs
}
