package controller

import (
	"sync"
	"time"

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Bounds of the work queue's per-Release retry delay when a Release has no
// retryBackoff.initial (docs/sync-policy.md, "Requeue and retries": 5 ms doubling to 1000 s).
const (
	retryBaseDelay = 5 * time.Millisecond
	retryMaxDelay  = 1000 * time.Second
)

// retryLimiter is the work queue's per-Release rate limiter: 5 ms doubling to 1000 s,
// counted per Release, as controller-runtime's default. Its count is reset only by a
// success or a hold: controller-runtime forgets a Release after every reconcile that
// returns no error, which includes a non-transient failure (Unsupported, HookFailed…),
// and the seed keeps the count then (decision 0092). The reconcile of such a
// failure marks the Release with keep, and the Forget that follows is skipped.
type retryLimiter struct {
	workqueue.TypedRateLimiter[reconcile.Request]
	mu   sync.Mutex
	kept map[reconcile.Request]bool
}

func newRetryLimiter() *retryLimiter {
	return &retryLimiter{
		TypedRateLimiter: workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](retryBaseDelay, retryMaxDelay),
		kept:             map[reconcile.Request]bool{},
	}
}

// keep makes the next Forget of req a no-op: the reconcile that ends now leaves the
// count of consecutive failures as it is.
func (l *retryLimiter) keep(req reconcile.Request) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.kept[req] = true
}

// Forget resets the count of req, unless the reconcile that just ended asked to keep it.
func (l *retryLimiter) Forget(req reconcile.Request) {
	l.mu.Lock()
	kept := l.kept[req]
	delete(l.kept, req)
	l.mu.Unlock()
	if !kept {
		l.TypedRateLimiter.Forget(req)
	}
}
