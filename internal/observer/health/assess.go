package health

import (
	"cmp"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// AssessInput is what the observer gathered for one ReleaseInventory.
type AssessInput struct {
	// Inventory is the ReleaseInventory: its renderRef and objects, and in Status the
	// stored health data.
	Inventory *v1.ReleaseInventory
	// Results holds the health of the objects the observer has seen. An object of the
	// inventory without an entry has no health result yet (its informer has not
	// synced); an object that is not on the cluster has a Missing entry. An inventory
	// without a renderRef has nothing to assess yet.
	Results map[v1.ObjectReference]Result
	// Hooks is the state of the hook Jobs to report, as the observer sees them now.
	// Pass Inventory.Status.Hooks to keep the stored ones.
	Hooks []v1.HookStatus
	// Drift is the drift result to report. Pass Inventory.Status.Drift to keep it.
	Drift *v1.DriftStatus
	// Now is the time of the assessment.
	Now time.Time
}

// Assessment is the status to write and whether to write it.
type Assessment struct {
	// Status is the ReleaseInventory status.
	Status v1.ReleaseInventoryStatus
	// Write is true when Status differs from the stored status in anything other than
	// assessedAt. A write reconciles the Release, so nothing else may cause one.
	Write bool
	// Complete is true when every object of the inventory has a health result. Until
	// then the health part (renderRef, health, objects, waves) stays as stored:
	// status.renderRef names a render only once every object of it is assessed.
	Complete bool
}

// Assess computes the ReleaseInventory status: the health of each object of the
// inventory, sorted; the worst of each sync wave, ascending; the worst of the whole
// render; the hooks and the drift as given. assessedAt is Now when anything else
// changed, else the stored value.
func Assess(in AssessInput) Assessment {
	stored := in.Inventory.Status
	next := *stored.DeepCopy()
	next.Hooks = sortedHooks(in.Hooks)
	next.Drift = in.Drift.DeepCopy()

	objects, complete := objectHealth(in.Inventory.Objects, in.Results)
	complete = complete && in.Inventory.RenderRef != ""
	if complete {
		next.RenderRef = in.Inventory.RenderRef
		next.ObservedGeneration = in.Inventory.Generation
		next.Objects = objects
		next.Waves = waveHealth(in.Inventory.Objects, in.Results)
		next.Health = Worst(healths(objects)...)
	}

	write := Changed(stored, next)
	if write {
		t := metav1.NewTime(in.Now).Rfc3339Copy()
		next.AssessedAt = &t
	}
	return Assessment{Status: next, Write: write, Complete: complete}
}

// Changed reports whether next differs from stored in anything other than assessedAt.
// Nil and empty lists are equal, and times compare to the second, as they are stored.
func Changed(stored, next v1.ReleaseInventoryStatus) bool {
	a, b := stored.DeepCopy(), next.DeepCopy()
	a.AssessedAt, b.AssessedAt = nil, nil
	for _, d := range []*v1.DriftStatus{a.Drift, b.Drift} {
		if d != nil && d.Since != nil {
			t := d.Since.Rfc3339Copy()
			d.Since = &t
		}
	}
	return !equality.Semantic.DeepEqual(a, b)
}

// objectHealth returns the health of every inventory object, sorted, and false when
// one has no result yet.
func objectHealth(objs []v1.InventoryObject, results map[v1.ObjectReference]Result) ([]v1.ObjectHealth, bool) {
	var out []v1.ObjectHealth
	for _, o := range objs {
		r, ok := results[o.ObjectReference]
		if !ok {
			return nil, false
		}
		out = append(out, v1.ObjectHealth{ObjectReference: o.ObjectReference, Health: r.Health, Message: r.Message})
	}
	slices.SortFunc(out, func(a, b v1.ObjectHealth) int { return compareRefs(a.ObjectReference, b.ObjectReference) })
	out = slices.CompactFunc(out, func(a, b v1.ObjectHealth) bool { return a.ObjectReference == b.ObjectReference })
	return out, true
}

// waveHealth is the worst health of each sync wave, ascending.
func waveHealth(objs []v1.InventoryObject, results map[v1.ObjectReference]Result) []v1.WaveHealth {
	byWave := map[int32][]v1.HealthStatus{}
	for _, o := range objs {
		byWave[o.Wave] = append(byWave[o.Wave], results[o.ObjectReference].Health)
	}
	if len(byWave) == 0 {
		return nil
	}
	out := make([]v1.WaveHealth, 0, len(byWave))
	for w, hs := range byWave {
		out = append(out, v1.WaveHealth{Wave: w, Health: Worst(hs...)})
	}
	slices.SortFunc(out, func(a, b v1.WaveHealth) int { return cmp.Compare(a.Wave, b.Wave) })
	return out
}

func healths(objs []v1.ObjectHealth) []v1.HealthStatus {
	out := make([]v1.HealthStatus, len(objs))
	for i, o := range objs {
		out[i] = o.Health
	}
	return out
}

func sortedHooks(hooks []v1.HookStatus) []v1.HookStatus {
	if len(hooks) == 0 {
		return nil
	}
	out := make([]v1.HookStatus, len(hooks))
	copy(out, hooks)
	slices.SortFunc(out, func(a, b v1.HookStatus) int {
		return cmp.Or(cmp.Compare(a.Batch, b.Batch), cmp.Compare(a.Name, b.Name))
	})
	return out
}

// compareRefs orders object references by group, kind, namespace, name, version.
func compareRefs(a, b v1.ObjectReference) int {
	return cmp.Or(
		cmp.Compare(a.Group, b.Group),
		cmp.Compare(a.Kind, b.Kind),
		cmp.Compare(a.Namespace, b.Namespace),
		cmp.Compare(a.Name, b.Name),
		cmp.Compare(a.Version, b.Version),
	)
}
