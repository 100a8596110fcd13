// Package wiring sets up the reconcilers of the convoy controller process on one
// manager, each by its own package's Setup: Releases (internal/controller), the
// status of Clusters (internal/clusterstatus), ReleaseSets (internal/releaseset),
// Receivers and the receiver server (internal/receiver) and Alerts
// (internal/notify). It connects them: a Receiver's call refreshes the Releases and
// ReleaseSets it selects through channels into their controllers, and all share the
// release controller's chart fetcher, clock, event recorder, metrics registry and
// target clusters. convoy controller, convoy dev's in-process start and the tests
// call it; it decides nothing.
package wiring

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"kumodo.io/convoy/internal/clusterstatus"
	"kumodo.io/convoy/internal/controller"
	"kumodo.io/convoy/internal/notify"
	"kumodo.io/convoy/internal/receiver"
	"kumodo.io/convoy/internal/releaseset"
)

// Options configure the reconcilers of the controller process.
type Options struct {
	// Release configures the release controller. Its Source (required), Clock,
	// Events, Metrics, Clusters and SkipNameValidation serve the other reconcilers
	// too (controller.WithDefaults fills them); its Refresh is set here.
	Release controller.Options
	// Receiver configures the Receiver controller and, with Receiver.BindAddress
	// (--receiver-bind-address), the receiver server. Its Refresher (the chart
	// fetcher, when it refreshes), its Releases and Sets channels, Metrics and
	// SkipNameValidation are set here.
	Receiver receiver.Options
	// Notify configures the notifier of Alerts; its Events and Metrics default to
	// the release controller's.
	Notify notify.Options
	// NoNotifier leaves the notifier out (tests that start one of their own).
	NoNotifier bool
}

// refreshQueue is the room of the channels a Receiver's refresh sends its Releases and
// ReleaseSets into; the Receiver controller waits when they are full.
const refreshQueue = 1024

// Setup registers every reconciler of the controller process with mgr and returns
// the release controller's.
func Setup(ctx context.Context, mgr manager.Manager, o Options) (*controller.Reconciler, error) {
	ro, err := controller.WithDefaults(mgr, o.Release)
	if err != nil {
		return nil, err
	}
	refreshReleases := make(chan event.GenericEvent, refreshQueue)
	refreshSets := make(chan event.GenericEvent, refreshQueue)
	ro.Refresh = refreshReleases
	r, err := controller.Setup(ctx, mgr, ro)
	if err != nil {
		return nil, err
	}
	if err := clusterstatus.Setup(mgr, clusterstatus.Options{Clock: ro.Clock, SkipNameValidation: ro.SkipNameValidation}); err != nil {
		return nil, err
	}
	// ReleaseSets write Releases; the same process reconciles them.
	// A set resolves its template's source with the Releases' fetcher and its caches,
	// as its Releases' identity.
	resolver, _ := ro.Source.(releaseset.SourceResolver)
	if _, err := releaseset.Setup(ctx, mgr, releaseset.Options{
		Clock: ro.Clock, Events: ro.Events, Metrics: ro.Metrics, SkipNameValidation: ro.SkipNameValidation,
		Resolver: resolver, Hosts: ro.Clusters, Refresh: refreshSets,
	}); err != nil {
		return nil, err
	}
	// Receivers: a call refreshes the sources of the Releases and sets they select.
	rco := o.Receiver
	rco.Refresher, _ = ro.Source.(receiver.Refresher)
	rco.Releases, rco.Sets = refreshReleases, refreshSets
	rco.Metrics, rco.SkipNameValidation = ro.Metrics, ro.SkipNameValidation
	if err := receiver.Setup(ctx, mgr, rco); err != nil {
		return nil, err
	}
	// Alerts: the notifications of the Releases and ReleaseSets of this cache.
	if !o.NoNotifier {
		n := o.Notify
		if n.Events == nil {
			n.Events = ro.Events
		}
		if n.Metrics == nil {
			n.Metrics = ro.Metrics
		}
		if _, err := notify.Setup(mgr, n); err != nil {
			return nil, err
		}
	}
	return r, nil
}
