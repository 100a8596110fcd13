package apply

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"kumodo.io/convoy/api/v1alpha1"
)

func TestKept(t *testing.T) {
	keep := func(value string) func(*unstructured.Unstructured) { return annotate("helm.sh/resource-policy", value) }
	cases := map[string]struct {
		object *unstructured.Unstructured
		want   bool
	}{
		"keep": {with(configMap("app", "c", nil), keep("keep")), true},
		"as Helm's uninstall reads it, without case and blanks": {with(configMap("app", "c", nil), keep(" Keep\n")), true},
		"another policy":          {with(configMap("app", "c", nil), keep("delete")), false},
		"empty":                   {with(configMap("app", "c", nil), keep("")), false},
		"no annotation":           {configMap("app", "c", nil), false},
		"convoy's prune disabled": {with(configMap("app", "c", nil), annotate(v1alpha1.AnnotationPrune, v1alpha1.PruneDisabled)), false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var want []v1alpha1.ObjectReference
			if tc.want {
				want = []v1alpha1.ObjectReference{entryOf(tc.object, 0).ObjectReference}
			}
			if diff := cmp.Diff(want, Kept([]Object{{Object: tc.object}})); diff != "" {
				t.Errorf("Kept (-want +got):\n%s", diff)
			}
		})
	}
}

// keptObjects applies, in e's namespace, a ConfigMap annotated keep on the target
// (liveKeep), one that the test lists as kept by its render but whose live object
// says nothing (renderKeep), and a plain one; the two kept ones in a higher wave, so
// that a deletion shows they block nothing.
func keptObjects(t *testing.T, e *env) (liveKeep, renderKeep, plain *unstructured.Unstructured, objs []Object) {
	t.Helper()
	liveKeep = with(configMap(e.ns, "live-keep", nil), annotate("helm.sh/resource-policy", "keep"))
	renderKeep = configMap(e.ns, "render-keep", nil)
	plain = configMap(e.ns, "plain", nil)
	objs = []Object{{Wave: 1, Object: liveKeep}, {Wave: 1, Object: renderKeep}, {Wave: 0, Object: plain}}
	e.applyAll(t, objs...)
	return liveKeep, renderKeep, plain, objs
}

func TestPruneLeavesKeptObjectsAndLetsGoOfThem(t *testing.T) {
	e := integration(t)
	liveKeep, renderKeep, plain, objs := keptObjects(t, e)
	stays := configMap(e.ns, "stays", nil)
	e.applyAll(t, Object{Object: stays})
	render := Entries([]Object{{Object: stays}})

	res, err := e.applier.Prune(e.ctx, PruneInput{
		Release:   release,
		Inventory: Merge(Entries(objs), render),
		Render:    render,
		Keep:      []v1alpha1.ObjectReference{entryOf(renderKeep, 1).ObjectReference},
	})
	if err != nil {
		t.Fatalf("Prune: %v", err)
	}
	e.mustExist(t, liveKeep, renderKeep, stays)
	e.mustNotExist(t, plain)
	want := &PruneResult{
		Deleted:   []v1alpha1.InventoryObject{entryOf(plain, 0)},
		Kept:      []v1alpha1.InventoryObject{entryOf(renderKeep, 1), entryOf(liveKeep, 1)},
		Inventory: render,
	}
	if diff := cmp.Diff(want, res, equateEmpty); diff != "" {
		t.Errorf("PruneResult (-want +got):\n%s", diff)
	}
}

func TestDeleteLeavesKeptObjects(t *testing.T) {
	e := integration(t)
	liveKeep, renderKeep, plain, objs := keptObjects(t, e)

	res, err := e.applier.Delete(e.ctx, DeleteInput{
		Release:   release,
		Inventory: Entries(objs),
		Policy:    v1alpha1.DeletionPolicyDelete,
		Keep:      []v1alpha1.ObjectReference{entryOf(renderKeep, 1).ObjectReference},
	})
	if err != nil {
		t.Fatalf("Delete: %v", err)
	}
	e.mustExist(t, liveKeep, renderKeep)
	e.mustNotExist(t, plain)
	want := &DeleteResult{
		Gone:    true,
		Deleted: []v1alpha1.InventoryObject{entryOf(plain, 0)},
		Kept:    []v1alpha1.InventoryObject{entryOf(renderKeep, 1), entryOf(liveKeep, 1)},
	}
	if diff := cmp.Diff(want, res, equateEmpty); diff != "" {
		t.Errorf("DeleteResult (-want +got):\n%s", diff)
	}
}
