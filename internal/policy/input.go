package policy

import (
	"time"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// Input is everything one reconcile decides from. The controller fills it from the
// Release, its status, the current render, the ReleaseInventory and the failure counter;
// nothing here is read again later, so one reconcile sees one consistent picture.
type Input struct {
	// Now is the time of this reconcile, read once by the controller.
	Now time.Time

	// Policy is spec.syncPolicy.
	Policy SyncPolicy
	// FailurePolicy is spec.failurePolicy; nil when the Release has none (no rollout).
	FailurePolicy *FailurePolicy

	// Requests holds the two sync annotations and what status says was handled.
	Requests Requests

	// ClusterWaveBlocker names ("namespace/name") a Release of a lower clusterWave on the
	// same Cluster that is not Applied=True and Healthy=True; empty when none (step 2).
	ClusterWaveBlocker string
	// Preflight is the Result of resolving the Cluster and rendering (steps 3–4) when
	// one of them stopped the reconcile (ClusterNotReady, SourceNotReady,
	// ValuesNotReady, Unsupported, Unappliable), or DeployFailed when the controller
	// could not read or write its own objects while it gathered the Input (a Render to
	// store, say); nil when the render succeeded.
	Preflight *Result

	// CurrentRender is the ref of this reconcile's render (status.render.ref); empty
	// only when Preflight is set.
	CurrentRender string
	// LastSuccessfulRender is status.lastSuccessful.renderRef; empty when no render
	// was applied yet.
	LastSuccessfulRender string

	// Pin is the Release's pin; nil when not pinned (step 5).
	Pin *Pin
	// Rollout is status.rollout; nil when there is none (step 7, requeue at deadline).
	Rollout *Rollout
	// FailedHook describes the last hook batch that failed; nil when none (step 8).
	FailedHook *FailedHook
	// HooksRunning is the render whose hook batch status.hooks records as started and
	// not finished; empty when none. Its batches go on even when the render is the last
	// successful one (a forced re-run, or PostApply batches after the apply).
	HooksRunning string
	// HooksRunningPhase is the phase (PreApply, PostApply) of the batch HooksRunning
	// names; empty when none.
	HooksRunningPhase v1.HookPhase
	// HooksForced: status.hooks records the running batch as a forced sync's
	// (status.hooks[].forced).
	HooksForced bool
	// WaveHold is the render whose apply the last reconcile that applied left held at
	// a sync wave (status.syncWave set; the ReleaseInventory names the render): its
	// first waves are applied, the later ones wait. Empty when none.
	WaveHold string
	// WaveHoldApplied is how many sync waves of WaveHold are applied (the inventory's
	// syncWave.current); 0 when WaveHold is empty.
	WaveHoldApplied WaveCount
	// Health is the observer's data from the ReleaseInventory status; nil when the
	// observer has written none. It counts only when it assesses the inventory's
	// generation (InventoryGeneration): see AssessedHealth.
	Health *Health
	// InventoryGeneration is the newest generation of the ReleaseInventory that the
	// controller knows of: the cache's, or the one its own last write of it gave (the
	// cache may lag behind that write); 0 when there is none.
	InventoryGeneration int64

	// Failures is the in-memory count of consecutive transient failures before this
	// reconcile (FailureCounter.Get).
	Failures int
}

// SyncPolicy is spec.syncPolicy.
type SyncPolicy struct {
	// Automatic is spec.syncPolicy.automatic; unset means false, manual mode.
	Automatic bool
	// Interval is the period of the periodic reconcile; 0 means none.
	Interval time.Duration
	// Backoff is spec.syncPolicy.retryBackoff; nil when retryBackoff.initial is unset.
	Backoff *Backoff
}

// Backoff is spec.syncPolicy.retryBackoff with initial set.
type Backoff struct {
	// Initial is the delay before the first retry; > 0.
	Initial time.Duration
	// Factor multiplies the delay at each further retry; below 1 it means 2.
	Factor float64
	// Max caps the delay; 0 means 1000 s.
	Max time.Duration
}

// FailurePolicy is spec.failurePolicy, as far as the decisions need it.
type FailurePolicy struct {
	// HealthTimeout is the time a new rollout has to become Healthy; 0 means the
	// default, DefaultHealthTimeout.
	HealthTimeout time.Duration
	// Action is what a Failed rollout does: Rollback (also when empty) or Halt.
	Action v1.FailureAction
}

// Requests holds the /sync and forced /sync requests and what was handled of them.
type Requests struct {
	// SyncRequestedAt is the raw value of convoy.kumodo.io/sync-requested-at; empty
	// when the annotation is absent.
	SyncRequestedAt string
	// ForceRequestedAt is the raw value of convoy.kumodo.io/sync-force-requested-at;
	// empty when the annotation is absent.
	ForceRequestedAt string
	// SyncRequestedRender is the value of convoy.kumodo.io/sync-requested-render: the
	// render that the /sync of SyncRequestedAt approved (POST …/sync?render=); empty
	// for a plain /sync, which approves whatever render is current when it is handled.
	SyncRequestedRender string
	// LastHandledSyncAt is status.lastHandledSyncAt; nil when unset.
	LastHandledSyncAt *time.Time
	// LastHandledForceSyncAt is status.lastHandledForceSyncAt; nil when unset.
	LastHandledForceSyncAt *time.Time
}

// Pin is the Release's pin.
type Pin struct {
	// RenderRef is pin.renderRef.
	RenderRef string
	// RenderExists says whether the Render object of RenderRef still exists.
	RenderExists bool
}

// Rollout is status.rollout.
type Rollout struct {
	// Phase is status.rollout.phase.
	Phase v1.RolloutPhase
	// RenderRef is the render this rollout is about.
	RenderRef string
	// PreviousRenderRef is the render to roll back to.
	PreviousRenderRef string
	// Deadline is when a Progressing rollout fails if it is not Healthy yet.
	Deadline time.Time
	// Message says why the rollout reached its phase (status.rollout.message).
	Message string
}

// FailedHook describes a hook batch that failed or timed out for a render. The next
// step waits for a new render or a forced sync.
type FailedHook struct {
	// RenderRef is the render whose hook failed.
	RenderRef string
	// Message names the Job and why it failed.
	Message string
}

// Health is the observer's data from ReleaseInventory status.
type Health struct {
	// RenderRef is the render the data assesses.
	RenderRef string
	// Generation is the ReleaseInventory generation whose objects the data assesses
	// (status.observedGeneration); 0, from an observer that does not record it,
	// counts as current.
	Generation int64
	// State is the health of the whole render.
	State v1.HealthStatus
	// Message is the observer's explanation (for example the first unhealthy object);
	// empty for the default message.
	Message string
	// Objects is the health of each object of the inventory, by ObjectKey.
	Objects map[v1.ObjectReference]v1.HealthStatus
	// Waves is the sync wave of each object of the inventory, by ObjectKey.
	Waves map[v1.ObjectReference]int32
}

// AssessedHealth is h when it assesses the ReleaseInventory of the given generation
// (or a later one): every object of the render applied so far was assessed for what
// was applied, so its health counts. Else nil: the data is older than the objects it
// would judge (a wave applied since, a drift put back), and neither a rollout, nor a
// sync wave, nor the Healthy condition may be judged on it (decision 0160).
func AssessedHealth(h *Health, generation int64) *Health {
	if h == nil || (h.Generation != 0 && h.Generation < generation) {
		return nil
	}
	return h
}

// WaveCount is a number of a render's distinct sync waves, counted from its lowest:
// the first WaveCount waves (a ReleaseInventory's syncWave.current).
type WaveCount int
