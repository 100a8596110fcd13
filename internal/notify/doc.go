// Package notify delivers the notifications of Alerts: it watches the Releases,
// ReleaseSets and ReleaseInventories in the controller's cache, turns their status
// transitions into events (ApprovalWaiting, Applied, RolledBack, Halted, …), and posts
// each event to the provider of every Alert of the object's namespace that selects it
// (Slack, Microsoft Teams or a signed JSON webhook), then reports the delivery in the
// Alert's status.
//
// The decisions are pure and tested by tables: which events a transition makes
// (events.go), which Alerts take an event (match.go), and the bodies and signature
// posted (message.go). The Notifier (notifier.go) is the I/O: informer handlers that
// never block, a bounded in-memory queue per Alert with retries and exponential
// backoff, the Secret read from the Alert's own namespace, the HTTP post, the Alert's
// status, an Event on failure and the metrics.
package notify
