package hostmanager

import (
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	toolscache "k8s.io/client-go/tools/cache"
)

// The informer resync (SP-27: "The informer resync occurs. The default period is 2
// minutes (flag --resync)") comes every Resync, the first one Resync after the
// informer's handler is added. controller-runtime makes each informer with a period
// jittered by ±10 % and gives its handlers that same period; client-go checks which
// handlers are due only once per that period, so a handler added after the informer's
// first check started (the usual case: a controller adds its handlers once the
// informer runs) missed the first check and had its first resync after about twice the
// period (3 min 40 s for 2 minutes: docs/notes/performance-log.md). Here the handlers get the
// period as asked, without jitter, and the informer checks every resyncCheck(period):
// the first resync comes between Resync and Resync + resyncCheck after the handler was
// added, and the next ones as often. A check that finds no handler due costs nothing.

// resyncCheck is how often an informer looks for handlers due to resync: a twentieth of
// the period, at least a second (client-go's minimum).
func resyncCheck(period time.Duration) time.Duration {
	return max(period/20, time.Second)
}

// newInformer returns controller-runtime's NewInformer for cache.Options: informers
// whose handlers resync every period (above); the jittered period controller-runtime
// passes is ignored.
func newInformer(period time.Duration) func(toolscache.ListerWatcher, runtime.Object, time.Duration, toolscache.Indexers) toolscache.SharedIndexInformer {
	return func(lw toolscache.ListerWatcher, obj runtime.Object, _ time.Duration, indexers toolscache.Indexers) toolscache.SharedIndexInformer {
		return exactResync{
			SharedIndexInformer: toolscache.NewSharedIndexInformer(lw, obj, resyncCheck(period), indexers),
			period:              period,
		}
	}
}

// exactResync is a shared informer whose handlers resync every period unless they ask
// for another period.
type exactResync struct {
	toolscache.SharedIndexInformer
	period time.Duration
}

func (i exactResync) AddEventHandler(h toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error) {
	return i.AddEventHandlerWithOptions(h, toolscache.HandlerOptions{})
}

func (i exactResync) AddEventHandlerWithOptions(h toolscache.ResourceEventHandler, o toolscache.HandlerOptions) (toolscache.ResourceEventHandlerRegistration, error) {
	if o.ResyncPeriod == nil {
		o.ResyncPeriod = &i.period
	}
	return i.SharedIndexInformer.AddEventHandlerWithOptions(h, o)
}
