package policy

import v1 "kumodo.io/convoy/api/v1alpha1"

// RenderRevision is what the templates of a new render see of the Release's history:
// .Release.Revision, and .Release.IsUpgrade or .Release.IsInstall.
type RenderRevision struct {
	// Revision is .Release.Revision, from 1.
	Revision int64
	// IsUpgrade is .Release.IsUpgrade; .Release.IsInstall is its opposite.
	IsUpgrade bool
}

// NextRenderRevision decides the revision and the install or upgrade of a render that
// is templated anew (its inputs changed; a render of unchanged inputs is reused with
// the revision it has, so this never makes a new render by itself):
//
//   - an upgrade once the Release was applied successfully (status.lastSuccessful
//     names a render), an install before, as `helm upgrade --install` decides;
//   - the revision one more than the highest of revisions (the revisions of the
//     Release's Render objects, 0 for one that has none) and than their number, so
//     that Render objects made before revisions were recorded still count.
func NextRenderRevision(applied bool, revisions []int64) RenderRevision {
	highest := int64(len(revisions))
	for _, r := range revisions {
		highest = max(highest, r)
	}
	return RenderRevision{Revision: highest + 1, IsUpgrade: applied}
}

// IsUpgrade decides whether the next apply of a Release is an upgrade (the chart's
// pre-upgrade and post-upgrade hooks run, the templates see .Release.IsUpgrade) or an
// install, from the render of its last successful apply (status.lastSuccessful, empty
// for none) and its annotations:
//
//   - an upgrade once it was applied successfully, as `helm upgrade --install` decides;
//   - an upgrade from its first apply when it took over a Helm release
//     (AnnotationHelmRelease, any value): Helm installed the objects, and the apply
//     upgrades them, as `helm upgrade` of that release would;
//   - else an install.
func IsUpgrade(lastSuccessfulRender string, annotations map[string]string) bool {
	if lastSuccessfulRender != "" {
		return true
	}
	_, fromHelm := annotations[v1.AnnotationHelmRelease]
	return fromHelm
}

// ApplyHookRun is the hook run of the next apply of a Release: Upgrade when
// IsUpgrade, else Install.
func ApplyHookRun(lastSuccessfulRender string, annotations map[string]string) v1.HookRun {
	if IsUpgrade(lastSuccessfulRender, annotations) {
		return v1.HookRunUpgrade
	}
	return v1.HookRunInstall
}
