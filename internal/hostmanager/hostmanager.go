// Package hostmanager builds the controller-runtime manager that convoy's controller
// and observer each run on the host cluster: one scheme, a cache of the shard's
// Releases that resyncs periodically, leader election per shard, metrics and probes.
package hostmanager

import (
	"fmt"
	"reflect"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// Scheme returns the scheme of convoy's host processes: the core API and convoy's.
func Scheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return nil, err
	}
	if err := v1.AddToScheme(s); err != nil {
		return nil, err
	}
	return s, nil
}

// Options configure a manager.
type Options struct {
	// Resync is the informer resync period, not jittered; 0 means the process's default.
	Resync time.Duration
	// Shard, when set, limits the process to the Releases and ReleaseSets labelled
	// convoy.kumodo.io/shard=<Shard>; empty: every one.
	Shard string
	// MetricsBindAddress serves /metrics; "0" disables it.
	MetricsBindAddress string
	// HealthProbeBindAddress serves /healthz and /readyz; "0" or empty disables it.
	HealthProbeBindAddress string
	// PprofBindAddress serves Go's /debug/pprof/ profiles; "0" or empty disables it.
	PprofBindAddress string
	// LeaderElection makes only one replica (per shard) work at a time.
	LeaderElection bool
	// LeaderElectionNamespace holds the election's Lease.
	LeaderElectionNamespace string
	// Namespaces, when set, limits the process to these namespaces.
	Namespaces []string
	// RESTMapper, when set, is the manager's REST mapper (Start makes one that already
	// knows convoy's kinds); nil: controller-runtime's, which asks discovery when a kind
	// is first needed.
	RESTMapper meta.RESTMapper
}

// ReadyzInformers is the name of the controller process's readiness check
// (/readyz/informers): it passes once the informers of its reconcilers have synced.
// convoy dev waits for it.
const ReadyzInformers = "informers"

// Process says what differs between the controller's manager and the observer's.
type Process struct {
	// Name is the leader election ID; "-<shard>" is appended for a shard.
	Name string
	// DefaultResync is the resync period when Options.Resync is 0.
	DefaultResync time.Duration
	// Uncached are the kinds the client reads from the API server, never from the
	// cache (Secrets: convoy does not hold every Secret of the cluster in memory).
	Uncached []client.Object
	// Transforms change the objects of a kind before they are cached, after their
	// managed fields are stripped, so that the process keeps only what it reads.
	Transforms map[client.Object]toolscache.TransformFunc
}

// New returns a manager on the host cluster of cfg: a cache whose handlers resync every
// Resync, without jitter, the first time Resync after they start (resync.go), that
// strips managed fields and holds the Releases of the shard and their
// ReleaseInventories; and /healthz and /readyz ping checks when probes are served.
func New(cfg *rest.Config, p Process, o Options) (manager.Manager, error) {
	scheme, err := Scheme()
	if err != nil {
		return nil, err
	}
	resync := o.Resync
	if resync <= 0 {
		resync = p.DefaultResync
	}
	cacheOpts := cache.Options{
		SyncPeriod:       &resync,
		NewInformer:      newInformer(resync),
		DefaultTransform: cache.TransformStripManagedFields(),
	}
	if len(o.Namespaces) > 0 {
		cacheOpts.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range o.Namespaces {
			cacheOpts.DefaultNamespaces[ns] = cache.Config{}
		}
	}
	electionID := p.Name
	byObject := map[reflect.Type]*cache.ByObject{}
	entry := func(obj client.Object) *cache.ByObject {
		t := reflect.TypeOf(obj)
		if byObject[t] == nil {
			byObject[t] = &cache.ByObject{}
		}
		return byObject[t]
	}
	if o.Shard != "" {
		// A shard caches its own Releases and their inventories, which the controller
		// labels with the Release's shard (an unlabelled one, from before, it reads
		// from the API server and labels: internal/controller cachedInventory).
		// Its ReleaseSets too: a set's Releases carry its shard (internal/releaseset).
		shard := labels.SelectorFromSet(labels.Set{v1.LabelShard: o.Shard})
		entry(&v1.Release{}).Label = shard
		entry(&v1.ReleaseInventory{}).Label = shard
		entry(&v1.ReleaseSet{}).Label = shard
		electionID += "-" + o.Shard
	}
	for obj, transform := range p.Transforms {
		entry(obj).Transform = stripThen(transform)
	}
	if len(byObject) > 0 {
		cacheOpts.ByObject = map[client.Object]cache.ByObject{}
		for t, b := range byObject {
			cacheOpts.ByObject[reflect.New(t.Elem()).Interface().(client.Object)] = *b
		}
	}
	mgr, err := manager.New(cfg, manager.Options{
		Scheme:                  scheme,
		Cache:                   cacheOpts,
		Metrics:                 metricsserver.Options{BindAddress: o.MetricsBindAddress},
		HealthProbeBindAddress:  o.HealthProbeBindAddress,
		PprofBindAddress:        o.PprofBindAddress,
		LeaderElection:          o.LeaderElection,
		LeaderElectionID:        electionID,
		LeaderElectionNamespace: o.LeaderElectionNamespace,
		Client:                  client.Options{Cache: &client.CacheOptions{DisableFor: p.Uncached}},
		MapperProvider:          mapperProviderOf(o.RESTMapper),
	})
	if err != nil {
		return nil, fmt.Errorf("create the manager: %w", err)
	}
	if o.HealthProbeBindAddress != "" && o.HealthProbeBindAddress != "0" {
		if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
			return nil, err
		}
		if err := mgr.AddReadyzCheck("ping", healthz.Ping); err != nil {
			return nil, err
		}
	}
	return mgr, nil
}

// stripThen strips an object's managed fields, then applies transform: an object's own
// transform replaces the cache's default one.
func stripThen(transform toolscache.TransformFunc) toolscache.TransformFunc {
	strip := cache.TransformStripManagedFields()
	return func(obj any) (any, error) {
		obj, err := strip(obj)
		if err != nil {
			return nil, err
		}
		return transform(obj)
	}
}
