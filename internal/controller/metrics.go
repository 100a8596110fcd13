package controller

import (
	"errors"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"kumodo.io/convoy/internal/policy"
)

// metrics are the controller's Prometheus metrics, registered with
// controller-runtime's registry (served on --metrics-bind-address).
type metrics struct {
	duration *prometheus.HistogramVec
	objects  *prometheus.CounterVec
	pending  prometheus.Gauge
	ready    *prometheus.GaugeVec
	// overdue and overdueOldest report the waits on the observer's assessment that
	// are overdue (policy.Overdue).
	overdue       prometheus.Gauge
	overdueOldest prometheus.Gauge
	// verifications counts the verifications of charts by provider and result.
	verifications *prometheus.CounterVec

	mu         sync.Mutex
	pendingSet map[policy.Key]bool
	// readyReason is the reason label of each Release's convoy_release_ready series,
	// so that a new reason replaces the series rather than adding one.
	readyReason map[policy.Key]string
	// overdueSince is the start of each overdue wait on the observer's assessment.
	overdueSince map[policy.Key]time.Time
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
		ready: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "convoy_release_ready",
			Help: "1 when the Release's Ready condition is True, else 0; reason is the Ready condition's reason. One series per Release this controller (shard) reconciles.",
		}, []string{"namespace", "name", "reason"}),
		overdue: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "convoy_release_assessment_overdue",
			Help: "Releases whose wait on the observer's assessment of their ReleaseInventory (a sync wave, the health of a new render) has lasted longer than the bound: a dead or stuck observer.",
		}),
		overdueOldest: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "convoy_release_assessment_overdue_oldest_timestamp_seconds",
			Help: "Unix time at which the oldest of the overdue waits on the observer's assessment began; 0 when none is overdue.",
		}),
		verifications: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "convoy_chart_verifications_total",
			Help: "Verifications of charts (spec.chart.verify), by provider and result: verified, cached (a chart verified before, with the same trust and policy) or the kind of failure (NoSignature, WrongKey, WrongIdentity, DigestMismatch, Misconfigured).",
		}, []string{"provider", "result"}),
		pendingSet:   map[policy.Key]bool{},
		readyReason:  map[policy.Key]string{},
		overdueSince: map[policy.Key]time.Time{},
	}
	if reg != nil {
		m.duration = register(reg, m.duration)
		m.objects = register(reg, m.objects)
		m.pending = register(reg, m.pending)
		m.ready = register(reg, m.ready)
		m.overdue = register(reg, m.overdue)
		m.overdueOldest = register(reg, m.overdueOldest)
		m.verifications = register(reg, m.verifications)
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
func (m *metrics) observe(key policy.Key, plan policy.Plan, out policy.Outcome, changes changeCounts, took time.Duration) {
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
	m.setReady(key, out.Ready)
	if out.Overdue != nil {
		m.overdueSince[key] = out.Overdue.Since
	} else {
		delete(m.overdueSince, key)
	}
	m.setOverdue()
}

// setOverdue sets the overdue gauges from overdueSince. m.mu is held.
func (m *metrics) setOverdue() {
	var oldest time.Time
	for _, since := range m.overdueSince {
		if oldest.IsZero() || since.Before(oldest) {
			oldest = since
		}
	}
	m.overdue.Set(float64(len(m.overdueSince)))
	if oldest.IsZero() {
		m.overdueOldest.Set(0)
		return
	}
	m.overdueOldest.Set(float64(oldest.Unix()))
}

// setReady sets the convoy_release_ready series of key from its Ready condition.
// m.mu is held.
func (m *metrics) setReady(key policy.Key, ready policy.Condition) {
	if old, ok := m.readyReason[key]; ok && old != ready.Reason {
		m.ready.DeleteLabelValues(key.Namespace, key.Name, old)
	}
	m.readyReason[key] = ready.Reason
	value := 0.0
	if ready.Status == policy.StatusTrue {
		value = 1
	}
	m.ready.WithLabelValues(key.Namespace, key.Name, ready.Reason).Set(value)
}

// forget drops a Release that is gone.
func (m *metrics) forget(key policy.Key) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.pendingSet, key)
	m.pending.Set(float64(len(m.pendingSet)))
	if reason, ok := m.readyReason[key]; ok {
		m.ready.DeleteLabelValues(key.Namespace, key.Name, reason)
		delete(m.readyReason, key)
	}
	delete(m.overdueSince, key)
	m.setOverdue()
}

// verification counts one verification of a chart.
func (m *metrics) verification(provider, result string) {
	if m == nil {
		return
	}
	m.verifications.WithLabelValues(provider, result).Inc()
}
