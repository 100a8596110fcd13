package validation

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
)

// fullRef is a render ref in its full form.
const fullRef = "sha256:9a2b0c1d2e3f405162738495a6b7c8d9e0f1a2b3c4d5e6f708192a3b4c5d6e7f"

// Every render ref the API server stores (a pin's, a ReleaseInventory's, a Render's)
// is checked as convoyv1alpha1.RenderRef.Validate checks it, and refused with the
// field's path. "sha256:4f1c" (too few digits) passed the server's own looser check
// before decision 0194.
func TestRenderRefFields(t *testing.T) {
	refs := map[string]struct {
		ref     string
		problem string // "" when valid
	}{
		"full":          {ref: fullRef},
		"too few":       {ref: "sha256:4f1c", problem: "4 hex digits after sha256:, want 64"},
		"too many":      {ref: fullRef + "0", problem: "65 hex digits after sha256:, want 64"},
		"short form":    {ref: "9a2b0c1d2e", problem: "that is the short form tables show"},
		"no prefix":     {ref: strings.TrimPrefix(fullRef, "sha256:"), problem: "it does not start with sha256:"},
		"uppercase hex": {ref: strings.ToUpper(fullRef[:8]) + fullRef[8:], problem: "it does not start with sha256:"},
		"not hex":       {ref: "sha256:" + strings.Repeat("g", 64), problem: "not lowercase hex"},
	}
	fields := map[string]struct {
		path     *field.Path
		validate func(ref string) field.ErrorList
	}{
		"pin": {path: field.NewPath("pin", "renderRef"), validate: func(ref string) field.ErrorList {
			r := validRelease()
			r.Pin = &convoyv1alpha1.Pin{RenderRef: ref}
			return Release(r, ReleaseOptions{})
		}},
		"inventory": {path: field.NewPath("renderRef"), validate: func(ref string) field.ErrorList {
			return ReleaseInventory(&convoyv1alpha1.ReleaseInventory{
				ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "podinfo"}, RenderRef: ref})
		}},
		"render": {path: field.NewPath("renderRef"), validate: func(ref string) field.ErrorList {
			return Render(&convoyv1alpha1.Render{
				ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "podinfo-9a2b0c1d2e"},
				RenderRef:  ref, Release: "podinfo", Chart: convoyv1alpha1.RenderChart{Name: "podinfo"}})
		}},
	}
	for fname, f := range fields {
		for rname, r := range refs {
			t.Run(fname+"/"+rname, func(t *testing.T) {
				var want field.ErrorList
				if r.problem != "" {
					want = field.ErrorList{field.Invalid(f.path, r.ref, r.problem)}
				}
				if diff := cmp.Diff(want, f.validate(r.ref)); diff != "" {
					t.Errorf("errors (-want +got):\n%s", diff)
				}
			})
		}
	}
}
