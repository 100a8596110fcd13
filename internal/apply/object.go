package apply

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"kumodo.io/convoy/api/v1alpha1"
)

// Object is one rendered object and its sync wave.
type Object struct {
	// Wave is the object's sync wave.
	Wave int32
	// Object is the rendered object. The applier does not modify it.
	Object *unstructured.Unstructured
}

// Entry is the inventory entry of a rendered object.
func (o Object) Entry() v1alpha1.InventoryObject {
	gvk := o.Object.GroupVersionKind()
	return v1alpha1.InventoryObject{
		ObjectReference: v1alpha1.ObjectReference{
			Group:     gvk.Group,
			Version:   gvk.Version,
			Kind:      gvk.Kind,
			Namespace: o.Object.GetNamespace(),
			Name:      o.Object.GetName(),
		},
		Wave: o.Wave,
	}
}

// Entries returns the inventory entries of a render, in inventory order.
func Entries(objects []Object) []v1alpha1.InventoryObject {
	out := make([]v1alpha1.InventoryObject, 0, len(objects))
	for _, o := range objects {
		out = append(out, o.Entry())
	}
	return Merge(nil, out)
}

// identity is what makes two inventory entries the same object: the API
// version is left out, so a render that moves a kind from v1beta1 to v1
// keeps its object instead of pruning it.
type identity struct {
	group, kind, namespace, name string
}

func identityOf(ref v1alpha1.ObjectReference) identity {
	return identity{group: ref.Group, kind: ref.Kind, namespace: ref.Namespace, name: ref.Name}
}

// Describe names an object for messages: "Deployment.apps team-a/podinfo",
// "Namespace podinfo".
func Describe(ref v1alpha1.ObjectReference) string {
	kind := ref.Kind
	if ref.Group != "" {
		kind += "." + ref.Group
	}
	if ref.Namespace == "" {
		return kind + " " + ref.Name
	}
	return kind + " " + ref.Namespace + "/" + ref.Name
}

func gvkOf(ref v1alpha1.ObjectReference) schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: ref.Group, Version: ref.Version, Kind: ref.Kind}
}

// isCRD reports whether the reference or object is a CustomResourceDefinition.
func isCRD(group, kind string) bool {
	return group == "apiextensions.k8s.io" && kind == "CustomResourceDefinition"
}

func isNamespace(group, kind string) bool {
	return group == "" && kind == "Namespace"
}

// compareEntries orders inventory entries by wave, then group, kind,
// namespace and name.
func compareEntries(a, b v1alpha1.InventoryObject) int {
	if a.Wave != b.Wave {
		if a.Wave < b.Wave {
			return -1
		}
		return 1
	}
	for _, c := range [][2]string{{a.Group, b.Group}, {a.Kind, b.Kind}, {a.Namespace, b.Namespace}, {a.Name, b.Name}} {
		if n := strings.Compare(c[0], c[1]); n != 0 {
			return n
		}
	}
	return 0
}

// byWaveDescending groups entries by wave, highest wave first.
func byWaveDescending(entries []v1alpha1.InventoryObject) [][]v1alpha1.InventoryObject {
	sorted := slices.Clone(entries)
	slices.SortStableFunc(sorted, func(a, b v1alpha1.InventoryObject) int { return -compareEntries(a, b) })
	var groups [][]v1alpha1.InventoryObject
	for i, e := range sorted {
		if i == 0 || e.Wave != sorted[i-1].Wave {
			groups = append(groups, nil)
		}
		groups[len(groups)-1] = append(groups[len(groups)-1], e)
	}
	return groups
}

func objectFor(ref v1alpha1.ObjectReference) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvkOf(ref))
	u.SetNamespace(ref.Namespace)
	u.SetName(ref.Name)
	return u
}

func mustNotBeNil(objects []Object) error {
	for i, o := range objects {
		if o.Object == nil {
			return fmt.Errorf("render object %d is nil", i)
		}
	}
	return nil
}
