package health

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

var t0 = time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)

func at(d time.Duration) *metav1.Time {
	t := metav1.NewTime(t0.Add(d))
	return &t
}

// ref builds an object reference: ref("Deployment", "web") is apps/v1, ref("ConfigMap",
// "cfg") is core v1, both in namespace podinfo.
func ref(kind, name string) v1.ObjectReference {
	r := v1.ObjectReference{Version: "v1", Kind: kind, Namespace: "podinfo", Name: name}
	switch kind {
	case "Deployment", "StatefulSet":
		r.Group = "apps"
	case "Job":
		r.Group = "batch"
	}
	return r
}

func obj(r v1.ObjectReference, wave int32) v1.InventoryObject {
	return v1.InventoryObject{ObjectReference: r, Wave: wave}
}

func inventory(renderRef string, objs ...v1.InventoryObject) *v1.ReleaseInventory {
	return &v1.ReleaseInventory{
		ObjectMeta: metav1.ObjectMeta{Name: "podinfo", Namespace: "team-a"},
		RenderRef:  renderRef,
		Objects:    objs,
	}
}

func healthy() Result { return Result{Health: v1.HealthHealthy, Message: "Resource is current"} }
func progressing() Result {
	return Result{Health: v1.HealthProgressing, Message: "Deployment is progressing"}
}
func degraded() Result {
	return Result{Health: v1.HealthDegraded, Message: "Progress deadline exceeded"}
}
func missing() Result { return Result{Health: v1.HealthMissing, Message: MessageMissing} }
func unknown() Result { return Result{Health: v1.HealthUnknown, Message: "?"} }

func oh(r v1.ObjectReference, res Result) v1.ObjectHealth {
	return v1.ObjectHealth{ObjectReference: r, Health: res.Health, Message: res.Message}
}

// assessed is a stored status for a render with the given wave healths: wave w has
// one object, waveObject(w), of the wave's health.
func assessed(renderRef string, waves ...v1.WaveHealth) v1.ReleaseInventoryStatus {
	hs := make([]v1.HealthStatus, len(waves))
	objects := make([]v1.ObjectHealth, len(waves))
	for i, w := range waves {
		hs[i] = w.Health
		objects[i] = v1.ObjectHealth{ObjectReference: waveObject(w.Wave), Health: w.Health}
	}
	return v1.ReleaseInventoryStatus{RenderRef: renderRef, AssessedAt: at(0), Health: Worst(hs...), Objects: objects, Waves: waves}
}

// waveObject is the one object of wave w in assessed and waiting.
func waveObject(w int32) v1.ObjectReference { return ref("Deployment", fmt.Sprintf("wave-%d", w)) }

// renderWaves is RenderWaves for a render with one object in each of waves 0…total-1.
func renderWaves(total int32) map[v1.ObjectReference]int32 {
	out := make(map[v1.ObjectReference]int32, total)
	for w := range total {
		out[waveObject(w).Unversioned()] = w
	}
	return out
}

func wave(w int32, h v1.HealthStatus) v1.WaveHealth { return v1.WaveHealth{Wave: w, Health: h} }

func waiting(current, total int32) ReleaseView {
	return ReleaseView{
		AppliedReason: v1.ReasonWaitingForSyncWave,
		RenderRef:     "sha256:r1",
		SyncWave:      &v1.SyncWaveStatus{Current: current, Total: total},
		RenderWaves:   renderWaves(total),
	}
}

func hook(name string, batch int32, phase v1.HookJobPhase) v1.HookStatus {
	return v1.HookStatus{Name: name, Batch: batch, Phase: phase, Job: "podinfo-" + name + "-0123456789"}
}

func withHooks(st v1.ReleaseInventoryStatus, hs ...v1.HookStatus) v1.ReleaseInventoryStatus {
	st.Hooks = hs
	return st
}

func u(o map[string]any) *unstructured.Unstructured { return &unstructured.Unstructured{Object: o} }
