package release

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The revision and install or upgrade of a new render (rule 3 of issue 12; the
// decision is in docs/decisions/0061-render-revision-install-upgrade.md).
func TestNextRenderRevision(t *testing.T) {
	cases := map[string]struct {
		applied   bool
		revisions []int64
		want      RenderRevision
	}{
		"the first render of a Release":            {want: RenderRevision{Revision: 1}},
		"a new render before any successful apply": {revisions: []int64{1}, want: RenderRevision{Revision: 2}},
		"a new render after a successful apply":    {applied: true, revisions: []int64{1}, want: RenderRevision{Revision: 2, IsUpgrade: true}},
		"one more than the highest, in any order":  {applied: true, revisions: []int64{7, 9, 8}, want: RenderRevision{Revision: 10, IsUpgrade: true}},
		"older revisions pruned from the history":  {applied: true, revisions: []int64{12, 11}, want: RenderRevision{Revision: 13, IsUpgrade: true}},
		"Renders without a revision count":         {applied: true, revisions: []int64{0, 0, 0}, want: RenderRevision{Revision: 4, IsUpgrade: true}},
		"Renders without a revision beside others": {applied: true, revisions: []int64{0, 0, 1}, want: RenderRevision{Revision: 4, IsUpgrade: true}},
		"applied, but no Render is left":           {applied: true, want: RenderRevision{Revision: 1, IsUpgrade: true}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := NextRenderRevision(tc.applied, tc.revisions)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("NextRenderRevision(%v, %v) (-want +got):\n%s", tc.applied, tc.revisions, diff)
			}
		})
	}
}
