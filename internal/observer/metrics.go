package observer

import (
	"github.com/prometheus/client_golang/prometheus"

	"kumodo.io/convoy/internal/observer/health"
)

// metrics are the observer's Prometheus metrics.
type metrics struct {
	// statusWrites counts ReleaseInventory status writes; a steady cluster adds none.
	statusWrites prometheus.Counter
	// syncRequests counts the POST …/sync requests the API server accepted; one
	// covers every trigger of one render due at once.
	syncRequests prometheus.Counter
	// syncTriggers counts the occurrences signalled by an accepted /sync, by kind
	// (SyncWave, NewRender, HookBatch).
	syncTriggers *prometheus.CounterVec
	// syncRefused counts the occurrences whose /sync the API server refused (409
	// Conflict: the render they concern is no longer the Release's), by kind; such a
	// signal is dropped, not sent again.
	syncRefused *prometheus.CounterVec
	// driftChecks counts the drift checks that completed.
	driftChecks prometheus.Counter
	// assessment is the time one assessment takes, from the target lookup to the write.
	assessment prometheus.Histogram
}

func newMetrics(reg prometheus.Registerer, watchedKinds func() float64) (*metrics, error) {
	m := &metrics{
		statusWrites: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "convoy_observer_status_writes_total",
			Help: "ReleaseInventory status writes (each reconciles the Release; a steady cluster causes none).",
		}),
		syncRequests: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "convoy_observer_sync_requests_total",
			Help: "POST releases/<name>/sync requests the observer sent and the API server accepted.",
		}),
		syncTriggers: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "convoy_observer_sync_triggers_total",
			Help: "Occurrences signalled by a /sync, by kind: SyncWave, NewRender, HookBatch.",
		}, []string{"kind"}),
		syncRefused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "convoy_observer_sync_refused_total",
			Help: "Occurrences whose /sync the API server refused because the render they concern is no longer the Release's (dropped, not retried), by kind.",
		}, []string{"kind"}),
		driftChecks: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "convoy_observer_drift_checks_total",
			Help: "Drift checks completed.",
		}),
		assessment: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "convoy_observer_assessment_duration_seconds",
			Help:    "Time to assess one ReleaseInventory, including its /sync and status write.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 4, 10),
		}),
	}
	kinds := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "convoy_observer_watched_kinds",
		Help: "Shared informers running on target clusters, one per (cluster, kind).",
	}, watchedKinds)
	for _, c := range []prometheus.Collector{m.statusWrites, m.syncRequests, m.syncTriggers, m.syncRefused, m.driftChecks, m.assessment, kinds} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func (m *metrics) syncSent(ts []health.Trigger) {
	m.syncRequests.Inc()
	for _, t := range ts {
		m.syncTriggers.WithLabelValues(string(t.Kind)).Inc()
	}
}

func (m *metrics) syncRefusedFor(ts []health.Trigger) {
	for _, t := range ts {
		m.syncRefused.WithLabelValues(string(t.Kind)).Inc()
	}
}
