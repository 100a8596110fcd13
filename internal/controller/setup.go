package controller

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sigstore/sigstore-go/pkg/root"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/apply"
	"kumodo.io/convoy/internal/hostmanager"
	"kumodo.io/convoy/internal/policy"
	"kumodo.io/convoy/internal/store"
	"kumodo.io/convoy/internal/targets"
)

// DefaultResync is the informer resync period (flag --resync): every Release is
// reconciled at least this often (SP-27).
const DefaultResync = 2 * time.Minute

// Name is the controller's name, in logs, metrics and events.
const Name = "convoy-release-controller"

// Scheme returns the scheme of the controller: the core API and convoy's.
func Scheme() (*runtime.Scheme, error) { return hostmanager.Scheme() }

// ManagerOptions configure the controller's manager.
type ManagerOptions = hostmanager.Options

// NewManager returns a manager for the release controller on the host cluster of
// cfg (hostmanager.New): Secrets are read when needed, never cached. The manager of a
// shard (o.Shard) also watches the Releases of every shard, cut down to what the
// cluster waves read (clusterwave_view.go).
func NewManager(cfg *rest.Config, o ManagerOptions) (manager.Manager, error) {
	mgr, err := hostmanager.New(cfg, hostmanager.Process{
		Name:          "convoy-controller",
		DefaultResync: DefaultResync,
		Uncached:      []client.Object{&corev1.Secret{}},
	}, o)
	if err != nil || o.Shard == "" {
		return mgr, err
	}
	return withWaveView(cfg, mgr, o.Shard, o.Namespaces)
}

// Options configure the release controller.
type Options struct {
	// Source fetches the Releases' charts (*source.Fetcher). Required. The ReleaseSet
	// controller resolves its sets' sources with it too, so that both share its
	// caches.
	Source ChartFetcher
	// Clusters resolves target clusters. Default: a targets.Cache on the manager's
	// configuration and readers.
	Clusters targets.Resolver
	// Clock is read once per reconcile. Default: the real clock.
	Clock clock.Clock
	// Events records events. Default: the manager's recorder.
	Events EventRecorder
	// DefaultServiceAccount is the lockdown (flag --default-service-account): a
	// Release without spec.serviceAccountName acts as this ServiceAccount of its
	// namespace. Used only for the default Clusters.
	DefaultServiceAccount string
	// RequireVerifiedCharts refuses to render and apply a Release that does not ask
	// for its chart to be verified (spec.chart.verify): flag
	// --require-verified-charts.
	RequireVerifiedCharts bool
	// SigstoreTrustedRoot is the Sigstore trusted root that keyless cosign signatures
	// are checked against (flag --sigstore-trusted-root); nil: keyless verification
	// fails as Misconfigured.
	SigstoreTrustedRoot root.TrustedMaterial
	// Concurrency is the number of Releases reconciled at the same time (default 4).
	Concurrency int
	// Apply tunes internal/apply.
	Apply apply.Options
	// DeletionWarnAfter is how long a deletion waits for the applied objects to go
	// before it warns (default 5 minutes).
	DeletionWarnAfter time.Duration
	// Metrics registers the metrics. Default: controller-runtime's registry.
	Metrics prometheus.Registerer
	// SkipNameValidation allows several controllers of the same name in one process
	// (tests).
	SkipNameValidation bool
	// HealthDataDelay is how long a reconcile for new health data waits in the work
	// queue (DefaultHealthDataDelay when 0; none when negative).
	HealthDataDelay time.Duration
	// AssessmentOverdueAfter is how long a Release may wait on the observer's
	// assessment of its ReleaseInventory before it reports the assessment as overdue
	// (policy.DefaultAssessmentOverdueAfter when 0; never when negative).
	AssessmentOverdueAfter time.Duration
	// Middleware, when set, wraps the Reconciler as the controller calls it (tests
	// count reconciles and their results with it).
	Middleware func(reconcile.Reconciler) reconcile.Reconciler
	// Refresh, when set, carries Releases to reconcile at once: those a Receiver's
	// call refreshed (internal/receiver).
	Refresh <-chan event.GenericEvent
}

// WithDefaults is o with the defaults of every option left empty: the clock, the
// event recorder, the metrics registry, the Clusters resolver and the tunings. The
// controller process's other reconcilers (internal/wiring) share its Clock, Events,
// Metrics and Clusters.
func WithDefaults(mgr manager.Manager, o Options) (Options, error) {
	if o.Source == nil {
		return o, errors.New("controller: Options.Source is required")
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.Events == nil {
		o.Events = mgr.GetEventRecorder(Name)
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 4
	}
	if o.DeletionWarnAfter <= 0 {
		o.DeletionWarnAfter = 5 * time.Minute
	}
	if o.Metrics == nil {
		o.Metrics = ctrlmetrics.Registry
	}
	switch {
	case o.HealthDataDelay == 0:
		o.HealthDataDelay = DefaultHealthDataDelay
	case o.HealthDataDelay < 0:
		o.HealthDataDelay = 0
	}
	switch {
	case o.AssessmentOverdueAfter == 0:
		o.AssessmentOverdueAfter = policy.DefaultAssessmentOverdueAfter
	case o.AssessmentOverdueAfter < 0:
		o.AssessmentOverdueAfter = 0
	}
	if o.Clusters == nil {
		c, err := targets.New(targets.Options{
			Host:                  mgr.GetConfig(),
			Reader:                targets.HostReader{Cached: mgr.GetClient(), Direct: mgr.GetAPIReader()},
			Clock:                 o.Clock,
			DefaultServiceAccount: o.DefaultServiceAccount,
		})
		if err != nil {
			return o, err
		}
		o.Clusters = c
	}
	return o, nil
}

// Setup builds the Reconciler and registers it with mgr: the Release watch with its
// predicates, the ReleaseInventory status watch (SP-29), the cluster-wave watch
// (SP-30) and the field indexes on spec.cluster it uses, on the cluster-wave view
// (waveView: the manager's cache, or a shard's view of every shard), and the
// readiness check of the controller process's informers. The process's other
// reconcilers are set up beside it by internal/wiring.
func Setup(ctx context.Context, mgr manager.Manager, o Options) (*Reconciler, error) {
	o, err := WithDefaults(mgr, o)
	if err != nil {
		return nil, err
	}
	waves, shard := waveView(mgr)
	if err := waves.IndexField(ctx, &v1.Release{}, indexCluster, indexReleaseCluster); err != nil {
		return nil, fmt.Errorf("index Releases by %s: %w", indexCluster, err)
	}
	if err := waves.IndexField(ctx, &v1.Release{}, indexWavedCluster, indexReleaseWavedCluster); err != nil {
		return nil, fmt.Errorf("index Releases by %s: %w", indexWavedCluster, err)
	}
	if err := store.IndexRenders(ctx, mgr.GetFieldIndexer()); err != nil {
		return nil, fmt.Errorf("index Renders by %s: %w", store.IndexRenderRelease, err)
	}
	r := &Reconciler{
		client:            mgr.GetClient(),
		waves:             waves,
		apiReader:         mgr.GetAPIReader(),
		clock:             o.Clock,
		source:            o.Source,
		clusters:          o.Clusters,
		events:            o.Events,
		failures:          policy.NewFailureCounter(),
		retries:           newRetryLimiter(),
		writes:            &writeLog{},
		renders:           &renderMemory{},
		capabilities:      &capabilitiesMemo{},
		seen:              &releaseMemory[apply.Seen]{},
		inventories:       &releaseMemory[inventorySpec]{},
		applyOpts:         o.Apply,
		metrics:           newMetrics(o.Metrics),
		deletionWarnAfter: o.DeletionWarnAfter,
		overdueAfter:      o.AssessmentOverdueAfter,
		dueSince:          &releaseMemory[time.Time]{},
		adopted:           &releaseMemory[struct{}]{},
		verified:          &verifications{},
		requireVerified:   o.RequireVerifiedCharts,
		sigstoreRoot:      o.SigstoreTrustedRoot,
	}
	var rec reconcile.Reconciler = r
	if o.Middleware != nil {
		rec = o.Middleware(r)
	}
	b := builder.ControllerManagedBy(mgr).
		Named("release").
		For(&v1.Release{}, builder.WithPredicates(releasePredicate())).
		Watches(&v1.Release{}, priorityHandler(), builder.WithPredicates(releasePriorityPredicate())).
		Watches(&v1.ReleaseInventory{}, inventoryHandler(o.HealthDataDelay),
			builder.WithPredicates(inventoryPredicate())).
		WatchesRawSource(source.Kind[client.Object](waves, &v1.Release{}, clusterWaveHandler(waves, shard),
			clusterWavePredicate())).
		Watches(&corev1.Namespace{}, namespaceHandler(mgr.GetClient()),
			builder.WithPredicates(namespacePredicate())).
		WithOptions(controller.Options{
			MaxConcurrentReconciles: o.Concurrency,
			SkipNameValidation:      ptr.To(o.SkipNameValidation),
			RateLimiter:             r.retries,
		})
	if o.Refresh != nil {
		b = b.WatchesRawSource(source.Channel(o.Refresh, &handler.EnqueueRequestForObject{}))
	}
	if err := b.Complete(rec); err != nil {
		return nil, fmt.Errorf("set up the release controller: %w", err)
	}
	// Ready (/readyz) once the controllers' informers have synced, not merely started:
	// a shard's cluster-wave view too.
	ready := informersSynced(mgr.GetCache(), watchedKinds()...)
	if waves != mgr.GetCache() {
		own, view := ready, informersSynced(waves, &v1.Release{})
		ready = func(req *http.Request) error {
			if err := own(req); err != nil {
				return err
			}
			if err := view(req); err != nil {
				return fmt.Errorf("the cluster-wave view: %w", err)
			}
			return nil
		}
	}
	if err := mgr.AddReadyzCheck(hostmanager.ReadyzInformers, ready); err != nil {
		return nil, fmt.Errorf("add the readiness check: %w", err)
	}
	return r, nil
}
