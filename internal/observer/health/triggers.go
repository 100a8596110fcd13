package health

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// TriggerKind is why the observer sends a /sync.
type TriggerKind string

// The occurrences that make the observer send a /sync (docs/architecture.md, "The observer").
const (
	// TriggerSyncWave: every object of the waves applied so far is Healthy for the
	// render while the Release is WaitingForSyncWave (SP-14).
	TriggerSyncWave TriggerKind = "SyncWave"
	// TriggerNewRender: the first complete assessment of a render (SP-15).
	TriggerNewRender TriggerKind = "NewRender"
	// TriggerHookBatch: every Job of a hook batch succeeded, or one failed or timed
	// out (SP-16).
	TriggerHookBatch TriggerKind = "HookBatch"
)

// Trigger is one occurrence that calls for a /sync.
type Trigger struct {
	// Kind is why.
	Kind TriggerKind
	// Key identifies the occurrence; the same occurrence has the same Key.
	Key string
	// Message says what happened, for the log.
	Message string
	// RenderRef is the render the occurrence concerns: the render assessed (a new
	// render, a sync wave) or the render whose hook batch ran. The /sync that signals
	// it approves that render only; empty: any render.
	RenderRef string
}

// ReleaseView is what the triggers need of the Release.
type ReleaseView struct {
	// AppliedReason is the reason of the Applied condition.
	AppliedReason string
	// RenderRef is the render being applied: the ReleaseInventory's renderRef, which
	// the controller sets with status.syncWave in the apply that holds at a wave. It is
	// status.render.ref unless a pin or a rollback applies another render. Empty: not
	// checked.
	RenderRef string
	// SyncWave is the progress of the apply of RenderRef while a later wave waits: the
	// ReleaseInventory's syncWave, written with its renderRef (the Release's
	// status.syncWave is written later, in the status write of the same reconcile).
	SyncWave *v1.SyncWaveStatus
	// RenderWaves is the sync wave of each object of RenderRef's render, by object key
	// (ObjectKey: no version), from its Render object. Objects of the inventory that
	// the render dropped are not among them, so they never gate a wave. Needed only
	// while the Release waits for a sync wave (Waiting); without it no wave completes.
	RenderWaves map[v1.ObjectReference]int32
}

// ReleaseViewOf takes the ReleaseView from a Release's status and its
// ReleaseInventory (nil: none). RenderWaves is left for the caller to fill when
// Waiting says it is needed.
func ReleaseViewOf(rel *v1.Release, inv *v1.ReleaseInventory) ReleaseView {
	var view ReleaseView
	if c := meta.FindStatusCondition(rel.Status.Conditions, v1.ConditionApplied); c != nil {
		view.AppliedReason = c.Reason
	}
	if inv != nil {
		view.RenderRef = inv.RenderRef
		if inv.SyncWave != nil {
			sw := *inv.SyncWave
			view.SyncWave = &sw
		}
	}
	return view
}

// Waiting says whether the Release waits for a sync wave of the render being applied,
// the only time the waves of the render (RenderWaves) are needed.
func (v ReleaseView) Waiting() bool {
	return v.AppliedReason == v1.ReasonWaitingForSyncWave && v.SyncWave != nil && v.RenderRef != ""
}

// Signals is what Triggers decided.
type Signals struct {
	// Send are the occurrences not signalled yet. One /sync (no force) covers all of
	// them that concern one render (RenderRef), bound to it; none is to be sent when
	// it is empty.
	Send []Trigger
	// Memory is the keys of the occurrences that hold now. Store it in Memory once the
	// /sync went out (or at once when Send is empty).
	Memory []string
	// Signalled is the memory Send was decided against: the keys remembered, or
	// without a memory those of the stored status. An observer that writes the status
	// before the /sync (automatic mode, doc.go) stores it first, so that a /sync that
	// fails after the write is sent again rather than taken for sent.
	Signalled []string
}

// Triggers decides which /sync occurrences to signal, given the stored status, the
// status just assessed, the Release and the per-Release memory of the keys already
// signalled (known false: nothing remembered, the observer started after the stored
// status was written).
//
// An occurrence is signalled when it holds for next and is not remembered. Without a
// memory, what holds for the stored status counts as signalled: in manual mode the
// observer sends /sync before it writes the status, so a stored status that shows an
// occurrence means it was sent, and a restarted observer re-sends only an occurrence
// whose /sync went out but whose status write did not: at most one more. (In automatic
// mode the status goes first and a restart between the two loses that /sync, which
// there only starts the reconcile the status write already started: doc.go.)
//
// An occurrence that stops holding leaves the memory, so it is signalled again when it
// holds again (the Release waits for the same wave of the same render a second time,
// or the render changes back).
func Triggers(stored, next v1.ReleaseInventoryStatus, rel ReleaseView, memory []string, known bool) Signals {
	if !known {
		memory = keys(Occurrences(stored, rel))
	}
	now := Occurrences(next, rel)
	sig := Signals{Memory: keys(now), Signalled: memory}
	for _, t := range now {
		if !slices.Contains(memory, t.Key) {
			sig.Send = append(sig.Send, t)
		}
	}
	return sig
}

// Occurrences lists the /sync occurrences that hold for a status and the Release.
func Occurrences(st v1.ReleaseInventoryStatus, rel ReleaseView) []Trigger {
	var out []Trigger
	if st.RenderRef != "" && !partlyApplied(st, rel) {
		// Assess names a render in status only once every object of the inventory has
		// a result, and the inventory holds the whole render once its last wave is in.
		out = append(out, Trigger{
			Kind:      TriggerNewRender,
			Key:       "render/" + st.RenderRef,
			Message:   fmt.Sprintf("Health assessment covers every object of render %s.", st.RenderRef),
			RenderRef: st.RenderRef,
		})
	}
	if t, ok := waveOccurrence(st, rel); ok {
		out = append(out, t)
	}
	out = append(out, hookOccurrences(st.Hooks)...)
	return out
}

// partlyApplied reports whether the Release is applying the render of st wave by wave
// and has not reached its last wave: the inventory lists only the waves applied so far,
// so a complete assessment of it does not cover every object of the render.
func partlyApplied(st v1.ReleaseInventoryStatus, rel ReleaseView) bool {
	return rel.SyncWave != nil && rel.SyncWave.Current < rel.SyncWave.Total &&
		(rel.RenderRef == "" || rel.RenderRef == st.RenderRef)
}

// waveOccurrence holds when the Release is WaitingForSyncWave after the k-th wave of
// the render being applied (k is status.syncWave.current) and every object of that
// render in its first k waves is Healthy in a status assessed for that render. Only
// the render's own objects count: the inventory also lists, until the prune, objects
// that the render dropped (decision 0089).
func waveOccurrence(st v1.ReleaseInventoryStatus, rel ReleaseView) (Trigger, bool) {
	if !rel.Waiting() || st.RenderRef != rel.RenderRef || len(rel.RenderWaves) == 0 {
		return Trigger{}, false
	}
	waves := make([]int32, 0, len(rel.RenderWaves))
	for _, w := range rel.RenderWaves {
		waves = append(waves, w)
	}
	slices.Sort(waves)
	waves = slices.Compact(waves)
	k := int(rel.SyncWave.Current)
	if k < 1 || k > len(waves) {
		return Trigger{}, false
	}
	last := waves[k-1]
	assessed := make(map[v1.ObjectReference]v1.HealthStatus, len(st.Objects))
	for _, o := range st.Objects {
		assessed[o.ObjectReference.Unversioned()] = o.Health
	}
	for obj, w := range rel.RenderWaves {
		if w <= last && assessed[obj] != v1.HealthHealthy {
			return Trigger{}, false
		}
	}
	return Trigger{
		Kind:      TriggerSyncWave,
		Key:       fmt.Sprintf("wave/%s/%d", st.RenderRef, last),
		Message:   fmt.Sprintf("Sync waves up to %d of render %s are Healthy.", last, st.RenderRef),
		RenderRef: st.RenderRef,
	}, true
}

// hookOccurrences lists the hook batches of status.hooks that completed: every Job
// Succeeded, or one Failed (which includes a timeout). The hooks are grouped by batch;
// status.hooks is expected to hold the hooks of one phase (PreApply or PostApply) at a
// time, since HookStatus does not say the phase.
func hookOccurrences(hooks []v1.HookStatus) []Trigger {
	byBatch := map[int32][]v1.HookStatus{}
	var batches []int32
	for _, h := range hooks {
		if _, ok := byBatch[h.Batch]; !ok {
			batches = append(batches, h.Batch)
		}
		byBatch[h.Batch] = append(byBatch[h.Batch], h)
	}
	slices.Sort(batches)
	var out []Trigger
	for _, b := range batches {
		hs := byBatch[b]
		outcome := v1.HookJobSucceeded
		done := true
		var ids []string
		render := ""
		for _, h := range hs {
			if render == "" {
				render = h.RenderRef
			}
			id := h.Name + "=" + h.Job
			if h.JobUID != "" {
				// A Job created anew under the same name is another run (decision 0090).
				id += "@" + h.JobUID
			}
			ids = append(ids, id)
			switch h.Phase {
			case v1.HookJobSucceeded:
			case v1.HookJobFailed:
				outcome = v1.HookJobFailed
			default:
				done = false
			}
		}
		if outcome == v1.HookJobFailed {
			done = true
		}
		if !done {
			continue
		}
		slices.Sort(ids)
		out = append(out, Trigger{
			Kind:      TriggerHookBatch,
			Key:       fmt.Sprintf("hooks/%d/%s/%s", b, strings.Join(ids, ","), outcome),
			Message:   fmt.Sprintf("Hook batch %d completed: %s.", b, outcome),
			RenderRef: render,
		})
	}
	return out
}

func keys(ts []Trigger) []string {
	if len(ts) == 0 {
		return nil
	}
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Key
	}
	return out
}

// Memory is the observer's per-Release memory of the occurrences it signalled. It
// lives in memory only: a restart empties it, and Triggers then reads the stored
// status instead. It is safe for concurrent use.
type Memory struct {
	mu   sync.Mutex
	keys map[types.NamespacedName][]string
}

// Get returns the keys remembered for a Release, and false when nothing is.
func (m *Memory) Get(release types.NamespacedName) ([]string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ks, ok := m.keys[release]
	return slices.Clone(ks), ok
}

// Set remembers the keys for a Release (Signals.Memory).
func (m *Memory) Set(release types.NamespacedName, keys []string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.keys == nil {
		m.keys = map[types.NamespacedName][]string{}
	}
	m.keys[release] = slices.Clone(keys)
}

// Forget drops a Release, when it or its inventory is deleted.
func (m *Memory) Forget(release types.NamespacedName) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.keys, release)
}
