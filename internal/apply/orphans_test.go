package apply

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"kumodo.io/convoy/api/v1alpha1"
)

func TestOrphans(t *testing.T) {
	obj := func(release, name string, onPurpose bool) LabelledObject {
		return LabelledObject{
			ObjectReference: v1alpha1.ObjectReference{Version: "v1", Kind: "ConfigMap", Namespace: "apps", Name: name},
			Release:         Owner{Namespace: "team", Name: release},
			LeftOnPurpose:   onPurpose,
		}
	}
	live := map[Owner]bool{{Namespace: "team", Name: "web"}: true}
	cases := map[string]struct {
		applied, want []LabelledObject
	}{
		"nothing applied":                             {},
		"an object of a live Release":                 {applied: []LabelledObject{obj("web", "web", false)}},
		"an object of a Release that does not exist":  {applied: []LabelledObject{obj("api", "api", false)}, want: []LabelledObject{obj("api", "api", false)}},
		"left on purpose by a Release that is gone":   {applied: []LabelledObject{obj("api", "api-data", true)}},
		"left on purpose by a live Release":           {applied: []LabelledObject{obj("web", "web-data", true)}},
		"a Release of the same name in another place": {applied: []LabelledObject{{Release: Owner{Namespace: "other", Name: "web"}}}, want: []LabelledObject{{Release: Owner{Namespace: "other", Name: "web"}}}},
		"live and gone together": {
			applied: []LabelledObject{obj("api", "api", false), obj("web", "web", false), obj("api", "api-keep", true), obj("db", "db", false)},
			want:    []LabelledObject{obj("api", "api", false), obj("db", "db", false)},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Orphans(tc.applied, func(o Owner) bool { return live[o] })
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("Orphans (-want +got):\n%s", d)
			}
		})
	}
}

func TestLeftOnPurpose(t *testing.T) {
	cases := map[string]struct {
		annotations map[string]string
		want        bool
	}{
		"no annotation":                 {},
		"prune disabled":                {annotations: map[string]string{v1alpha1.AnnotationPrune: v1alpha1.PruneDisabled}, want: true},
		"prune enabled":                 {annotations: map[string]string{v1alpha1.AnnotationPrune: "enabled"}},
		"Helm's keep":                   {annotations: map[string]string{"helm.sh/resource-policy": "keep"}, want: true},
		"Helm's keep, as Helm reads it": {annotations: map[string]string{"helm.sh/resource-policy": " Keep "}, want: true},
		"another resource policy":       {annotations: map[string]string{"helm.sh/resource-policy": "delete"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := leftOnPurpose(tc.annotations); got != tc.want {
				t.Errorf("leftOnPurpose(%v) = %v, want %v", tc.annotations, got, tc.want)
			}
		})
	}
}

// AppliedObjects finds what convoy applied for a Release (its labels and convoy's field
// manager), marks what is to be left on purpose, and leaves out an object that only
// copies the labels. DeleteOrphan leaves an object that changed since it was listed,
// and deletes it once listed again.
func TestAppliedObjectsAndDeleteOrphan(t *testing.T) {
	e := integration(t)
	applied := configMap(e.ns, "applied", map[string]string{"a": "1"})
	kept := with(configMap(e.ns, "kept", nil), annotate("helm.sh/resource-policy", "keep"))
	copied := configMap(e.ns, "copied", nil)
	e.applyAll(t, Object{Object: applied}, Object{Object: kept})
	e.create(t, copied)

	list := func() []LabelledObject {
		t.Helper()
		got, err := e.applier.AppliedObjects(e.ctx, []ListKind{{GVK: applied.GroupVersionKind(), Namespaced: true}})
		if err != nil {
			t.Fatalf("AppliedObjects: %v", err)
		}
		var out []LabelledObject
		for _, o := range got {
			if o.Namespace == e.ns {
				out = append(out, o)
			}
		}
		return out
	}
	got := list()
	want := []LabelledObject{
		{ObjectReference: entryOf(applied, 0).ObjectReference, Release: release},
		{ObjectReference: entryOf(kept, 0).ObjectReference, Release: release, LeftOnPurpose: true},
	}
	if d := cmp.Diff(want, got, cmpopts.IgnoreFields(LabelledObject{}, "UID", "ResourceVersion")); d != "" {
		t.Fatalf("AppliedObjects (-want +got):\n%s", d)
	}

	// Changed since listed: left alone.
	e.applyAll(t, Object{Object: configMap(e.ns, "applied", map[string]string{"a": "2"})})
	if deleted, err := e.applier.DeleteOrphan(e.ctx, got[0]); err != nil || deleted {
		t.Fatalf("DeleteOrphan of a changed object: deleted %v, %v; want left alone", deleted, err)
	}
	e.mustExist(t, applied)
	if deleted, err := e.applier.DeleteOrphan(e.ctx, list()[0]); err != nil || !deleted {
		t.Fatalf("DeleteOrphan: deleted %v, %v", deleted, err)
	}
	e.mustNotExist(t, applied)
	e.mustExist(t, kept, copied)
}
