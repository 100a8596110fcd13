package health

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

const (
	H = v1.HealthHealthy
	P = v1.HealthProgressing
	D = v1.HealthDegraded
)

type triggerCase struct {
	stored, next v1.ReleaseInventoryStatus
	rel          ReleaseView
	memory       []string
	known        bool
	want         []string // keys sent
}

func runTriggerCases(t *testing.T, cases map[string]triggerCase) {
	t.Helper()
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			sig := Triggers(tc.stored, tc.next, tc.rel, tc.memory, tc.known)
			if diff := cmp.Diff(tc.want, keys(sig.Send)); diff != "" {
				t.Errorf("keys sent (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(keys(Occurrences(tc.next, tc.rel)), sig.Memory); diff != "" {
				t.Errorf("memory (-want +got):\n%s", diff)
			}
		})
	}
}

// SP-14: the observer sends /sync when a sync wave completes: every object of waves ≤ k
// of the render is Healthy, and the Release is WaitingForSyncWave.
func TestSP14_SyncWaveCompletesWhileWaitingForSyncWave(t *testing.T) {
	r1 := "sha256:r1"
	renderOnly := []string{"render/" + r1}
	runTriggerCases(t, map[string]triggerCase{
		"wave 0 turns Healthy while the Release waits after it": {
			stored: assessed(r1, wave(0, P), wave(1, P)),
			next:   assessed(r1, wave(0, H), wave(1, P)),
			rel:    waiting(1, 2), memory: renderOnly, known: true,
			want: []string{"wave/sha256:r1/0"},
		},
		"waves 0 and 1 Healthy while the Release waits after wave 1 of 3": {
			stored: assessed(r1, wave(0, H), wave(1, P), wave(2, P)),
			next:   assessed(r1, wave(0, H), wave(1, H), wave(2, P)),
			rel:    waiting(2, 3), memory: append(renderOnly, "wave/sha256:r1/0"), known: true,
			want: []string{"wave/sha256:r1/1"},
		},
		"the Release comes to wait after the waves turned Healthy": {
			stored: assessed(r1, wave(0, H), wave(1, P)),
			next:   assessed(r1, wave(0, H), wave(1, P)),
			rel:    waiting(1, 2), memory: renderOnly, known: true,
			want: []string{"wave/sha256:r1/0"},
		},
		"a wave up to k is not Healthy": {
			stored: assessed(r1, wave(0, H), wave(1, P), wave(2, P)),
			next:   assessed(r1, wave(0, H), wave(1, D), wave(2, P)),
			rel:    waiting(2, 3), memory: renderOnly, known: true,
		},
		"the Release does not wait for a sync wave": {
			stored: assessed(r1, wave(0, P), wave(1, P)),
			next:   assessed(r1, wave(0, H), wave(1, H)),
			rel:    ReleaseView{AppliedReason: v1.ReasonApplied, RenderRef: r1}, memory: renderOnly, known: true,
		},
		"the Release waits for a wave of another render": {
			stored: assessed(r1, wave(0, P), wave(1, P)),
			next:   assessed(r1, wave(0, H), wave(1, P)),
			rel:    ReleaseView{AppliedReason: v1.ReasonWaitingForSyncWave, RenderRef: "sha256:r2", SyncWave: &v1.SyncWaveStatus{Current: 1, Total: 2}},
			memory: renderOnly, known: true,
		},
		"already signalled: no second /sync": {
			stored: assessed(r1, wave(0, H), wave(1, P)),
			next:   assessed(r1, wave(0, H), wave(1, P)),
			rel:    waiting(1, 2), memory: append(renderOnly, "wave/sha256:r1/0"), known: true,
		},
		"after a restart, a stored status that shows it means it was sent": {
			stored: assessed(r1, wave(0, H), wave(1, P)),
			next:   assessed(r1, wave(0, H), wave(1, P)),
			rel:    waiting(1, 2),
		},
		"after a restart, a completion the stored status does not show yet is sent once more": {
			stored: assessed(r1, wave(0, P), wave(1, P)),
			next:   assessed(r1, wave(0, H), wave(1, P)),
			rel:    waiting(1, 2),
			want:   []string{"wave/sha256:r1/0"},
		},
		"the Release waits at the same wave again after leaving it (a new sync of the render)": {
			stored: assessed(r1, wave(0, H), wave(1, H)),
			next:   assessed(r1, wave(0, H), wave(1, H)),
			rel:    waiting(1, 2), memory: renderOnly, known: true, // the memory lost the key when the Release left
			want: []string{"wave/sha256:r1/0"},
		},
		"no syncWave in the Release status": {
			stored: assessed(r1, wave(0, P)),
			next:   assessed(r1, wave(0, H)),
			rel:    ReleaseView{AppliedReason: v1.ReasonWaitingForSyncWave, RenderRef: r1}, memory: renderOnly, known: true,
		},
	})
}

// SP-14 — seed: "The observer sends one when a sync wave completes". Decision 0089:
// the wave counts for the render being applied (the inventory's), also when that is not
// status.render.ref (a pinned or rolled-back-to render), and only over that render's
// objects: an object of the inventory that the render dropped never gates a wave, and
// an object of the render in a later wave does not either.
func TestSP14_SyncWaveCountsOverTheAppliedRendersObjects(t *testing.T) {
	r1 := "sha256:r1"
	dropped := v1.ObjectHealth{ObjectReference: ref("Deployment", "dropped"), Health: v1.HealthMissing}
	withDropped := func(st v1.ReleaseInventoryStatus) v1.ReleaseInventoryStatus {
		st.Objects = append(st.Objects, dropped)
		st.Waves[0].Health = v1.HealthMissing
		return st
	}
	runTriggerCases(t, map[string]triggerCase{
		"a pinned render (status.render.ref is another) completes its wave": {
			stored: assessed(r1, wave(0, P), wave(1, P), wave(2, P)),
			next:   assessed(r1, wave(0, H), wave(1, P), wave(2, P)),
			rel:    waiting(1, 3), memory: nil, known: true,
			// the render is partly applied: only the wave, no new-render /sync
			want: []string{"wave/sha256:r1/0"},
		},
		"a dropped object Missing in wave 0 does not gate it": {
			stored: withDropped(assessed(r1, wave(0, P), wave(1, P))),
			next:   withDropped(assessed(r1, wave(0, H), wave(1, P))),
			rel:    waiting(1, 2), memory: nil, known: true,
			want: []string{"wave/sha256:r1/0"},
		},
		"an object of the render in wave 1 is not assessed for wave 0": {
			stored: assessed(r1, wave(0, P), wave(1, D)),
			next:   assessed(r1, wave(0, H), wave(1, D)),
			rel:    waiting(1, 2), memory: nil, known: true,
			want: []string{"wave/sha256:r1/0"},
		},
		"an object of the render in wave 0 has no result yet": {
			stored: assessed(r1, wave(1, H)),
			next:   assessed(r1, wave(1, H)),
			rel:    waiting(1, 2), memory: nil, known: true,
		},
		"the render's waves are unknown (its Render could not be read)": {
			stored: assessed(r1, wave(0, P), wave(1, P)),
			next:   assessed(r1, wave(0, H), wave(1, P)),
			rel: ReleaseView{AppliedReason: v1.ReasonWaitingForSyncWave, RenderRef: r1,
				SyncWave: &v1.SyncWaveStatus{Current: 1, Total: 2}},
			memory: nil, known: true,
		},
	})
}

// SP-15: the observer sends /sync when health assessment reaches a new render: the
// first time every object of a render has a health result.
func TestSP15_HealthAssessmentReachesNewRender(t *testing.T) {
	applied := ReleaseView{AppliedReason: v1.ReasonApplied, RenderRef: "sha256:r2"}
	runTriggerCases(t, map[string]triggerCase{
		"first assessment of the first render": {
			stored: v1.ReleaseInventoryStatus{},
			next:   assessed("sha256:r1", wave(0, P)),
			rel:    applied, known: true,
			want: []string{"render/sha256:r1"},
		},
		"first complete assessment of a new render": {
			stored: assessed("sha256:r1", wave(0, H)),
			next:   assessed("sha256:r2", wave(0, P)),
			rel:    applied, memory: []string{"render/sha256:r1"}, known: true,
			want: []string{"render/sha256:r2"},
		},
		"the same render assessed again": {
			stored: assessed("sha256:r2", wave(0, P)),
			next:   assessed("sha256:r2", wave(0, H)),
			rel:    applied, memory: []string{"render/sha256:r2"}, known: true,
		},
		"back to an earlier render (rollback) is a new render again": {
			stored: assessed("sha256:r2", wave(0, D)),
			next:   assessed("sha256:r1", wave(0, P)),
			rel:    applied, memory: []string{"render/sha256:r2"}, known: true,
			want: []string{"render/sha256:r1"},
		},
		"after a restart: the stored status already names the render": {
			stored: assessed("sha256:r2", wave(0, P)),
			next:   assessed("sha256:r2", wave(0, H)),
			rel:    applied,
		},
		"after a restart: the /sync went out but the status write did not": {
			stored: assessed("sha256:r1", wave(0, H)),
			next:   assessed("sha256:r2", wave(0, P)),
			rel:    applied,
			want:   []string{"render/sha256:r2"},
		},
		"applied wave by wave: only the wave; the inventory does not hold the whole render yet": {
			stored: assessed("sha256:r1", wave(0, H)),
			next:   assessed("sha256:r2", wave(0, H)),
			rel: ReleaseView{AppliedReason: v1.ReasonWaitingForSyncWave, RenderRef: "sha256:r2",
				SyncWave: &v1.SyncWaveStatus{Current: 1, Total: 2}, RenderWaves: renderWaves(2)},
			memory: []string{"render/sha256:r1"}, known: true,
			want: []string{"wave/sha256:r2/0"},
		},
		"the last wave is in: the render is announced once": {
			stored: assessed("sha256:r2", wave(0, H)),
			next:   assessed("sha256:r2", wave(0, H), wave(1, P)),
			rel:    ReleaseView{AppliedReason: v1.ReasonApplied, RenderRef: "sha256:r2"},
			memory: []string{"wave/sha256:r2/0"}, known: true,
			want: []string{"render/sha256:r2"},
		},
	})
}

// SP-15 with Assess: while an object of the new render has no result, the status keeps
// the old render, so nothing is announced; the first complete assessment announces it
// once, and a restarted observer does not announce it again.
func TestSP15_NewRenderAnnouncedOnceAcrossRestart(t *testing.T) {
	cfg, web := ref("ConfigMap", "cfg"), ref("Deployment", "web")
	key := types.NamespacedName{Namespace: "team-a", Name: "podinfo"}
	inv := inventory("sha256:r1", obj(cfg, 0), obj(web, 0))
	rel := ReleaseView{AppliedReason: v1.ReasonApplied, RenderRef: "sha256:r1"}
	mem := &Memory{}
	sent := 0

	// One pass of the observer: assess, signal, remember, write (the /sync first).
	pass := func(results map[v1.ObjectReference]Result, crashBeforeWrite bool) {
		a := Assess(AssessInput{Inventory: inv, Results: results, Now: t0})
		m, known := mem.Get(key)
		sig := Triggers(inv.Status, a.Status, rel, m, known)
		if len(sig.Send) > 0 {
			sent++
		}
		mem.Set(key, sig.Memory)
		if a.Write && !crashBeforeWrite {
			inv.Status = a.Status
		}
	}
	restart := func() { mem = &Memory{} }

	pass(map[v1.ObjectReference]Result{cfg: healthy()}, false) // web's informer not synced
	if sent != 0 || inv.Status.RenderRef != "" {
		t.Fatalf("announced an incomplete assessment: sent %d, status render %q", sent, inv.Status.RenderRef)
	}
	full := map[v1.ObjectReference]Result{cfg: healthy(), web: progressing()}
	pass(full, false)
	pass(full, false)
	pass(map[v1.ObjectReference]Result{cfg: healthy(), web: healthy()}, false)
	if sent != 1 {
		t.Fatalf("render r1 announced %d times, want 1", sent)
	}
	restart()
	pass(map[v1.ObjectReference]Result{cfg: healthy(), web: healthy()}, false)
	if sent != 1 {
		t.Fatalf("after a restart: announced %d times, want 1", sent)
	}

	// Render r2: the /sync goes out, the observer dies before the status write.
	inv.RenderRef = "sha256:r2"
	rel.RenderRef = "sha256:r2"
	pass(full, true)
	restart()
	pass(full, false)
	pass(full, false)
	restart()
	pass(full, false)
	if sent != 3 {
		t.Fatalf("render r2 announced %d times, want 2 (one more after the lost write)", sent-1)
	}
}

// SP-16: the observer sends /sync when a batch of lifecycle hooks completes: every Job
// of the batch succeeded, or one failed (a timeout shows as Failed).
func TestSP16_HookBatchCompletes(t *testing.T) {
	st := assessed("sha256:r1", wave(0, H))
	rel := ReleaseView{AppliedReason: v1.ReasonWaitingForHooks, RenderRef: "sha256:r1"}
	mem := []string{"render/sha256:r1"}
	const (
		ok      = v1.HookJobSucceeded
		failed  = v1.HookJobFailed
		running = v1.HookJobRunning
		pending = v1.HookJobPending
	)
	batch0 := "hooks/0/backup=podinfo-backup-0123456789,migrate=podinfo-migrate-0123456789/"
	runTriggerCases(t, map[string]triggerCase{
		"every Job of the batch succeeded": {
			stored: withHooks(st, hook("migrate", 0, ok), hook("backup", 0, running)),
			next:   withHooks(st, hook("migrate", 0, ok), hook("backup", 0, ok)),
			rel:    rel, memory: mem, known: true,
			want: []string{batch0 + "Succeeded"},
		},
		"one Job failed or timed out, another still runs": {
			stored: withHooks(st, hook("migrate", 0, running), hook("backup", 0, running)),
			next:   withHooks(st, hook("migrate", 0, failed), hook("backup", 0, running)),
			rel:    rel, memory: mem, known: true,
			want: []string{batch0 + "Failed"},
		},
		"a Job still runs": {
			stored: withHooks(st, hook("migrate", 0, running), hook("backup", 0, pending)),
			next:   withHooks(st, hook("migrate", 0, ok), hook("backup", 0, running)),
			rel:    rel, memory: mem, known: true,
		},
		"already signalled": {
			stored: withHooks(st, hook("migrate", 0, ok), hook("backup", 0, ok)),
			next:   withHooks(st, hook("migrate", 0, ok), hook("backup", 0, ok)),
			rel:    rel, memory: append(mem, batch0+"Succeeded"), known: true,
		},
		"the next batch completes; the first stays signalled": {
			stored: withHooks(st, hook("migrate", 0, ok), hook("backup", 0, ok), hook("seed", 1, running)),
			next:   withHooks(st, hook("migrate", 0, ok), hook("backup", 0, ok), hook("seed", 1, ok)),
			rel:    rel, memory: append(mem, batch0+"Succeeded"), known: true,
			want: []string{"hooks/1/seed=podinfo-seed-0123456789/Succeeded"},
		},
		// Decision 0090: a forced sync re-creates the batch's Jobs under the same
		// names; a re-run that fails the same way is another occurrence.
		"a forced re-run fails the same way: signalled again": {
			stored: withHooks(st, run(hook("migrate", 0, failed), "uid-1")),
			next:   withHooks(st, run(hook("migrate", 0, failed), "uid-2")),
			rel:    rel, memory: append(mem, "hooks/0/migrate=podinfo-migrate-0123456789@uid-1/Failed"), known: true,
			want: []string{"hooks/0/migrate=podinfo-migrate-0123456789@uid-2/Failed"},
		},
		"the same run assessed again: not signalled again": {
			stored: withHooks(st, run(hook("migrate", 0, failed), "uid-1")),
			next:   withHooks(st, run(hook("migrate", 0, failed), "uid-1")),
			rel:    rel, memory: append(mem, "hooks/0/migrate=podinfo-migrate-0123456789@uid-1/Failed"), known: true,
		},
		"after a restart, a completed batch in the stored status is not sent again": {
			stored: withHooks(st, hook("migrate", 0, ok), hook("backup", 0, ok)),
			next:   withHooks(st, hook("migrate", 0, ok), hook("backup", 0, ok)),
			rel:    rel,
		},
		"after a restart, a completion the stored status does not show is sent once more": {
			stored: withHooks(st, hook("migrate", 0, ok), hook("backup", 0, running)),
			next:   withHooks(st, hook("migrate", 0, ok), hook("backup", 0, ok)),
			rel:    rel,
			want:   []string{batch0 + "Succeeded"},
		},
	})
}

// run sets the UID of the Job of h: which run of the hook it is.
func run(h v1.HookStatus, uid string) v1.HookStatus {
	h.JobUID = uid
	return h
}

func TestReleaseViewOf(t *testing.T) {
	rel := &v1.Release{Status: v1.ReleaseStatus{
		Conditions: []metav1.Condition{
			{Type: v1.ConditionReady, Status: metav1.ConditionFalse, Reason: v1.ReasonWaitingForSyncWave},
			{Type: v1.ConditionApplied, Status: metav1.ConditionFalse, Reason: v1.ReasonWaitingForSyncWave},
		},
		Render: &v1.RenderStatus{Ref: "sha256:r2"},
		// Not written yet: the inventory's progress counts.
		SyncWave: nil,
	}}
	// Pinned at r1: the inventory names the render being applied, not status.render.
	inv := inventory("sha256:r1")
	inv.SyncWave = &v1.SyncWaveStatus{Current: 1, Total: 3}
	want := ReleaseView{AppliedReason: v1.ReasonWaitingForSyncWave, RenderRef: "sha256:r1", SyncWave: &v1.SyncWaveStatus{Current: 1, Total: 3}}
	if diff := cmp.Diff(want, ReleaseViewOf(rel, inv)); diff != "" {
		t.Errorf("ReleaseViewOf (-want +got):\n%s", diff)
	}
	if !want.Waiting() {
		t.Error("Waiting() = false for a Release WaitingForSyncWave with status.syncWave")
	}
	if diff := cmp.Diff(ReleaseView{}, ReleaseViewOf(&v1.Release{}, nil)); diff != "" {
		t.Errorf("ReleaseViewOf(empty) (-want +got):\n%s", diff)
	}
}

// What a person approves is what convoy applies: each occurrence names the render it
// concerns, and the observer's /sync for it approves that render only. A new render
// and a sync wave concern the render assessed; a hook batch the render whose hooks
// ran (status.hooks[].renderRef), which may be another (a new render's PreApply batch
// while the inventory still holds the previous one); none named: any render.
func TestOccurrencesNameTheirRender(t *testing.T) {
	r1, r2 := "sha256:r1", "sha256:r2"
	forRender := func(h v1.HookStatus, ref string) v1.HookStatus {
		h.RenderRef = ref
		return h
	}
	cases := map[string]struct {
		st   v1.ReleaseInventoryStatus
		rel  ReleaseView
		want map[string]string // render by key
	}{
		"a new render": {
			st:   assessed(r1, wave(0, H)),
			want: map[string]string{"render/" + r1: r1},
		},
		"a sync wave and the render": {
			st:   assessed(r1, wave(0, H), wave(1, P)),
			rel:  waiting(1, 2),
			want: map[string]string{"wave/" + r1 + "/0": r1},
		},
		"a hook batch of the render assessed": {
			st:   withHooks(assessed(r1, wave(0, H)), forRender(hook("migrate", 0, v1.HookJobSucceeded), r1)),
			want: map[string]string{"render/" + r1: r1, "hooks/0/migrate=podinfo-migrate-0123456789/Succeeded": r1},
		},
		"a hook batch of another render": {
			st:   withHooks(assessed(r1, wave(0, H)), forRender(hook("migrate", 0, v1.HookJobFailed), r2)),
			want: map[string]string{"render/" + r1: r1, "hooks/0/migrate=podinfo-migrate-0123456789/Failed": r2},
		},
		"a hook batch naming no render": {
			st:   withHooks(assessed(r1, wave(0, H)), hook("migrate", 0, v1.HookJobSucceeded)),
			want: map[string]string{"render/" + r1: r1, "hooks/0/migrate=podinfo-migrate-0123456789/Succeeded": ""},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := map[string]string{}
			for _, o := range Occurrences(tc.st, tc.rel) {
				got[o.Key] = o.RenderRef
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("render by occurrence (-want +got):\n%s", diff)
			}
		})
	}
}
