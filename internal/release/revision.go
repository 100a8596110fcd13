package release

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
