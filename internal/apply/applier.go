package apply

import (
	"time"

	"github.com/fluxcd/cli-utils/pkg/kstatus/polling"
	"github.com/fluxcd/cli-utils/pkg/kstatus/polling/clusterreader"
	"github.com/fluxcd/cli-utils/pkg/kstatus/polling/engine"
	"github.com/fluxcd/pkg/ssa"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"kumodo.io/convoy/api/v1alpha1"
)

// Options tune an Applier. The zero value is usable.
type Options struct {
	// Concurrency bounds the requests in flight for one dry run, wave, prune
	// or deletion (default 4).
	Concurrency int
	// WaitTimeout bounds the wait for a wave's CRDs to be established and its
	// Namespaces to be active (default 1 minute).
	WaitTimeout time.Duration
	// WaitInterval is how often that wait polls (default 500 ms).
	WaitInterval time.Duration
}

func (o Options) withDefaults() Options {
	if o.Concurrency < 1 {
		o.Concurrency = 4
	}
	if o.WaitTimeout <= 0 {
		o.WaitTimeout = time.Minute
	}
	if o.WaitInterval <= 0 {
		o.WaitInterval = 500 * time.Millisecond
	}
	return o
}

// Applier applies renders to one target cluster. It holds no state between
// calls beyond its client, so one may be made per reconcile.
type Applier struct {
	client client.Client
	rm     *ssa.ResourceManager
	opts   Options
}

// New returns an Applier that talks to a target cluster through c. c needs a
// RESTMapper that discovers kinds as they appear (a dynamic RESTMapper), so
// that the custom resources of a CRD applied in the same wave can be applied.
func New(c client.Client, opts Options) *Applier {
	opts = opts.withDefaults()
	poller := polling.NewStatusPoller(c, c.RESTMapper(), polling.Options{
		// One GET per waited object, rather than a LIST of every object of its kind.
		ClusterReaderFactory: engine.ClusterReaderFactoryFunc(clusterreader.NewDirectClusterReader),
	})
	rm := ssa.NewResourceManager(c, poller, ssa.Owner{Field: v1alpha1.FieldManager, Group: v1alpha1.GroupName})
	rm.SetConcurrency(opts.Concurrency)
	return &Applier{client: c, rm: rm, opts: opts}
}
