package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ReleaseSet delivers one chart to every Cluster that its selector picks, one Release
// per Cluster, and rolls each revision of its template out stage by stage.
//
// A ReleaseSet only writes Releases: what a Release does is unchanged. Only a change to
// spec changes metadata.generation; approvals are written only through /promote and
// status only through /status.
type ReleaseSet struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec says which Clusters get a Release, what it holds, and how a revision rolls out.
	Spec ReleaseSetSpec `json:"spec"`

	// approvals record the POSTs to /promote: each approves one Manual stage at one
	// revision. Written only through the /promote subresource; writes through the main
	// resource keep the stored value. Approvals of earlier revisions are dropped.
	// +optional
	// +listType=atomic
	Approvals []StageApproval `json:"approvals,omitempty"`

	// removalAcknowledgement records the POST to /promote that let a mass removal go on:
	// the Releases it acknowledged, which the set may then delete however many they are.
	// Written only through the /promote subresource; writes through the main resource
	// keep the stored value. It applies to those Releases only: a later loss of other
	// Clusters counts against spec.strategy.maxRemovals again.
	// +optional
	RemovalAcknowledgement *RemovalAcknowledgement `json:"removalAcknowledgement,omitempty"`

	// status is written by the controller through the /status subresource.
	// +optional
	Status ReleaseSetStatus `json:"status,omitempty"`
}

// ReleaseSetSpec says which Clusters get a Release, what it holds, and how a revision
// rolls out.
type ReleaseSetSpec struct {
	// clusterSelector selects Cluster objects by label. Empty or unset selects none.
	// A selected Cluster whose namespaceSelector does not admit the ReleaseSet's
	// namespace is skipped (status.skipped says so).
	// +optional
	ClusterSelector *metav1.LabelSelector `json:"clusterSelector,omitempty"`

	// template is the Release written for each selected Cluster; its spec.cluster must be
	// empty (the ReleaseSet sets it).
	Template ReleaseTemplate `json:"template"`

	// clusterOverrides are values for some Clusters: each override's values are merged,
	// in order, over template.spec.values for the Clusters its clusterSelector selects,
	// as Helm merges several values files (maps merge, anything else is replaced, null
	// removes). In the string values of an override, $(cluster.name) and
	// $(cluster.labels['<key>']) are replaced by the Cluster's name and the value of its
	// label <key> (empty when it has none), and $$( by a literal "$("; any other "$(" is
	// invalid. At most 100 overrides. Overrides are part of status.revision: a change
	// rolls out through the stages.
	// +optional
	// +listType=atomic
	ClusterOverrides []ClusterOverride `json:"clusterOverrides,omitempty"`

	// strategy orders the rollout of a revision into stages.
	// +optional
	Strategy ReleaseSetStrategy `json:"strategy,omitempty"`

	// paused: the set writes no Release (no create, update or delete) until it is
	// false again; its status is still observed and written (Progressing=False, reason
	// Paused). A template changed while paused rolls out through the stages on resume.
	// +optional
	Paused bool `json:"paused,omitempty"`
}

// ClusterOverride is values for the Clusters its selector selects.
type ClusterOverride struct {
	// clusterSelector selects, among the set's Clusters, those that get the values;
	// required: {} selects every Cluster of the set.
	ClusterSelector *metav1.LabelSelector `json:"clusterSelector"`
	// values are merged over the template's values (and earlier overrides') for the
	// selected Clusters: a JSON object. $(cluster.name) and $(cluster.labels['<key>'])
	// in its string values are replaced per Cluster, $$( by a literal "$(".
	// +optional
	Values *runtime.RawExtension `json:"values,omitempty"`
}

// ReleaseTemplate is a Release without its Cluster.
type ReleaseTemplate struct {
	// metadata holds the labels and annotations each Release gets.
	// +optional
	Metadata ReleaseTemplateMetadata `json:"metadata,omitempty"`
	// spec is the Release's spec; spec.cluster must be empty.
	Spec ReleaseSpec `json:"spec"`
}

// ReleaseTemplateMetadata holds the labels and annotations of a generated Release.
type ReleaseTemplateMetadata struct {
	// labels of each Release, besides the ReleaseSet's own.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// annotations of each Release, besides the ReleaseSet's own.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// ReleaseSetStrategy orders the rollout of a revision into stages.
type ReleaseSetStrategy struct {
	// stages in rollout order. A Cluster is in the first stage whose clusterSelector
	// matches it; a stage without clusterSelector takes all the rest. Clusters that no
	// stage takes are in a last, implicit stage named "rest". No stages: one stage
	// "rest" with every Cluster.
	// +optional
	// +listType=map
	// +listMapKey=name
	Stages []Stage `json:"stages,omitempty"`

	// maxRemovals is how many of the set's Releases may be deleted at once because their
	// Cluster is no longer selected (or gone): a number, or a percentage of the set's
	// Releases (rounded down: never more than the percentage, so 25% of 3 is 0). More
	// than that and the set deletes nothing and halts (reason MassRemoval) until POST
	// releasesets/<name>/promote acknowledges the removal. Unset: 25%.
	// +optional
	MaxRemovals *intstr.IntOrString `json:"maxRemovals,omitempty"`
}

// DefaultMaxRemovals is spec.strategy.maxRemovals when unset.
const DefaultMaxRemovals = "25%"

// RemovalAcknowledgement records one POST to /promote that acknowledged a mass removal.
type RemovalAcknowledgement struct {
	// releases are the names of the Releases whose deletion was acknowledged: the
	// status.heldRemovals the POST saw.
	// +listType=set
	Releases []string `json:"releases"`
	// acknowledgedAt is when the acknowledgement was recorded.
	// +optional
	AcknowledgedAt *metav1.Time `json:"acknowledgedAt,omitempty"`
	// acknowledgedBy is the user who acknowledged, as the API server authenticated them.
	// +optional
	AcknowledgedBy string `json:"acknowledgedBy,omitempty"`
}

// ApprovalMode says whether a stage starts by itself.
// +enum
type ApprovalMode string

// Approval modes of a stage.
const (
	// ApprovalAutomatic: the stage starts when the stages before it are Ready.
	ApprovalAutomatic ApprovalMode = "Automatic"
	// ApprovalManual: the stage also waits for POST releasesets/<name>/promote.
	ApprovalManual ApprovalMode = "Manual"
)

// Stage is one step of a rollout.
type Stage struct {
	// name of the stage, unique in the ReleaseSet (a DNS label).
	Name string `json:"name"`
	// clusterSelector picks this stage's Clusters among those the ReleaseSet selects and
	// no earlier stage took. Unset: all of them.
	// +optional
	ClusterSelector *metav1.LabelSelector `json:"clusterSelector,omitempty"`
	// maxParallel is how many of the stage's Releases may be updated and not yet Ready
	// at a time: a number, or a percentage of the stage's Clusters (rounded up, at
	// least 1). Unset: all.
	// +optional
	MaxParallel *intstr.IntOrString `json:"maxParallel,omitempty"`
	// approval is Automatic (default) or Manual: a Manual stage starts only after POST
	// releasesets/<name>/promote.
	// +optional
	// +default="Automatic"
	Approval ApprovalMode `json:"approval,omitempty"`
	// maxUnavailable is how many of the stage's Releases may be unavailable and still let
	// the stage complete: a number, or a percentage of the stage's Clusters (rounded
	// down). A Release is unavailable when its Cluster's Ready condition is not True
	// (unreachable, or not checked yet), whatever the Release says; it takes no
	// maxParallel slot, and gets the revision when its Cluster is back. Unset: 0.
	// +optional
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`
	// bakeTime: the stage completes only after each of its Releases has been Ready at
	// the revision this long. Unset: at once.
	// +optional
	BakeTime *metav1.Duration `json:"bakeTime,omitempty"`
	// progressDeadline: a stage that started and is not complete within this long halts
	// the set (Halted=True, reason StageDeadlineExceeded). Unset: no deadline.
	// +optional
	ProgressDeadline *metav1.Duration `json:"progressDeadline,omitempty"`
}

// StageApproval records one POST to /promote.
type StageApproval struct {
	// stage is the name of the stage approved.
	Stage string `json:"stage"`
	// revision is the template revision the approval is for.
	Revision string `json:"revision"`
	// approvedAt is when the approval was recorded.
	// +optional
	ApprovedAt *metav1.Time `json:"approvedAt,omitempty"`
	// approvedBy is the user who approved, as the API server authenticated them.
	// +optional
	ApprovedBy string `json:"approvedBy,omitempty"`
}

// StagePhase is where a stage's rollout of the current revision stands.
// +enum
type StagePhase string

// Phases of a stage.
const (
	// StageWaiting: an earlier stage is not Complete.
	StageWaiting StagePhase = "Waiting"
	// StageWaitingForApproval: a Manual stage whose earlier stages are Complete waits for /promote.
	StageWaitingForApproval StagePhase = "WaitingForApproval"
	// StageProgressing: the stage's Releases are being updated to the revision.
	StageProgressing StagePhase = "Progressing"
	// StageComplete: every Release of the stage is Ready at the revision.
	StageComplete StagePhase = "Complete"
	// StageHalted: a Release of the stage failed at the revision (its rollout ended
	// Failed or RolledBack, or its Applied reason is a lasting failure), or the stage
	// did not complete within its progressDeadline.
	StageHalted StagePhase = "Halted"
)

// ReleaseSetStatus is written by the controller.
type ReleaseSetStatus struct {
	// observedGeneration is the generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// revision is the digest of what the rollout delivers: spec.template,
	// spec.clusterOverrides and status.source.
	// +optional
	Revision string `json:"revision,omitempty"`
	// source is what the set resolved from its template for the revision: the chart
	// version a range picks, the commit a Git ref names, the digest of the valuesFrom
	// objects. Each Release gets exactly this. The set resolves its template once per
	// template.spec.syncPolicy.interval (not once per Release).
	// +optional
	Source *ReleaseSetSource `json:"source,omitempty"`
	// conditions hold Ready (every Release Ready at the revision), Progressing and Halted.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// stages say where each stage's rollout of the revision stands, in rollout order.
	// +optional
	// +listType=atomic
	Stages []StageStatus `json:"stages,omitempty"`
	// skipped are selected Clusters that get no Release, with the reason.
	// +optional
	// +listType=atomic
	Skipped []SkippedCluster `json:"skipped,omitempty"`
	// heldRemovals are the Releases whose Cluster is no longer selected (or gone) that
	// the set does not delete: more than spec.strategy.maxRemovals of them at once
	// (Halted=True, reason MassRemoval). POST releasesets/<name>/promote acknowledges
	// them.
	// +optional
	// +listType=set
	HeldRemovals []string `json:"heldRemovals,omitempty"`
	// recentRemovals are the Releases the set deleted in the last 10 minutes without an
	// acknowledgement: they count against spec.strategy.maxRemovals with those it would
	// delete now, so that Clusters lost one after the other are lost at once too.
	// +optional
	// +listType=atomic
	RecentRemovals []RecentRemoval `json:"recentRemovals,omitempty"`
}

// RecentRemoval is a Release the set deleted because its Cluster was no longer
// selected (or gone).
type RecentRemoval struct {
	// release is the name of the Release.
	Release string `json:"release"`
	// removedAt is when the set deleted it.
	RemovedAt metav1.Time `json:"removedAt"`
}

// StageStatus says where one stage's rollout of the revision stands.
type StageStatus struct {
	// name of the stage.
	Name string `json:"name"`
	// phase: Waiting, WaitingForApproval, Progressing, Complete or Halted.
	Phase StagePhase `json:"phase"`
	// clusters is the number of Clusters in the stage.
	Clusters int32 `json:"clusters"`
	// updated is the number of the stage's Releases that have the revision.
	Updated int32 `json:"updated"`
	// ready is the number of the stage's Releases that are Ready at the revision.
	Ready int32 `json:"ready"`
	// unavailable is the number of the stage's Releases counted against maxUnavailable:
	// their Cluster is not Ready.
	// +optional
	Unavailable int32 `json:"unavailable,omitempty"`
	// baking is the number of the stage's Releases Ready at the revision for less than
	// the stage's bakeTime.
	// +optional
	Baking int32 `json:"baking,omitempty"`
	// startedAt is when the stage started rolling out the revision (progressDeadline
	// counts from it).
	// +optional
	StartedAt *metav1.Time `json:"startedAt,omitempty"`
	// completedAt is when the stage completed the revision: the stages after it start
	// from then.
	// +optional
	CompletedAt *metav1.Time `json:"completedAt,omitempty"`
}

// ReleaseSetSource is what a ReleaseSet resolved from its template.
type ReleaseSetSource struct {
	// chartVersion is the exact version picked from template.spec.chart.version (a
	// range included); each Release gets it as its spec.chart.version. Empty with git.
	// +optional
	ChartVersion string `json:"chartVersion,omitempty"`
	// commit is the commit that template.spec.chart.git.ref names; each Release gets it
	// as its spec.chart.git.ref.commit. Empty without git.
	// +optional
	Commit string `json:"commit,omitempty"`
	// valuesDigest is the digest of the data of the template's valuesFrom objects;
	// each Release reads a copy of them made at this digest. Empty without valuesFrom.
	// +optional
	ValuesDigest string `json:"valuesDigest,omitempty"`
}

// SkippedCluster is a selected Cluster that gets no Release.
type SkippedCluster struct {
	// name of the Cluster.
	Name string `json:"name"`
	// reason, such as NamespaceNotAdmitted.
	Reason string `json:"reason"`
	// message says why, for people.
	// +optional
	Message string `json:"message,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ReleaseSetList is a list of ReleaseSets.
type ReleaseSetList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// items are the ReleaseSets.
	Items []ReleaseSet `json:"items"`
}
