package release

import (
	"fmt"
	"slices"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// WavePlan says which sync waves of a render one reconcile applies (step 10).
type WavePlan struct {
	// Waves are the waves to apply in this reconcile, ascending.
	Waves []int
	// Total is the number of sync waves of the render.
	Total int
	// Hold, when set, is the Result to report once Waves are applied: a later wave
	// remains and waits for the health of the applied ones (WaitingForSyncWave). The
	// apply then waits: a pending /sync stays pending.
	Hold *Result
}

// PlanWaves decides the sync waves to apply for renderRef, whose objects carry the
// given waves (any order, repeats allowed). Waves apply in ascending order; after wave
// k, wave k+1 is applied only once health reports every wave up to k Healthy for this
// render. Waves already healthy are applied again (server-side apply is idempotent and
// corrects drift).
func PlanWaves(renderRef string, waves []int, health *Health) WavePlan {
	sorted := slices.Clone(waves)
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	plan := WavePlan{Total: len(sorted)}
	for i, w := range sorted {
		plan.Waves = append(plan.Waves, w)
		if i == len(sorted)-1 {
			break
		}
		if !healthyUpTo(renderRef, sorted[:i+1], health) {
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

// healthyUpTo reports whether health says every one of waves is Healthy for renderRef.
func healthyUpTo(renderRef string, waves []int, health *Health) bool {
	if health == nil || health.RenderRef != renderRef {
		return false
	}
	for _, w := range waves {
		i := slices.IndexFunc(health.Waves, func(h WaveHealth) bool { return h.Wave == w })
		if i < 0 || health.Waves[i].Health != HealthHealthy {
			return false
		}
	}
	return true
}
