package v1alpha1

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Defaults of fields that have one. syncPolicy.automatic and syncPolicy.interval have
// none, on purpose: unset means manual mode and no periodic reconcile.
const (
	// DefaultHealthTimeout is failurePolicy.healthTimeout when unset.
	DefaultHealthTimeout = 5 * time.Minute
	// DefaultHookTimeout is a hook's timeout when unset.
	DefaultHookTimeout = 10 * time.Minute
	// DefaultRetryBackoffMax is the cap of retryBackoff when max is unset or 0.
	DefaultRetryBackoffMax = 1000 * time.Second
	// DefaultValuesKey is the key a valuesFrom entry reads when key is unset.
	DefaultValuesKey = "values.yaml"
	// DefaultKubeconfigKey is the Secret key of a Cluster's kubeconfig when key is unset.
	DefaultKubeconfigKey = "value"
)

// SetDefaults_ReleaseSpec sets the defaults of a Release's spec.
func SetDefaults_ReleaseSpec(obj *ReleaseSpec) {
	if obj.Prune == nil {
		prune := true
		obj.Prune = &prune
	}
	if obj.DeletionPolicy == "" {
		obj.DeletionPolicy = DeletionPolicyDelete
	}
}

// SetDefaults_FailurePolicy sets the defaults of a failurePolicy.
func SetDefaults_FailurePolicy(obj *FailurePolicy) {
	if obj.HealthTimeout == nil {
		obj.HealthTimeout = &metav1.Duration{Duration: DefaultHealthTimeout}
	}
	if obj.Action == "" {
		obj.Action = FailureActionRollback
	}
}

// SetDefaults_Hook sets the defaults of a lifecycle hook.
func SetDefaults_Hook(obj *Hook) {
	if obj.Timeout == nil {
		obj.Timeout = &metav1.Duration{Duration: DefaultHookTimeout}
	}
}

// SetDefaults_KeylessVerify sets the defaults of spec.chart.verify.keyless.
func SetDefaults_KeylessVerify(obj *KeylessVerify) {
	if obj.TransparencyLog == nil {
		tlog := true
		obj.TransparencyLog = &tlog
	}
}
