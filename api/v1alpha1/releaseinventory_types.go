package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ReleaseInventory lists what convoy applied for a Release (same name, owned by it).
// The controller writes the object list; the observer writes status, the health data.
type ReleaseInventory struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// cluster is the Cluster the objects live on; empty: the host cluster.
	// +optional
	Cluster string `json:"cluster,omitempty"`
	// renderRef is the render these objects come from.
	// +optional
	RenderRef string `json:"renderRef,omitempty"`
	// objects is what convoy applied and will prune against.
	// +optional
	// +listType=atomic
	Objects []InventoryObject `json:"objects,omitempty"`
	// syncWave is set while the apply of renderRef holds at a sync wave: how many of its
	// waves are applied (the Release's status.syncWave, written with renderRef in one
	// write, so that the observer never sees one without the other). Unset once every
	// wave is applied.
	// +optional
	SyncWave *SyncWaveStatus `json:"syncWave,omitempty"`

	// status is the observer's health data.
	// +optional
	Status ReleaseInventoryStatus `json:"status,omitempty"`
}

// ObjectReference identifies an object on a target cluster.
type ObjectReference struct {
	// group of the object; empty for the core group.
	// +optional
	Group string `json:"group,omitempty"`
	// version of the object.
	Version string `json:"version"`
	// kind of the object.
	Kind string `json:"kind"`
	// namespace of the object; empty for cluster-scoped objects.
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// name of the object.
	Name string `json:"name"`
}

// InventoryObject is an applied object and its sync wave.
type InventoryObject struct {
	ObjectReference `json:",inline"`
	// wave is the object's sync wave.
	// +optional
	Wave int32 `json:"wave,omitempty"`
	// generation is the object's metadata.generation as convoy's last apply left it
	// (0: not known, or the apply created the object). The observer assesses the
	// object for renderRef only once its view of it has reached this generation, so
	// a view from before the apply is never taken for the new render's health.
	// +optional
	Generation int64 `json:"generation,omitempty"`
	// uid is the object's metadata.uid when convoy's apply created it (kept while
	// later applies find the same object). An object of the same name may have
	// existed before, and the observer's view of it may still be of that earlier
	// object, whose generation says nothing of the new one: the observer assesses the
	// object only from a view with this uid, or from the API server's answer when the
	// object there is no longer the one convoy created.
	// +optional
	UID types.UID `json:"uid,omitempty"`
}

// HealthStatus is the health of an object, a wave or a render.
// +enum
type HealthStatus string

// Health states, worst first: Degraded > Missing > Progressing > Unknown > Healthy.
const (
	// HealthHealthy: kstatus Current.
	HealthHealthy HealthStatus = "Healthy"
	// HealthProgressing: kstatus InProgress.
	HealthProgressing HealthStatus = "Progressing"
	// HealthDegraded: kstatus Failed.
	HealthDegraded HealthStatus = "Degraded"
	// HealthMissing: the object is not on the cluster.
	HealthMissing HealthStatus = "Missing"
	// HealthUnknown: the health cannot be assessed.
	HealthUnknown HealthStatus = "Unknown"
)

// ReleaseInventoryStatus is the observer's health data.
type ReleaseInventoryStatus struct {
	// renderRef is the render the health data assesses.
	// +optional
	RenderRef string `json:"renderRef,omitempty"`
	// observedGeneration is the generation of the ReleaseInventory whose objects the
	// health data assesses (every object with a result for what was applied). Health
	// of an older generation does not count for the sync waves applied since.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// assessedAt is when the assessment last changed.
	// +optional
	AssessedAt *metav1.Time `json:"assessedAt,omitempty"`
	// health of the whole render: the worst of its objects.
	// +optional
	Health HealthStatus `json:"health,omitempty"`
	// objects is the health of each object.
	// +optional
	// +listType=atomic
	Objects []ObjectHealth `json:"objects,omitempty"`
	// waves is the health of each sync wave.
	// +optional
	// +listType=atomic
	Waves []WaveHealth `json:"waves,omitempty"`
	// hooks is the state of the hook Jobs.
	// +optional
	// +listType=atomic
	Hooks []HookStatus `json:"hooks,omitempty"`
	// drift is the result of the last drift check.
	// +optional
	Drift *DriftStatus `json:"drift,omitempty"`
}

// ObjectHealth is the health of one object.
type ObjectHealth struct {
	ObjectReference `json:",inline"`
	// health of the object.
	Health HealthStatus `json:"health"`
	// message says why, for people.
	// +optional
	Message string `json:"message,omitempty"`
}

// WaveHealth is the health of one sync wave.
type WaveHealth struct {
	// wave is the sync wave.
	Wave int32 `json:"wave"`
	// health is the worst of the wave's objects.
	Health HealthStatus `json:"health"`
}

// HookJobPhase is the state of a hook Job.
// +enum
type HookJobPhase string

// Hook Job states.
const (
	// HookJobPending: the Job is not created yet.
	HookJobPending HookJobPhase = "Pending"
	// HookJobRunning: the Job runs.
	HookJobRunning HookJobPhase = "Running"
	// HookJobSucceeded: the Job succeeded.
	HookJobSucceeded HookJobPhase = "Succeeded"
	// HookJobFailed: the Job failed or timed out.
	HookJobFailed HookJobPhase = "Failed"
)

// HookRun is what a run of hooks is for: the Helm events whose chart hooks it runs.
// +enum
type HookRun string

// Hook runs.
const (
	// HookRunInstall: the first apply of a Release (pre-install, post-install).
	HookRunInstall HookRun = "Install"
	// HookRunUpgrade: a later apply (pre-upgrade, post-upgrade).
	HookRunUpgrade HookRun = "Upgrade"
	// HookRunDelete: the deletion of a Release (pre-delete, post-delete).
	HookRunDelete HookRun = "Delete"
)

// HookStatus is the state of one hook: its Job, or the object a chart hook that is
// not a Job applies.
type HookStatus struct {
	// name of the hook.
	Name string `json:"name"`
	// batch of the hook.
	// +optional
	Batch int32 `json:"batch,omitempty"`
	// hookPhase is when the hook runs: PreApply or PostApply.
	// +optional
	HookPhase HookPhase `json:"hookPhase,omitempty"`
	// run is what the hooks run for: Install, Upgrade or Delete.
	// +optional
	Run HookRun `json:"run,omitempty"`
	// renderRef is the render whose hooks run: a chart's hook Job keeps the chart's
	// name from render to render, so its name does not say which run it is.
	// +optional
	RenderRef string `json:"renderRef,omitempty"`
	// phase is Pending, Running, Succeeded or Failed.
	// +optional
	Phase HookJobPhase `json:"phase,omitempty"`
	// job is the name of the Job; empty for a hook that is an object to apply.
	// +optional
	Job string `json:"job,omitempty"`
	// jobUID is the UID of the Job the observer assessed (ReleaseInventory status only):
	// a Job created anew under the same name, as a forced re-run of the hooks does, is
	// another run, whose outcome is signalled again even when it is the same.
	// +optional
	JobUID string `json:"jobUID,omitempty"`
	// forced (Release status only): this PreApply batch belongs to the apply of a
	// forced sync, so the reconciles that carry it on go on with the force's apply: no
	// dry run, and a new rollout.
	// +optional
	Forced bool `json:"forced,omitempty"`
	// message says why, for people.
	// +optional
	Message string `json:"message,omitempty"`
}

// DriftStatus is the result of a drift check.
type DriftStatus struct {
	// since is when this result first showed.
	// +optional
	Since *metav1.Time `json:"since,omitempty"`
	// drifted are the objects that differ from the render.
	// +optional
	// +listType=atomic
	Drifted []DriftedObject `json:"drifted,omitempty"`
}

// DriftedObject is an object that differs from the render.
type DriftedObject struct {
	ObjectReference `json:",inline"`
	// fields are the paths of the fields that differ.
	// +optional
	// +listType=atomic
	Fields []string `json:"fields,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ReleaseInventoryList is a list of ReleaseInventories.
type ReleaseInventoryList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// items are the ReleaseInventories.
	Items []ReleaseInventory `json:"items"`
}
