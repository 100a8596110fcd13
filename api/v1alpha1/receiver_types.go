package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// Receiver is a webhook endpoint that refreshes the sources of the Releases and
// ReleaseSets of its namespace when a Git host or a registry calls it: webhooks in.
type Receiver struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec says who calls and which objects a call refreshes.
	Spec ReceiverSpec `json:"spec"`
	// status is written by the controller, through the /status subresource only.
	// +optional
	Status ReceiverStatus `json:"status,omitempty"`
}

// ReceiverSpec says who calls a Receiver and which objects a call refreshes.
type ReceiverSpec struct {
	// type is the caller, which says how a call is authenticated: github, gitlab,
	// harbor or generic (HMAC-SHA256 of the body in X-Convoy-Signature: sha256=<hex>).
	Type ReceiverType `json:"type"`
	// secretRef names a Secret of the Receiver's namespace with the key token: the
	// shared secret of the caller, and part of status.webhookPath.
	SecretRef LocalObjectReference `json:"secretRef"`
	// selector is a label selector over the Releases and ReleaseSets of the Receiver's
	// namespace whose sources a call refreshes; empty or unset selects all of them.
	// +optional
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
}

// ReceiverType is the kind of caller of a Receiver.
// +enum
type ReceiverType string

// Types of spec.type.
const (
	// ReceiverGitHub: GitHub webhooks, signed in X-Hub-Signature-256 with the token.
	ReceiverGitHub ReceiverType = "github"
	// ReceiverGitLab: GitLab webhooks, carrying the token in X-Gitlab-Token.
	ReceiverGitLab ReceiverType = "gitlab"
	// ReceiverHarbor: Harbor webhooks, carrying the token in the Authorization header.
	ReceiverHarbor ReceiverType = "harbor"
	// ReceiverGeneric: any caller that signs the body with the token: X-Convoy-Signature: sha256=<hex of HMAC-SHA256>.
	ReceiverGeneric ReceiverType = "generic"
)

// ReceiverTypes are the receiver types, in the order of the documentation.
var ReceiverTypes = []ReceiverType{ReceiverGitHub, ReceiverGitLab, ReceiverHarbor, ReceiverGeneric}

// ReceiverStatus is written by the controller.
type ReceiverStatus struct {
	// observedGeneration is the generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// conditions hold Ready: a receiver server serves status.webhookPath with the
	// current token (reason Serving, SecretNotFound or ReceiverServerDisabled).
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// webhookPath is where calls go, on the controller's receiver server:
	// /hooks/<sha256 of token, name and namespace, 64 hex digits> (ReceiverWebhookPath).
	// It changes with the token.
	// +optional
	WebhookPath string `json:"webhookPath,omitempty"`
	// lastCall is the last authenticated call.
	// +optional
	LastCall *ReceiverCall `json:"lastCall,omitempty"`
}

// ReceiverCall is one authenticated call of a Receiver.
type ReceiverCall struct {
	// time of the call.
	Time metav1.Time `json:"time"`
	// result says what the call did: the objects it asked to refresh, or why it
	// refreshed none.
	// +optional
	Result string `json:"result,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ReceiverList is a list of Receivers.
type ReceiverList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// items are the Receivers.
	Items []Receiver `json:"items"`
}
