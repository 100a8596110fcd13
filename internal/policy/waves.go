package policy

import (
	"fmt"
	"slices"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// WavePlan says which sync waves of a render one reconcile applies (step 10).
type WavePlan struct {
	// Waves are the waves to apply in this reconcile, ascending.
	Waves []int32
	// Total is the number of sync waves of the render.
	Total int
	// Hold, when set, is the Result to report once Waves are applied: a later wave
	// remains and waits for the health of the applied ones (WaitingForSyncWave). The
	// apply then waits: a pending /sync stays pending.
	Hold *Result
}

// WaveInput is what PlanWaves decides from.
type WaveInput struct {
	// RenderRef is the render to apply.
	RenderRef string
	// Objects are the render's objects with their sync waves. Objects of the
	// inventory that the render dropped are not among them: they never gate a wave.
	Objects []WaveObject
	// AppliedWaves is how many of the render's waves, ascending, earlier reconciles
	// applied for this render (status.syncWave.current while the inventory names the
	// render; all of them once it was applied in full). Only their objects can be
	// Healthy for the render: a wave applied in this reconcile waits for the
	// observer's next assessment.
	AppliedWaves int
	// Applied says the render is the one last applied in full
	// (status.lastSuccessful): waves order the rollout of a new render, so it is
	// applied in full, whatever a lower wave's health (drift correction).
	Applied bool
	// Health is the observer's data; nil when it wrote none.
	Health *Health
}

// WaveObject is an object of the render and its sync wave.
type WaveObject struct {
	Ref  v1.ObjectReference
	Wave int32
}

// PlanWaves decides the sync waves of in.RenderRef to apply. Waves apply in ascending
// order; after wave k, wave k+1 is applied only once every object of the render in
// waves up to k is Healthy for this render: applied for it by an earlier reconcile
// and assessed Healthy by the observer for it. Waves already healthy are applied
// again (server-side apply is idempotent and corrects drift). A render already
// applied in full is applied in full.
func PlanWaves(in WaveInput) WavePlan {
	sorted := make([]int32, 0, len(in.Objects))
	for _, o := range in.Objects {
		sorted = append(sorted, o.Wave)
	}
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	plan := WavePlan{Total: len(sorted)}
	if in.Applied {
		if len(sorted) > 0 {
			plan.Waves = sorted
		}
		return plan
	}
	for i, w := range sorted {
		plan.Waves = append(plan.Waves, w)
		if i == len(sorted)-1 {
			break
		}
		if i >= in.AppliedWaves || !waveHealthy(in, w) {
			plan.Hold = &Result{
				Reason: v1.ReasonWaitingForSyncWave,
				Message: fmt.Sprintf("Sync waves up to %d are applied; wave %d waits until they are Healthy.",
					w, sorted[i+1]),
			}
			break
		}
	}
	return plan
}

// waveHealthy reports whether in.Health says every object of the render in wave is
// Healthy for in.RenderRef.
func waveHealthy(in WaveInput, wave int32) bool {
	h := in.Health
	if h == nil || h.RenderRef != in.RenderRef {
		return false
	}
	for _, o := range in.Objects {
		if o.Wave == wave && h.Objects[o.Ref.Unversioned()] != v1.HealthHealthy {
			return false
		}
	}
	return true
}
