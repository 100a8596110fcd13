package controller

import (
	"errors"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"kumodo.io/convoy/internal/release"
)

// metrics are the controller's Prometheus metrics, registered with
// controller-runtime's registry (served on --metrics-bind-address).
type metrics struct {
	duration *prometheus.HistogramVec
	objects  *prometheus.CounterVec
	pending  prometheus.Gauge

	mu         sync.Mutex
	pendingSet map[release.Key]bool
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "convoy_release_reconcile_duration_seconds",
			Help:    "Duration of Release reconciles, by outcome (the reason of the Applied condition).",
			Buckets: prometheus.ExponentialBuckets(0.005, 2, 14),
		}, []string{"reason"}),
		objects: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "convoy_release_objects_total",
			Help: "Objects changed on target clusters, by action (created, configured, pruned).",
		}, []string{"action"}),
		pending: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "convoy_release_sync_pending",
			Help: "Releases in manual mode with a /sync request that is not handled yet.",
		}),
		pendingSet: map[release.Key]bool{},
	}
	if reg != nil {
		m.duration = register(reg, m.duration)
		m.objects = register(reg, m.objects)
		m.pending = register(reg, m.pending)
	}
	return m
}

// register registers c, or returns the collector registered before it under the same
// name (a second controller in the same process, as in tests).
func register[T prometheus.Collector](reg prometheus.Registerer, c T) T {
	err := reg.Register(c)
	if are, ok := errors.AsType[prometheus.AlreadyRegisteredError](err); ok {
		if existing, ok := are.ExistingCollector.(T); ok {
			return existing
		}
	}
	return c
}

// observe records one reconcile.
func (m *metrics) observe(key release.Key, plan release.Plan, out release.Outcome, changes changeCounts, took time.Duration) {
	if m == nil {
		return
	}
	m.duration.WithLabelValues(out.Result.Reason).Observe(took.Seconds())
	m.objects.WithLabelValues("created").Add(float64(changes.created))
	m.objects.WithLabelValues("configured").Add(float64(changes.configured))
	m.objects.WithLabelValues("pruned").Add(float64(changes.pruned))
	pending := plan.Sync.Pending && out.Status.LastHandledSyncAt == nil
	m.mu.Lock()
	defer m.mu.Unlock()
	if pending {
		m.pendingSet[key] = true
	} else {
		delete(m.pendingSet, key)
	}
	m.pending.Set(float64(len(m.pendingSet)))
}

// forget drops a Release that is gone.
func (m *metrics) forget(key release.Key) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.pendingSet, key)
	m.pending.Set(float64(len(m.pendingSet)))
}
