package v1alpha1

// Reasons of a ReleaseSet's conditions besides ReasonReleaseFailed (Halted) and
// ReasonProgressing (a stage is rolling the revision out).
const (
	// ReasonRolloutComplete: every Release is Ready at status.revision (Ready=True, Progressing=False).
	ReasonRolloutComplete = "RolloutComplete"
	// ReasonWaitingForApproval: a Manual stage waits for POST releasesets/<name>/promote.
	ReasonWaitingForApproval = "WaitingForApproval"
	// ReasonNotHalted: no Release of the rollout failed at status.revision (Halted=False).
	ReasonNotHalted = "NotHalted"
	// ReasonInvalidSpec: a selector of the ReleaseSet does not parse; nothing is written until it is fixed.
	ReasonInvalidSpec = "InvalidSpec"
	// ReasonMassRemoval: more Releases would be deleted at once than spec.strategy.maxRemovals; nothing is deleted until /promote acknowledges it (Halted=True).
	ReasonMassRemoval = "MassRemoval"
	// ReasonStageDeadlineExceeded: a stage started and did not complete within its progressDeadline (Halted=True).
	ReasonStageDeadlineExceeded = "StageDeadlineExceeded"
	// ReasonPaused: spec.paused is true; the set writes no Release until it is resumed (Progressing=False).
	ReasonPaused = "Paused"
)
