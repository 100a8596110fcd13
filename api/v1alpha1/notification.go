package v1alpha1

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// Reasons of an Alert's Ready condition (the provider answered the last delivery).
const (
	// ReasonDelivered: the provider accepted the last notification (Ready=True).
	ReasonDelivered = "Delivered"
	// ReasonDeliveryFailed: the provider refused the last notification or did not answer; the message says what it answered.
	ReasonDeliveryFailed = "DeliveryFailed"
	// ReasonSecretNotFound: the Secret of spec.provider.secretRef (Alert) or spec.secretRef (Receiver), or its key, is missing.
	ReasonSecretNotFound = "SecretNotFound"
	// ReasonNotificationsDropped: notifications of the Alert were dropped because the notifier's queue was full (its provider is slow or failing); the message says how many since when.
	ReasonNotificationsDropped = "NotificationsDropped"
)

// Reasons of a Receiver's Ready condition besides ReasonSecretNotFound.
const (
	// ReasonServing: the controller's receiver server serves status.webhookPath with the current token (Ready=True).
	ReasonServing = "Serving"
	// ReasonReceiverServerDisabled: the controller runs without --receiver-bind-address, so no server answers status.webhookPath.
	ReasonReceiverServerDisabled = "ReceiverServerDisabled"
)

// Names of notifications and webhooks.
const (
	// SecretKeyAddress is the key of an Alert's Secret that holds the URL notifications are posted to.
	SecretKeyAddress = "address"
	// SecretKeyToken is the key of a Receiver's Secret (and of a webhook Alert's) that holds the shared token.
	SecretKeyToken = "token"
	// HeaderSignature is the header of a signed body, SignaturePrefix and the hex of the body's HMAC-SHA256 with the token: webhook Alerts send it, generic Receivers check it.
	HeaderSignature = "X-Convoy-Signature"
	// SignaturePrefix starts the value of HeaderSignature.
	SignaturePrefix = "sha256="
	// WebhookPathPrefix starts every Receiver's status.webhookPath.
	WebhookPathPrefix = "/hooks/"
)

// ReceiverWebhookPath is the status.webhookPath of the Receiver name in namespace
// whose Secret holds token: WebhookPathPrefix and the lowercase hex of
// sha256(token + "/" + name + "/" + namespace). Names and namespaces hold no "/", so
// the three parts are read back unambiguously from the right: no other token, name
// and namespace join to the same bytes. The token is taken as stored in the Secret,
// byte for byte (a trailing newline included).
func ReceiverWebhookPath(token []byte, name, namespace string) string {
	h := sha256.New()
	h.Write(token)
	h.Write([]byte("/" + name + "/" + namespace))
	return WebhookPathPrefix + hex.EncodeToString(h.Sum(nil))
}

// IsReceiverWebhookPath says whether path has the form of a Receiver's
// status.webhookPath: WebhookPathPrefix and 64 lowercase hex digits.
func IsReceiverWebhookPath(path string) bool {
	digest, ok := strings.CutPrefix(path, WebhookPathPrefix)
	if !ok || len(digest) != 2*sha256.Size {
		return false
	}
	for _, c := range digest {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
