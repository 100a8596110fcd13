package releaseset

import (
	"context"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrlbuilder "sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// Name is the ReleaseSet controller's name, in logs and events.
const Name = "convoy-releaseset-controller"

// Options configure the ReleaseSet controller.
type Options struct {
	// Clock is read once per reconcile. Default: the real clock.
	Clock clock.Clock
	// Events records events on ReleaseSets. Default: the manager's recorder.
	Events EventRecorder
	// Concurrency is the number of ReleaseSets reconciled at the same time (default 2).
	Concurrency int
	// SkipNameValidation allows several controllers of the same name in one process (tests).
	SkipNameValidation bool
	// Metrics registers the metrics. Default: controller-runtime's registry.
	Metrics prometheus.Registerer
	// Middleware, when set, wraps the Reconciler as the controller calls it (tests).
	Middleware func(reconcile.Reconciler) reconcile.Reconciler
	// Resolver resolves the chart source of a set's template (the controller's
	// *source.Fetcher, whose caches the Releases' fetches share). Nil: sets resolve no source and
	// their Releases read the template's chart and valuesFrom as written.
	Resolver SourceResolver
	// Hosts gives the host acting as the identity a set's Releases act as
	// (clusters.Resolver), to read the chart's credentials and the valuesFrom objects
	// as they would. Nil: convoy's own identity.
	Hosts HostResolver
	// Refresh, when set, delivers the sets whose source a receiver refreshed: each
	// resolves its source at its next reconcile, whatever its interval, and is
	// reconciled at once.
	Refresh <-chan event.GenericEvent
}

// Setup registers the ReleaseSet controller with mgr. It reconciles a set when the set
// changes (spec, approvals, status), when one of the Releases it controls changes,
// when a Cluster's labels, spec or Ready status change or a Cluster comes or goes
// (every set: any may select it; maxUnavailable counts the Clusters not Ready), and when the labels of a namespace change (the sets in it: namespace
// selectors). A manager of a shard caches only the sets and Releases of its shard
// (hostmanager), so it reconciles only those.
func Setup(_ context.Context, mgr manager.Manager, o Options) (*Reconciler, error) {
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.Events == nil {
		o.Events = mgr.GetEventRecorder(Name)
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 2
	}
	if o.Metrics == nil {
		o.Metrics = ctrlmetrics.Registry
	}
	r := &Reconciler{client: mgr.GetClient(), clock: o.Clock, events: o.Events, metrics: newMetrics(o.Metrics),
		apiReader: mgr.GetAPIReader(), resolver: o.Resolver, hosts: o.Hosts, schedule: &sourceSchedule{}}
	var rec reconcile.Reconciler = r
	if o.Middleware != nil {
		rec = o.Middleware(r)
	}
	c := mgr.GetClient()
	b := ctrlbuilder.ControllerManagedBy(mgr)
	if o.Refresh != nil {
		b = b.WatchesRawSource(source.Channel(o.Refresh, refreshHandler(r.schedule)))
	}
	err := b.
		Named("releaseset").
		For(&v1.ReleaseSet{}).
		Owns(&v1.Release{}).
		Watches(&v1.Cluster{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, _ client.Object) []reconcile.Request {
			return setsIn(ctx, c)
		}), ctrlbuilder.WithPredicates(predicate.Or(predicate.LabelChangedPredicate{}, predicate.GenerationChangedPredicate{}, clusterReadyChanged))).
		Watches(&corev1.Namespace{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, ns client.Object) []reconcile.Request {
			return setsIn(ctx, c, client.InNamespace(ns.GetName()))
		}), ctrlbuilder.WithPredicates(predicate.LabelChangedPredicate{})).
		WithOptions(controller.Options{
			MaxConcurrentReconciles: o.Concurrency,
			SkipNameValidation:      ptr.To(o.SkipNameValidation),
		}).
		Complete(rec)
	if err != nil {
		return nil, fmt.Errorf("set up the ReleaseSet controller: %w", err)
	}
	return r, nil
}

// setsIn lists the ReleaseSets in the cache (of a namespace, with opts) as requests.
func setsIn(ctx context.Context, c client.Reader, opts ...client.ListOption) []reconcile.Request {
	sets := &v1.ReleaseSetList{}
	if err := c.List(ctx, sets, opts...); err != nil {
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(sets.Items))
	for _, s := range sets.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&s)})
	}
	return reqs
}

// clusterReadyChanged passes the updates of a Cluster whose Ready condition changed
// status.
var clusterReadyChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		readyOf := func(o client.Object) metav1.ConditionStatus {
			c, ok := o.(*v1.Cluster)
			if !ok {
				return ""
			}
			if r := apimeta.FindStatusCondition(c.Status.Conditions, v1.ConditionReady); r != nil {
				return r.Status
			}
			return ""
		}
		return readyOf(e.ObjectOld) != readyOf(e.ObjectNew)
	},
	CreateFunc:  func(event.CreateEvent) bool { return false },
	DeleteFunc:  func(event.DeleteEvent) bool { return false },
	GenericFunc: func(event.GenericEvent) bool { return false },
}

// refreshHandler makes each set of a refresh due to resolve its source (the schedule
// keeps the source resolved last, should the resolution fail) and enqueues it.
func refreshHandler(s *sourceSchedule) handler.EventHandler {
	return handler.Funcs{GenericFunc: func(_ context.Context, e event.GenericEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		s.due(e.Object.GetUID())
		q.Add(reconcile.Request{NamespacedName: client.ObjectKeyFromObject(e.Object)})
	}}
}
