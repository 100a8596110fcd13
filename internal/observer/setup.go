package observer

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/hostmanager"
	"kumodo.io/convoy/internal/observer/health"
	"kumodo.io/convoy/internal/targets"
)

// Name is the observer's name, in logs and metrics.
const Name = "convoy-observer"

// DefaultResync is the informer resync period of the host objects (flag --resync):
// every inventory is assessed at least this often, which costs no write when nothing
// changed.
const DefaultResync = 10 * time.Minute

// Scheme returns the observer's scheme: the core API and convoy's.
func Scheme() (*runtime.Scheme, error) { return hostmanager.Scheme() }

// ManagerOptions configure the observer's manager.
type ManagerOptions = hostmanager.Options

// NewManager returns a manager for the observer on the host cluster of cfg
// (hostmanager.New). Its cache holds ReleaseInventories, the Releases of the shard
// (without their values: dropValues), Clusters and Namespaces; Secrets (kubeconfigs)
// and Renders (large) are read from the API server when needed.
func NewManager(cfg *rest.Config, o ManagerOptions) (manager.Manager, error) {
	return hostmanager.New(cfg, hostmanager.Process{
		Name:          "convoy-observer",
		DefaultResync: DefaultResync,
		Uncached:      []client.Object{&corev1.Secret{}, &v1.Render{}},
		Transforms:    map[client.Object]toolscache.TransformFunc{&v1.Release{}: dropValues},
	}, o)
}

// dropValues drops a Release's spec.values and spec.valuesFrom before the observer
// caches it: they are the controller's render inputs, which the observer never reads
// (it assesses what the inventory lists and dry-runs the stored Render's manifests),
// and inline values can be the largest part of a Release (decision 0126: memory).
func dropValues(obj any) (any, error) {
	if rel, ok := obj.(*v1.Release); ok {
		rel.Spec.Values, rel.Spec.ValuesFrom = nil, nil
	}
	return obj, nil
}

// Options configure the observer.
type Options struct {
	// Clusters resolves target clusters. Default: a targets.Cache on the manager's
	// configuration and readers.
	Clusters targets.Resolver
	// Syncer sends POST …/sync. Default: one on the manager's configuration.
	Syncer Syncer
	// Drift checks drift. Nil: no drift checks (status.drift stays empty).
	Drift DriftChecker
	// Clock is read once per assessment. Default: the real clock.
	Clock clock.Clock
	// Concurrency is the number of inventories assessed at the same time (default 4).
	Concurrency int
	// Metrics registers the metrics. Default: controller-runtime's registry.
	Metrics prometheus.Registerer
	// SkipNameValidation allows several observers in one process (tests).
	SkipNameValidation bool
	// DefaultServiceAccount is the lockdown (flag --default-service-account): the
	// drift checks of a Release without spec.serviceAccountName act as this
	// ServiceAccount of its namespace. Used only for the default Clusters.
	DefaultServiceAccount string
	// IdleWatchTimeout is how long the informer of a kind on a target cluster keeps
	// running once no inventory lists that kind (default DefaultIdleWatchTimeout;
	// negative: stop at once).
	IdleWatchTimeout time.Duration
	// Settle is how long the first health data of a render whose objects are still
	// progressing is held back (health.SettleWait; default health.DefaultSettle;
	// negative: none).
	Settle time.Duration
}

// Observer assesses ReleaseInventories. Setup makes one and registers it.
type Observer struct {
	client    client.Client
	apiReader client.Reader
	clusters  targets.Resolver
	syncer    Syncer
	drift     DriftChecker
	clock     clock.Clock
	metrics   *metrics

	memory     health.Memory
	driftTimes driftTimes
	// settle and sightings hold back the first health data of a progressing render
	// (health.SettleWait).
	settle    time.Duration
	sightings renderSightings
	// renderWaves are the sync waves of the render each Release applies wave by wave.
	renderWaves renderWaves
	// replaced are the objects convoy created that the API server showed replaced
	// (identity.go).
	replaced replacedObjects
	// watches is set when the controller starts (it needs the queue).
	watches atomic.Pointer[watches]
}

// Setup builds the Observer and registers it with mgr: a work queue keyed by
// ReleaseInventory (namespace/name, the Release's), fed by the inventories, the
// Releases and the target-cluster informers, with Concurrency workers.
func Setup(mgr manager.Manager, o Options) (*Observer, error) {
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 4
	}
	switch {
	case o.IdleWatchTimeout == 0:
		o.IdleWatchTimeout = DefaultIdleWatchTimeout
	case o.IdleWatchTimeout < 0:
		o.IdleWatchTimeout = 0
	}
	switch {
	case o.Settle == 0:
		o.Settle = health.DefaultSettle
	case o.Settle < 0:
		o.Settle = 0
	}
	if o.Metrics == nil {
		o.Metrics = ctrlmetrics.Registry
	}
	if o.Clusters == nil {
		c, err := targets.New(targets.Options{
			Host: mgr.GetConfig(),
			// The manager's client reads Clusters and Namespaces from the cache and
			// Secrets (kubeconfigs) from the API server.
			Reader:                mgr.GetClient(),
			Clock:                 o.Clock,
			DefaultServiceAccount: o.DefaultServiceAccount,
		})
		if err != nil {
			return nil, err
		}
		o.Clusters = c
	}
	if o.Syncer == nil {
		s, err := NewSyncer(mgr.GetConfig())
		if err != nil {
			return nil, err
		}
		o.Syncer = s
	}
	obs := &Observer{
		client:    mgr.GetClient(),
		apiReader: mgr.GetAPIReader(),
		clusters:  o.Clusters,
		syncer:    o.Syncer,
		drift:     o.Drift,
		clock:     o.Clock,
		settle:    o.Settle,
	}
	m, err := newMetrics(o.Metrics, obs.watchedKinds)
	if err != nil {
		return nil, err
	}
	obs.metrics = m
	log := mgr.GetLogger().WithName("observer")
	targets := source.Func(func(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
		obs.watches.Store(newWatches(ctx, log, func(key types.NamespacedName) {
			q.Add(reconcile.Request{NamespacedName: key})
		}, o.IdleWatchTimeout, o.Clock.Now))
		return nil
	})
	err = builder.ControllerManagedBy(mgr).
		Named("observer").
		For(&v1.ReleaseInventory{}).
		// A Release's resync event adds nothing to its inventory's own (the same key):
		// without this predicate every resync assessed each inventory twice.
		Watches(&v1.Release{}, handler.EnqueueRequestsFromMapFunc(sameName),
			builder.WithPredicates(predicate.ResourceVersionChangedPredicate{})).
		WatchesRawSource(targets).
		WithOptions(controller.Options{
			MaxConcurrentReconciles: o.Concurrency,
			SkipNameValidation:      ptr.To(o.SkipNameValidation),
		}).
		Complete(obs)
	if err != nil {
		return nil, fmt.Errorf("set up the observer: %w", err)
	}
	return obs, nil
}

// sameName maps a Release to its ReleaseInventory, which has the same name.
func sameName(_ context.Context, obj client.Object) []reconcile.Request {
	return []reconcile.Request{{NamespacedName: client.ObjectKeyFromObject(obj)}}
}

func (o *Observer) watchedKinds() float64 {
	if w := o.watches.Load(); w != nil {
		return float64(w.count())
	}
	return 0
}

// errNotStarted is returned by a reconcile before the target watches exist.
var errNotStarted = errors.New("the observer's target watches are not started yet")
