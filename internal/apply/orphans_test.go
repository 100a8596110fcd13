package apply

import (
	"testing"

	"github.com/google/go-cmp/cmp"

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
