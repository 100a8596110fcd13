package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// Alert sends notifications about the Releases and ReleaseSets of its namespace to a
// provider (Slack, Microsoft Teams or a webhook): notifications out.
type Alert struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec says which events of which objects go to which provider.
	Spec AlertSpec `json:"spec"`
	// status is written by the controller, through the /status subresource only.
	// +optional
	Status AlertStatus `json:"status,omitempty"`
}

// AlertSpec says which events of which objects go to which provider.
type AlertSpec struct {
	// selector is a label selector over the Releases and ReleaseSets of the Alert's
	// namespace; empty or unset selects all of them.
	// +optional
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
	// events are the events that are sent; at least one, each at most once.
	// +listType=set
	Events []AlertEvent `json:"events"`
	// provider is where the notifications go.
	Provider AlertProvider `json:"provider"`
	// uiURL is the base URL of `kubectl convoy ui` or of a shared convoy UI, an absolute
	// http or https URL; messages link to the object there. Unset: no links.
	// +optional
	UIURL string `json:"uiURL,omitempty"`
}

// AlertEvent is an event an Alert can send.
// +enum
type AlertEvent string

// Events of spec.events.
const (
	// AlertEventApprovalWaiting: a new render of a manual Release waits for POST releases/<name>/sync.
	AlertEventApprovalWaiting AlertEvent = "ApprovalWaiting"
	// AlertEventPromotionWaiting: a Manual stage of a ReleaseSet waits for POST releasesets/<name>/promote.
	AlertEventPromotionWaiting AlertEvent = "PromotionWaiting"
	// AlertEventApplied: a new render of a Release reached Ready.
	AlertEventApplied AlertEvent = "Applied"
	// AlertEventRolledBack: a Release rolled back a render that failed its rollout.
	AlertEventRolledBack AlertEvent = "RolledBack"
	// AlertEventRolloutFailed: the rollout of a Release's render failed.
	AlertEventRolloutFailed AlertEvent = "RolloutFailed"
	// AlertEventHalted: a ReleaseSet halted its rollout.
	AlertEventHalted AlertEvent = "Halted"
	// AlertEventHookFailed: a lifecycle hook Job of a Release failed or timed out.
	AlertEventHookFailed AlertEvent = "HookFailed"
	// AlertEventDriftDetected: an object a Release applied was changed or deleted on its cluster.
	AlertEventDriftDetected AlertEvent = "DriftDetected"
	// AlertEventAssessmentOverdue: a Release waited on the observer's assessment longer than the controller's bound.
	AlertEventAssessmentOverdue AlertEvent = "AssessmentOverdue"
	// AlertEventVerificationFailed: the chart of a Release failed its signature verification.
	AlertEventVerificationFailed AlertEvent = "VerificationFailed"
)

// AlertEvents are the events an Alert can send, in the order of the documentation.
var AlertEvents = []AlertEvent{
	AlertEventApprovalWaiting, AlertEventPromotionWaiting, AlertEventApplied, AlertEventRolledBack,
	AlertEventRolloutFailed, AlertEventHalted, AlertEventHookFailed, AlertEventDriftDetected,
	AlertEventAssessmentOverdue, AlertEventVerificationFailed,
}

// AlertProvider is where an Alert's notifications go.
type AlertProvider struct {
	// type is slack, msteams or webhook.
	Type AlertProviderType `json:"type"`
	// secretRef names a Secret of the Alert's namespace: key address holds the URL
	// notifications are posted to; for webhook, key token (optional) is the HMAC-SHA256
	// key of the header X-Convoy-Signature: sha256=<hex> over the body.
	SecretRef LocalObjectReference `json:"secretRef"`
}

// AlertProviderType is the kind of receiving end of an Alert.
// +enum
type AlertProviderType string

// Types of spec.provider.type.
const (
	// AlertProviderSlack posts Slack messages to an incoming webhook URL.
	AlertProviderSlack AlertProviderType = "slack"
	// AlertProviderMSTeams posts Microsoft Teams messages to a workflow or incoming webhook URL.
	AlertProviderMSTeams AlertProviderType = "msteams"
	// AlertProviderWebhook posts convoy's JSON body to any URL, signed when the Secret has a token.
	AlertProviderWebhook AlertProviderType = "webhook"
)

// AlertProviderTypes are the provider types, in the order of the documentation.
var AlertProviderTypes = []AlertProviderType{AlertProviderSlack, AlertProviderMSTeams, AlertProviderWebhook}

// AlertStatus is written by the controller.
type AlertStatus struct {
	// observedGeneration is the generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// conditions hold Ready: the provider answered the last delivery (reason Delivered,
	// DeliveryFailed or SecretNotFound).
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// lastDelivery is the last notification the controller tried to deliver.
	// +optional
	LastDelivery *AlertDelivery `json:"lastDelivery,omitempty"`
}

// AlertDelivery is one attempt to deliver a notification.
type AlertDelivery struct {
	// time of the attempt.
	Time metav1.Time `json:"time"`
	// event that was sent.
	Event AlertEvent `json:"event"`
	// object the event is about, in the Alert's namespace.
	Object AlertObjectReference `json:"object"`
	// result is what the provider answered: the HTTP status (such as "200 OK"), or the
	// error when there was no answer.
	// +optional
	Result string `json:"result,omitempty"`
}

// AlertObjectReference names the Release or ReleaseSet an event is about.
type AlertObjectReference struct {
	// kind is Release or ReleaseSet.
	Kind string `json:"kind"`
	// name of the object.
	Name string `json:"name"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// AlertList is a list of Alerts.
type AlertList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// items are the Alerts.
	Items []Alert `json:"items"`
}
