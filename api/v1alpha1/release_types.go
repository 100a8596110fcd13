package v1alpha1

import (
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// Release delivers a Helm chart with its values to a Cluster.
//
// Only a change to spec changes metadata.generation. mutations and lifecycle live
// outside spec, so changing them does not change the generation; pin is written only
// through the /pin subresource and status only through /status.
type Release struct {
	metav1.TypeMeta `json:",inline"`
	// Standard object metadata. The annotations convoy.kumodo.io/sync-requested-at and
	// convoy.kumodo.io/sync-force-requested-at hold /sync requests (RFC 3339 times).
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is what to deliver, where, and when.
	Spec ReleaseSpec `json:"spec"`

	// mutations are patches applied to the rendered objects, in order, after templating.
	// A change does not change the generation; a write through /mutations is also a /sync request.
	// +optional
	// +listType=atomic
	Mutations []Mutation `json:"mutations,omitempty"`

	// lifecycle holds the hook Jobs that run before and after an apply.
	// A change does not change the generation; a write through /lifecycle is also a /sync request.
	// +optional
	Lifecycle *Lifecycle `json:"lifecycle,omitempty"`

	// pin holds the Release at one render. Written only through the /pin subresource;
	// writes through the main resource keep the stored value.
	// +optional
	Pin *Pin `json:"pin,omitempty"`

	// status is written by the controller through the /status subresource.
	// +optional
	Status ReleaseStatus `json:"status,omitempty"`
}

// ReleaseSpec says what to deliver, where, and when.
type ReleaseSpec struct {
	// cluster is the name of the Cluster to deliver to; empty: the host cluster convoy runs in.
	// +optional
	Cluster string `json:"cluster,omitempty"`

	// clusterWave orders the Releases that target the same Cluster: a Release applies only
	// when every Release of a lower wave on that Cluster is Applied and Healthy. Default 0.
	// +optional
	// +default=0
	ClusterWave int32 `json:"clusterWave,omitempty"`

	// serviceAccountName is a ServiceAccount in the Release's namespace: every request
	// made for the Release on its target cluster (dry run, apply, prune, deletion, hook
	// Jobs, lookup, valuesFrom, drift checks) is made as that ServiceAccount, through
	// Kubernetes impersonation. Empty: the controller's --default-service-account when
	// set (lockdown), else the controller's own identity.
	// +optional
	ServiceAccountName string `json:"serviceAccountName,omitempty"`

	// targetNamespace is the namespace of the rendered objects; empty: the Release's namespace.
	// +optional
	TargetNamespace string `json:"targetNamespace,omitempty"`

	// chart names the Helm chart and where to fetch it.
	Chart ChartSource `json:"chart"`

	// values are the chart values, merged on top of valuesFrom. Free-form.
	// +optional
	Values *runtime.RawExtension `json:"values,omitempty"`

	// valuesFrom are ConfigMap and Secret keys holding values, merged in order before values.
	// +optional
	// +listType=atomic
	ValuesFrom []ValuesReference `json:"valuesFrom,omitempty"`

	// syncPolicy decides when a render is applied, how often the Release reconciles and
	// how it retries after a failure.
	// +optional
	SyncPolicy SyncPolicy `json:"syncPolicy,omitempty"`

	// failurePolicy enables progressive rollout: what to do when a new render does not
	// become healthy in time. Unset: no rollout.
	// +optional
	FailurePolicy *FailurePolicy `json:"failurePolicy,omitempty"`

	// prune deletes what the previous render had and the new one lacks. Default true.
	// +optional
	// +default=true
	Prune *bool `json:"prune,omitempty"`

	// deletionPolicy decides what happens to the applied objects when the Release is
	// deleted: Delete (default) deletes them, Orphan leaves them.
	// +optional
	// +default="Delete"
	DeletionPolicy DeletionPolicy `json:"deletionPolicy,omitempty"`
}

// ChartSource names a Helm chart: either repository, name and version (a Helm
// repository or an OCI registry) or git (a chart folder in a Git repository).
type ChartSource struct {
	// repository is an http(s) Helm repository URL, or oci://host/path for an OCI registry.
	// Empty with git.
	// +optional
	Repository string `json:"repository,omitempty"`
	// name is the chart's name in the repository. Empty with git.
	// +optional
	Name string `json:"name,omitempty"`
	// version is an exact version or a semver constraint; empty: the latest stable version.
	// +optional
	Version string `json:"version,omitempty"`
	// secretRef names a Secret in the Release's namespace with the keys username and
	// password, or caFile for a private CA.
	// +optional
	SecretRef *LocalObjectReference `json:"secretRef,omitempty"`
	// git takes the chart from a folder of a Git repository, instead of repository,
	// name and version.
	// +optional
	Git *GitChartSource `json:"git,omitempty"`
	// verify requires the chart to be signed by a trusted key or identity before it is
	// rendered: cosign for charts of OCI registries, helm (provenance files) for charts
	// of HTTP repositories. Unset: the chart is not verified.
	// +optional
	Verify *ChartVerify `json:"verify,omitempty"`
}

// ChartVerifyProvider names how a chart's signature is checked.
// +enum
type ChartVerifyProvider string

// Chart verification providers.
const (
	// ChartVerifyCosign checks a cosign signature of an OCI chart.
	ChartVerifyCosign ChartVerifyProvider = "cosign"
	// ChartVerifyHelm checks the provenance file (<archive>.prov) of a chart of an HTTP
	// repository, as helm install --verify does.
	ChartVerifyHelm ChartVerifyProvider = "helm"
)

// ChartVerify says who must have signed the chart.
type ChartVerify struct {
	// provider is cosign (charts of oci:// repositories) or helm (provenance files of
	// charts of http(s) repositories).
	Provider ChartVerifyProvider `json:"provider"`
	// secretRef names a Secret in the Release's namespace holding the trusted keys:
	// the key cosign.pub (a cosign public key) for cosign, the key keyring (a PGP
	// public keyring, binary or armored) for helm.
	// +optional
	SecretRef *LocalObjectReference `json:"secretRef,omitempty"`
	// keyless verifies a cosign signature made without a key (Sigstore's keyless
	// signing) by the identity in its certificate. Only for cosign, instead of
	// secretRef.
	// +optional
	Keyless *KeylessVerify `json:"keyless,omitempty"`
}

// KeylessVerify is the identity that a keyless cosign signature's certificate must
// name: its OIDC issuer and subject, each exactly or by a regular expression.
type KeylessVerify struct {
	// issuer is the OIDC issuer, exactly (https://token.actions.githubusercontent.com).
	// +optional
	Issuer string `json:"issuer,omitempty"`
	// subject is the certificate's subject, exactly (an e-mail address or a workflow URL).
	// +optional
	Subject string `json:"subject,omitempty"`
	// issuerRegExp is a regular expression (Go syntax) the issuer must match, instead
	// of issuer.
	// +optional
	IssuerRegExp string `json:"issuerRegExp,omitempty"`
	// subjectRegExp is a regular expression (Go syntax) the subject must match,
	// instead of subject.
	// +optional
	SubjectRegExp string `json:"subjectRegExp,omitempty"`
	// transparencyLog requires the signature to be in Sigstore's transparency log
	// (Rekor). Default true.
	// +optional
	// +default=true
	TransparencyLog *bool `json:"transparencyLog,omitempty"`
}

// GitChartSource is a chart folder in a Git repository, at a commit that ref selects.
type GitChartSource struct {
	// url is the repository: https://, http:// or ssh:// (file:// only where the
	// operator allows it).
	URL string `json:"url"`
	// ref selects the commit: exactly one of branch, tag, semver and commit.
	Ref GitRef `json:"ref"`
	// path is the chart's folder in the repository; empty: the repository's root.
	// +optional
	Path string `json:"path,omitempty"`
	// secretRef names a Secret in the Release's namespace: username and password (or
	// bearerToken), and caFile, for https; identity (a private key) and known_hosts for ssh.
	// +optional
	SecretRef *LocalObjectReference `json:"secretRef,omitempty"`
	// verify renders only a commit signed by a trusted key (PGP or SSH): the commit
	// that ref selects is verified before anything of it is rendered, and a commit
	// that no trusted key signed stops the Release with Applied=False
	// VerificationFailed.
	// +optional
	Verify *GitVerification `json:"verify,omitempty"`
}

// GitVerification names the keys trusted to sign the commits of a chart from Git.
type GitVerification struct {
	// secretRef names a Secret in the Release's namespace whose key keys holds the
	// trusted keys: PGP armored public key blocks and SSH public keys (one a line, as
	// in authorized_keys), in any number and mix.
	SecretRef LocalObjectReference `json:"secretRef"`
}

// GitRef selects a commit of a Git repository. Exactly one field is set.
type GitRef struct {
	// branch follows the tip of a branch.
	// +optional
	Branch string `json:"branch,omitempty"`
	// tag is a tag's commit.
	// +optional
	Tag string `json:"tag,omitempty"`
	// semver is a semver range over the repository's tags (a leading v allowed):
	// the highest tag in the range.
	// +optional
	Semver string `json:"semver,omitempty"`
	// commit is a full commit hash (40 hex digits).
	// +optional
	Commit string `json:"commit,omitempty"`
}

// LocalObjectReference names an object in the same namespace.
type LocalObjectReference struct {
	// name of the object.
	Name string `json:"name"`
}

// ValuesSourceKind is the kind of object a valuesFrom entry reads.
// +enum
type ValuesSourceKind string

// Kinds of valuesFrom sources.
const (
	// ValuesSourceConfigMap reads values from a ConfigMap key.
	ValuesSourceConfigMap ValuesSourceKind = "ConfigMap"
	// ValuesSourceSecret reads values from a Secret key.
	ValuesSourceSecret ValuesSourceKind = "Secret"
)

// ValuesReference is a key of a ConfigMap or Secret in the Release's namespace that
// holds chart values (YAML).
type ValuesReference struct {
	// kind is ConfigMap or Secret.
	Kind ValuesSourceKind `json:"kind"`
	// name of the ConfigMap or Secret.
	Name string `json:"name"`
	// key holding the values; empty: values.yaml.
	// +optional
	Key string `json:"key,omitempty"`
	// optional makes a missing object or key count as empty values instead of ValuesNotReady.
	// +optional
	Optional bool `json:"optional,omitempty"`
}

// SyncPolicy decides when a render is applied.
type SyncPolicy struct {
	// automatic selects the mode. It has no default: unset means false, manual mode, where
	// convoy renders and reports but applies only after a /sync request.
	// +optional
	Automatic *bool `json:"automatic,omitempty"`

	// interval is the period of the periodic reconcile and of the observer's drift checks.
	// No default: unset or 0 schedules no periodic reconcile.
	// +optional
	Interval *metav1.Duration `json:"interval,omitempty"`

	// retryBackoff sets the delay between retries after a transient failure. Unset: the
	// work queue's default rate limiter (5ms doubling up to 1000s).
	// +optional
	RetryBackoff *RetryBackoff `json:"retryBackoff,omitempty"`
}

// RetryBackoff is an exponential backoff: the delay before retry n is
// initial × factor^(n−1), capped at max.
type RetryBackoff struct {
	// initial is the delay before the first retry; more than 0 when set. Unset: the work
	// queue's default rate limiter (5ms doubling up to 1000s); factor and max are then unused.
	// +optional
	Initial *metav1.Duration `json:"initial,omitempty"`
	// factor multiplies the delay at each retry; a number, fractions allowed (1.5).
	// A factor below 1 means 2.
	// +optional
	Factor *Factor `json:"factor,omitempty"`
	// max caps the delay; unset or 0: 1000s.
	// +optional
	Max *metav1.Duration `json:"max,omitempty"`
}

// FailureAction is what convoy does when a rollout fails.
// +enum
type FailureAction string

// Failure actions.
const (
	// FailureActionRollback applies the previous render again (the default).
	FailureActionRollback FailureAction = "Rollback"
	// FailureActionHalt leaves the failed render applied and does nothing more.
	FailureActionHalt FailureAction = "Halt"
)

// FailurePolicy enables progressive rollout.
type FailurePolicy struct {
	// healthTimeout is how long a new render has to become healthy. Default 5m.
	// +optional
	HealthTimeout *metav1.Duration `json:"healthTimeout,omitempty"`
	// action is Rollback (default) or Halt.
	// +optional
	// +default="Rollback"
	Action FailureAction `json:"action,omitempty"`
}

// DeletionPolicy decides what happens to the applied objects when a Release is deleted.
// +enum
type DeletionPolicy string

// Deletion policies.
const (
	// DeletionPolicyDelete deletes what the Release applied (the default).
	DeletionPolicyDelete DeletionPolicy = "Delete"
	// DeletionPolicyOrphan leaves what the Release applied in place.
	DeletionPolicyOrphan DeletionPolicy = "Orphan"
)

// Mutation patches the rendered objects that target selects. Exactly one of patch and
// jsonPatch is set.
type Mutation struct {
	// target selects the objects to patch.
	Target MutationTarget `json:"target"`
	// patch is a strategic merge patch, YAML or JSON.
	// +optional
	Patch string `json:"patch,omitempty"`
	// jsonPatch is an RFC 6902 JSON patch.
	// +optional
	// +listType=atomic
	JSONPatch []JSONPatchOperation `json:"jsonPatch,omitempty"`
}

// MutationTarget selects rendered objects. Empty fields select everything.
type MutationTarget struct {
	// group of the objects; empty: the core group (or any group when kind is empty).
	// +optional
	Group string `json:"group,omitempty"`
	// version of the objects; empty: any.
	// +optional
	Version string `json:"version,omitempty"`
	// kind of the objects.
	// +optional
	Kind string `json:"kind,omitempty"`
	// name of the objects.
	// +optional
	Name string `json:"name,omitempty"`
	// namespace of the objects.
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// labelSelector selects objects by label, in kubectl's selector syntax (app=web,tier!=db).
	// +optional
	LabelSelector string `json:"labelSelector,omitempty"`
}

// JSONPatchOperation is one operation of an RFC 6902 JSON patch.
type JSONPatchOperation struct {
	// op is add, remove, replace, move, copy or test.
	Op string `json:"op"`
	// path is a JSON pointer.
	Path string `json:"path"`
	// from is the source JSON pointer of move and copy.
	// +optional
	From string `json:"from,omitempty"`
	// value is the value of add, replace and test.
	// +optional
	Value *runtime.RawExtension `json:"value,omitempty"`
}

// Lifecycle holds the hook Jobs of a Release.
type Lifecycle struct {
	// hooks run in batches per phase, lowest batch first; the Jobs of one batch run together.
	// +optional
	// +listType=map
	// +listMapKey=name
	Hooks []Hook `json:"hooks,omitempty"`
}

// HookPhase is when a hook runs.
// +enum
type HookPhase string

// Hook phases.
const (
	// HookPreApply runs before the pre-apply dry run.
	HookPreApply HookPhase = "PreApply"
	// HookPostApply runs after a successful apply.
	HookPostApply HookPhase = "PostApply"
)

// Hook is a Job that runs before or after an apply.
type Hook struct {
	// name of the hook, unique in the Release; the Job is named
	// <release>-<hook>-<first 10 hex digits of the render ref>.
	Name string `json:"name"`
	// phase is PreApply or PostApply.
	Phase HookPhase `json:"phase"`
	// batch orders the hooks of one phase: lowest first; hooks of one batch run together.
	// +optional
	Batch int32 `json:"batch,omitempty"`
	// timeout is how long the Job may run. Default 10m.
	// +optional
	Timeout *metav1.Duration `json:"timeout,omitempty"`
	// job is the Job to run.
	Job *batchv1.JobSpec `json:"job"`
}

// Pin holds a Release at one render.
type Pin struct {
	// renderRef is the pinned render. Empty in a /pin write: status.lastSuccessful.renderRef.
	// +optional
	RenderRef string `json:"renderRef,omitempty"`
	// reason says why, for people.
	// +optional
	Reason string `json:"reason,omitempty"`
	// pinnedAt is when the pin was set; written by the server.
	// +optional
	PinnedAt *metav1.Time `json:"pinnedAt,omitempty"`
}

// ReleaseStatus is written by the controller.
type ReleaseStatus struct {
	// observedGeneration is the generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// conditions are Applied, Healthy and Ready.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// render is the current render, as of the last reconcile that rendered.
	// +optional
	Render *RenderStatus `json:"render,omitempty"`
	// lastSuccessful is the render of the last successful apply.
	// +optional
	LastSuccessful *LastSuccessful `json:"lastSuccessful,omitempty"`
	// lastHandledSyncAt is the sync-requested-at value of the last /sync request that a
	// successful apply handled (manual mode).
	// +optional
	LastHandledSyncAt *metav1.Time `json:"lastHandledSyncAt,omitempty"`
	// lastHandledForceSyncAt is the sync-force-requested-at value of the last forced sync
	// that a reconcile handled.
	// +optional
	LastHandledForceSyncAt *metav1.Time `json:"lastHandledForceSyncAt,omitempty"`
	// rollout is the progressive rollout, only with a failurePolicy.
	// +optional
	Rollout *RolloutStatus `json:"rollout,omitempty"`
	// syncWave is the progress of a render applied wave by wave.
	// +optional
	SyncWave *SyncWaveStatus `json:"syncWave,omitempty"`
	// hooks is the state of the running hook batch.
	// +optional
	// +listType=atomic
	Hooks []HookStatus `json:"hooks,omitempty"`
}

// RenderStatus is the current render of a Release.
type RenderStatus struct {
	// ref is the render's digest, sha256:<hex>.
	Ref string `json:"ref"`
	// chartVersion is the chart version rendered.
	// +optional
	ChartVersion string `json:"chartVersion,omitempty"`
	// commit is the Git commit the chart was taken from (spec.chart.git).
	// +optional
	Commit string `json:"commit,omitempty"`
	// valuesDigest is the digest of the merged values.
	// +optional
	ValuesDigest string `json:"valuesDigest,omitempty"`
	// renderedAt is when this ref first appeared.
	// +optional
	RenderedAt *metav1.Time `json:"renderedAt,omitempty"`
	// verified says what verified the chart of this render (spec.chart.verify); unset
	// when it was not verified.
	// +optional
	Verified *VerifiedStatus `json:"verified,omitempty"`
}

// VerifiedStatus is a verification of a render's chart.
type VerifiedStatus struct {
	// provider is cosign, helm or git.
	Provider string `json:"provider"`
	// identity is the fingerprint of the key that made the signature, or the subject
	// of a keyless signature's certificate.
	// +optional
	Identity string `json:"identity,omitempty"`
	// time is when the signature was verified.
	// +optional
	Time *metav1.Time `json:"time,omitempty"`
}

// LastSuccessful is the render of the last successful apply.
type LastSuccessful struct {
	// renderRef is the render applied.
	RenderRef string `json:"renderRef"`
	// chartVersion is its chart version.
	// +optional
	ChartVersion string `json:"chartVersion,omitempty"`
	// commit is the Git commit its chart was taken from (spec.chart.git).
	// +optional
	Commit string `json:"commit,omitempty"`
	// appliedAt is when the apply succeeded.
	// +optional
	AppliedAt *metav1.Time `json:"appliedAt,omitempty"`
}

// RolloutPhase is the phase of a progressive rollout.
// +enum
type RolloutPhase string

// Rollout phases.
const (
	// RolloutProgressing: the render was applied and its health is awaited.
	RolloutProgressing RolloutPhase = "Progressing"
	// RolloutSucceeded: the render became healthy before the deadline.
	RolloutSucceeded RolloutPhase = "Succeeded"
	// RolloutFailed: the render became degraded or the deadline passed.
	RolloutFailed RolloutPhase = "Failed"
	// RolloutRolledBack: the render failed and the previous one was applied again.
	RolloutRolledBack RolloutPhase = "RolledBack"
)

// RolloutStatus is a progressive rollout.
type RolloutStatus struct {
	// phase is Progressing, Succeeded, Failed or RolledBack.
	Phase RolloutPhase `json:"phase"`
	// renderRef is the render rolled out.
	RenderRef string `json:"renderRef"`
	// previousRenderRef is the last render whose rollout succeeded.
	// +optional
	PreviousRenderRef string `json:"previousRenderRef,omitempty"`
	// startedAt is when the rollout started.
	// +optional
	StartedAt *metav1.Time `json:"startedAt,omitempty"`
	// deadline is startedAt + healthTimeout.
	// +optional
	Deadline *metav1.Time `json:"deadline,omitempty"`
	// message says what happened, for people.
	// +optional
	Message string `json:"message,omitempty"`
}

// SyncWaveStatus is the progress of a render applied wave by wave.
type SyncWaveStatus struct {
	// current is the position (1-based) of the wave applied last.
	Current int32 `json:"current"`
	// total is the number of waves of the render.
	Total int32 `json:"total"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ReleaseList is a list of Releases.
type ReleaseList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// items are the Releases.
	Items []Release `json:"items"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// SyncOptions are the query parameters of POST releases/<name>/sync.
type SyncOptions struct {
	metav1.TypeMeta `json:",inline"`
	// force also writes convoy.kumodo.io/sync-force-requested-at: the next reconcile skips
	// the pre-apply dry run and starts a new rollout.
	// +optional
	Force bool `json:"force,omitempty"`
	// render binds the request to one render: the full ref (sha256:<64 hex>) or its
	// 10-digit short form. The request is refused (409 Conflict) when it is not the
	// current render, and convoy applies it only while that render is current.
	// +optional
	Render string `json:"render,omitempty"`
}
