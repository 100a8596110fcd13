package v1alpha1

// Condition types on a Release.
const (
	// ConditionApplied says whether the render that the sync policy asks for is applied.
	ConditionApplied = "Applied"
	// ConditionHealthy says whether what convoy applied for status.lastSuccessful is healthy.
	ConditionHealthy = "Healthy"
	// ConditionReady is True when Applied and Healthy are True; it is always computed.
	ConditionReady = "Ready"
)

// Reasons of the Applied condition.
const (
	// ReasonApplied: the render is applied (manual mode: also in sync, the apply waits for /sync).
	ReasonApplied = "Applied"
	// ReasonWaitingForSync: manual mode, no pending /sync, and the render differs or none is applied yet.
	ReasonWaitingForSync = "WaitingForSync"
	// ReasonSourceNotReady: the chart cannot be fetched (transient).
	ReasonSourceNotReady = "SourceNotReady"
	// ReasonValuesNotReady: a valuesFrom reference cannot be read (transient).
	ReasonValuesNotReady = "ValuesNotReady"
	// ReasonClusterNotReady: the target Cluster is missing, unreachable or does not admit the namespace (transient).
	ReasonClusterNotReady = "ClusterNotReady"
	// ReasonDeployFailed: the apply failed (transient).
	ReasonDeployFailed = "DeployFailed"
	// ReasonPruneFailed: the prune failed (transient).
	ReasonPruneFailed = "PruneFailed"
	// ReasonDeleteFailed: deleting what a deleted Release applied (or its Renders and ReleaseInventory) failed (transient).
	ReasonDeleteFailed = "DeleteFailed"
	// ReasonUnsupported: the Release asks for something convoy does not support.
	ReasonUnsupported = "Unsupported"
	// ReasonUnappliable: the render cannot be applied as it stands.
	ReasonUnappliable = "Unappliable"
	// ReasonPinned: a pin holds the Release at a render other than the current one.
	ReasonPinned = "Pinned"
	// ReasonHookFailed: a lifecycle hook Job failed or timed out.
	ReasonHookFailed = "HookFailed"
	// ReasonWaitingForClusterWave: a Release of a lower cluster wave on the same Cluster is not Applied and Healthy.
	ReasonWaitingForClusterWave = "WaitingForClusterWave"
	// ReasonWaitingForSyncWave: a sync wave is applied and the next waits for its health.
	ReasonWaitingForSyncWave = "WaitingForSyncWave"
	// ReasonWaitingForHooks: a hook batch is running.
	ReasonWaitingForHooks = "WaitingForHooks"
	// ReasonRolledBack: the current render failed its rollout and was rolled back.
	ReasonRolledBack = "RolledBack"
	// ReasonServiceAccountNotFound: the ServiceAccount the Release acts as (spec.serviceAccountName, or the controller's --default-service-account) does not exist in its namespace; nothing is applied.
	ReasonServiceAccountNotFound = "ServiceAccountNotFound"
	// ReasonForbidden: the target cluster refused a request made as the Release's ServiceAccount (403); the message names the object and the missing permission.
	ReasonForbidden = "Forbidden"
	// ReasonVerificationFailed: the chart's signature (spec.chart.verify) or the Git commit's (spec.chart.git.verify) is missing or not made by a trusted key or identity, or the trusted keys are unusable, or verification is required and the Release does not ask for it; nothing is rendered. Retried at the interval.
	ReasonVerificationFailed = "VerificationFailed"
)

// Reasons of the Healthy condition.
const (
	// ReasonHealthy: every object of the last successful render is healthy.
	ReasonHealthy = "Healthy"
	// ReasonProgressing: some object is still progressing towards health.
	ReasonProgressing = "Progressing"
	// ReasonDegraded: some object failed (for example a Deployment past its progress deadline).
	ReasonDegraded = "Degraded"
	// ReasonMissing: some applied object is gone from the cluster.
	ReasonMissing = "Missing"
	// ReasonNotAssessed: the observer has not assessed the last successful render yet.
	ReasonNotAssessed = "NotAssessed"
	// ReasonReassessing: the observer re-assesses the last successful render, Healthy at its last assessment, which convoy applied again (a drift put back).
	ReasonReassessing = "Reassessing"
)

// Reasons of a Cluster's Ready condition.
const (
	// ReasonReachable: the cluster answers /version with its kubeconfig.
	ReasonReachable = "Reachable"
	// ReasonUnreachable: the kubeconfig is usable but the cluster does not answer /version.
	ReasonUnreachable = "Unreachable"
	// ReasonKubeconfigNotReady: the kubeconfig Secret or key is missing, or the kubeconfig cannot be used.
	ReasonKubeconfigNotReady = "KubeconfigNotReady"
)

// Reasons of events about a Release, besides the reasons of its conditions.
const (
	// EventObserverAssessmentOverdue: a Warning, once per wait, when the Release has waited on the observer's assessment of its ReleaseInventory for longer than the controller's bound.
	EventObserverAssessmentOverdue = "ObserverAssessmentOverdue"
	// EventOutlivedNamespace: a Warning when the controller deletes a Release or ReleaseSet that outlived its namespace (the namespace was deleted, or deleted and created again, and the object was left in convoy's storage).
	EventOutlivedNamespace = "OutlivedNamespace"
	// EventForceSpent: a Warning when a reconcile used up a forced /sync without acting on it (it waited for a cluster wave, stopped before the apply, or its forced apply failed); a new forced /sync is needed.
	EventForceSpent = "ForceSpent"
)

// Annotations.
const (
	// AnnotationSyncRequestedAt holds the time of the latest /sync request (RFC 3339).
	AnnotationSyncRequestedAt = "convoy.kumodo.io/sync-requested-at"
	// AnnotationSyncForceRequestedAt holds the time of the latest /sync?force=true request (RFC 3339).
	AnnotationSyncForceRequestedAt = "convoy.kumodo.io/sync-force-requested-at"
	// AnnotationSyncRequestedRender binds the /sync of AnnotationSyncRequestedAt to one render: the full ref
	// (sha256:<64 hex>) that POST releases/<name>/sync?render=<ref> approved. A plain /sync removes it.
	AnnotationSyncRequestedRender = "convoy.kumodo.io/sync-requested-render"
	// AnnotationSyncWave sets the sync wave of a rendered object ("<int>", default 0).
	AnnotationSyncWave = "convoy.kumodo.io/sync-wave"
	// AnnotationArgoSyncWave is Argo CD's sync wave, honoured when AnnotationSyncWave is absent.
	AnnotationArgoSyncWave = "argocd.argoproj.io/sync-wave"
	// AnnotationPrune set to PruneDisabled keeps an object from being pruned.
	AnnotationPrune = "convoy.kumodo.io/prune"
	// PruneDisabled is the value of AnnotationPrune that disables pruning.
	PruneDisabled = "disabled"
	// AnnotationInputs on a Render is the digest of the inputs it was rendered from
	// (sha256:<hex>): chart, values, mutations, target, release name, namespace, install or upgrade.
	AnnotationInputs = "convoy.kumodo.io/inputs"
	// AnnotationVerified on a Render records, as JSON ({"provider", "identity", "time"}, as status.render.verified), what verified the chart of the render (spec.chart.verify); absent when nothing did.
	AnnotationVerified = "convoy.kumodo.io/verified"
	// AnnotationLookups on a Render lists, as JSON, the objects the templates' lookup read and a digest of each.
	AnnotationLookups = "convoy.kumodo.io/lookups"
	// AnnotationCapabilities on a Render holds, as JSON, what its templates read of the target's capabilities
	// (.Capabilities.APIVersions.Has questions and answers, parts of .Capabilities.KubeVersion).
	AnnotationCapabilities = "convoy.kumodo.io/capabilities"
	// AnnotationRedactedData on a Secret in a Render served to a user who may not read the namespace's Secrets
	// maps each data key to the sha256 of its value ({"key":"sha256:<hex>"}), in place of data and stringData.
	AnnotationRedactedData = "convoy.kumodo.io/redacted-data"
	// AnnotationHookRun on a hook Job names the hook run that created it, "<run>/<hook phase>/<render ref>"
	// (Upgrade/PreApply/sha256:…): a chart's hook Job keeps its name from run to run, so the name does not tell them apart.
	AnnotationHookRun = "convoy.kumodo.io/hook-run"
	// AnnotationHelmRelease on a Release records the Helm release it took over, "<namespace>/<name>.v<revision>":
	// its first apply is an upgrade (the chart's upgrade hooks run, the templates see .Release.IsUpgrade).
	AnnotationHelmRelease = "convoy.kumodo.io/helm-release"
	// AnnotationNamespaceUID on a Release or ReleaseSet is the UID of the namespace it was created in: convoy apiserver
	// writes it at creation (a value in the request is replaced) and every update keeps it; on one created before
	// convoy recorded it, the controller records it once, when the object provably belongs to its namespace. An object
	// whose namespace now has another UID outlived its namespace, and the controller deletes it.
	AnnotationNamespaceUID = "convoy.kumodo.io/namespace-uid"
)

// Labels.
const (
	// LabelRelease names the Release a Render belongs to (LabelValue of its name; the
	// Render's release field holds the name).
	LabelRelease = "convoy.kumodo.io/release"
	// LabelInputs on a Render is the first 32 hex digits of its AnnotationInputs, to find the Render of some inputs.
	LabelInputs = "convoy.kumodo.io/inputs"
	// LabelRevision on a Render is its revision, the .Release.Revision its templates saw.
	LabelRevision = "convoy.kumodo.io/revision"
	// LabelReleaseName names the Release that applied an object on a target cluster
	// (LabelValue of its name; when that is a digest, the annotation of the same key holds the name).
	LabelReleaseName = "convoy.kumodo.io/release-name"
	// LabelReleaseNamespace names the namespace of the Release that applied an object (LabelValue, as LabelReleaseName).
	LabelReleaseNamespace = "convoy.kumodo.io/release-namespace"
	// LabelHook names the hook of a hook Job or of a chart's hook object (LabelValue of the hook's
	// name; when that is a digest, the annotation of the same key holds the name).
	LabelHook = "convoy.kumodo.io/hook"
	// LabelShard assigns a Release to the controller and observer of one shard; the
	// controller copies it to the Release's ReleaseInventory, which the shard caches.
	LabelShard = "convoy.kumodo.io/shard"
	// LabelReleaseSet on a Release names the ReleaseSet that writes it (LabelValue of its name).
	LabelReleaseSet = "convoy.kumodo.io/release-set"
	// LabelCluster on a Release that a ReleaseSet writes names its Cluster (LabelValue of its name).
	LabelCluster = "convoy.kumodo.io/cluster"
	// LabelTakenOverBy on a Helm release record (its Secret) that convoy marked superseded names the
	// Release that took it over, "<namespace>.<name>".
	LabelTakenOverBy = "convoy.kumodo.io/taken-over-by"
)

// ReleaseSet names.
const (
	// AnnotationReleaseSetRevision on a Release that a ReleaseSet writes is the template
	// revision (ReleaseSet status.revision) that its spec holds.
	AnnotationReleaseSetRevision = "convoy.kumodo.io/release-set-revision"
	// AnnotationReleaseSetOverrides is "true" on a Release that a ReleaseSet wrote at a
	// revision with spec.clusterOverrides: its values may be its Cluster's own, so a new
	// Cluster does not get a copy of it (it waits for its stage to start instead).
	AnnotationReleaseSetOverrides = "convoy.kumodo.io/release-set-overrides"
	// StageRest is the implicit last stage: the Clusters that no stage of spec.strategy takes.
	StageRest = "rest"
	// ConditionProgressing on a ReleaseSet: a revision is rolling out.
	ConditionProgressing = "Progressing"
	// ConditionHalted on a ReleaseSet: the rollout stopped because a Release failed.
	ConditionHalted = "Halted"
	// ReasonReleaseFailed: a Release of the rollout ended its rollout Failed or RolledBack (Halted's reason).
	ReasonReleaseFailed = "ReleaseFailed"
	// ReasonNamespaceNotAdmitted: a selected Cluster's namespaceSelector does not admit the ReleaseSet's namespace.
	ReasonNamespaceNotAdmitted = "NamespaceNotAdmitted"
)

// Finalizer is set on every Release and on its ReleaseInventory so that convoy can
// delete what it applied, also when the Release's namespace is deleted.
const Finalizer = "convoy.kumodo.io/finalizer"

// FieldManager is the server-side apply field manager of everything convoy applies.
const FieldManager = "convoy"
