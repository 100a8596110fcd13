package policy

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// The revision and install or upgrade of a new render (docs/compatibility.md#helm-hooks-of-a-chart; the
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

// The first apply of a Release that took over a Helm release is an upgrade: the
// objects exist, Helm installed them.
func TestIsUpgrade(t *testing.T) {
	const ref = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	fromHelm := map[string]string{v1.AnnotationHelmRelease: "apps/podinfo.v3"}
	cases := map[string]struct {
		lastSuccessful string
		annotations    map[string]string
		want           bool
		wantRun        v1.HookRun
	}{
		"the first apply of a new Release: an install":         {wantRun: v1.HookRunInstall},
		"a later apply: an upgrade":                            {lastSuccessful: ref, want: true, wantRun: v1.HookRunUpgrade},
		"the first apply of a Release taken over from Helm":    {annotations: fromHelm, want: true, wantRun: v1.HookRunUpgrade},
		"a later apply of a Release taken over from Helm":      {lastSuccessful: ref, annotations: fromHelm, want: true, wantRun: v1.HookRunUpgrade},
		"other annotations do not make an upgrade":             {annotations: map[string]string{v1.AnnotationSyncRequestedAt: "2026-01-02T03:04:05Z"}, wantRun: v1.HookRunInstall},
		"the annotation with any value: it names the takeover": {annotations: map[string]string{v1.AnnotationHelmRelease: ""}, want: true, wantRun: v1.HookRunUpgrade},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := struct {
				IsUpgrade bool
				Run       v1.HookRun
			}{IsUpgrade(tc.lastSuccessful, tc.annotations), ApplyHookRun(tc.lastSuccessful, tc.annotations)}
			want := struct {
				IsUpgrade bool
				Run       v1.HookRun
			}{tc.want, tc.wantRun}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("IsUpgrade, ApplyHookRun (-want +got):\n%s", diff)
			}
		})
	}
}
