package hooks

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// RunID names one run of a hook's Job, the value of v1.AnnotationHookRun:
// "<run>/<phase>/<render ref>" (Upgrade/PreApply/sha256:…). A chart's hook Job keeps
// the chart's name across renders, phases and runs (install, upgrade, delete); this
// tells the runs apart.
func RunID(run Run, phase v1.HookPhase, renderRef string) string {
	return string(run) + "/" + string(phase) + "/" + renderRef
}

// RunIDOf is the RunID of the hook run that a status.hooks entry records; "" for an
// entry written before entries named their render (the Job's name, then new for every
// render and phase, told the run).
func RunIDOf(s v1.HookStatus) string {
	if s.RenderRef == "" || s.Run == "" || s.HookPhase == "" {
		return ""
	}
	return RunID(s.Run, s.HookPhase, s.RenderRef)
}

// OfRun reports whether job is the Job of the run runID: its v1.AnnotationHookRun
// says so, or it has none (a Job of an older convoy, whose name was new for every
// render and phase, so that a Job of the name is of the run).
func OfRun(job metav1.Object, runID string) bool {
	id, ok := job.GetAnnotations()[v1.AnnotationHookRun]
	return !ok || id == runID
}

// Found is what the Job found under the name of a hook's Job is to a run of the hook.
type Found string

// What a hook run finds under its Job's name.
const (
	// FoundNone: no Job of the name; the run creates it.
	FoundNone Found = "None"
	// FoundOfRun: the run's own Job, created by an earlier reconcile; its state is
	// the hook's.
	FoundOfRun Found = "OfRun"
	// FoundOtherRun: the Release's Job of another run (an earlier render, the other
	// phase, another event) under the same name: the run deletes it and creates its
	// own once it is gone, as Helm's before-hook-creation does.
	FoundOtherRun Found = "OtherRun"
	// FoundDeleting: a Job being deleted; the run waits until it is gone.
	FoundDeleting Found = "Deleting"
	// FoundForeign: a Job that convoy did not create for this Release (another
	// Release's, or no convoy Job at all): the run stops with an error naming it, and
	// neither overwrites nor deletes it.
	FoundForeign Found = "Foreign"
)

// Classify decides what job (nil: none) is to the run runID of a hook of the Release
// release in namespace (the Release's own namespace): a Job is the Release's when
// convoy's labels name it (v1.HasReleaseLabels).
func Classify(job metav1.Object, release, namespace, runID string) Found {
	switch {
	case job == nil:
		return FoundNone
	case job.GetDeletionTimestamp() != nil:
		return FoundDeleting
	case !v1.HasReleaseLabels(job.GetLabels(), job.GetAnnotations(), release, namespace):
		return FoundForeign
	case OfRun(job, runID):
		return FoundOfRun
	}
	return FoundOtherRun
}
