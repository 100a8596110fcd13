// Package receiver is convoy's webhooks in: the controller of Receivers (their
// status.webhookPath and Ready condition) and the receiver server that answers
// status.webhookPath on the controller's --receiver-bind-address. A call is
// authenticated with the Receiver's token as its type says (verify.go), recorded in
// the Receiver's status.lastCall, and the controller that sees the new lastCall
// refreshes the sources of the Releases and ReleaseSets the Receiver selects and
// reconciles them at once.
package receiver
