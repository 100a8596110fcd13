package notify

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// Results of convoy_alert_deliveries_total.
const (
	// resultDelivered: the provider answered 2xx.
	resultDelivered = "delivered"
	// resultFailed: one attempt failed (no answer, not 2xx, no Secret); it is retried.
	resultFailed = "failed"
	// resultDropped: a notification given up: its attempts are spent, or the queue was full.
	resultDropped = "dropped"
)

// metrics are the notifier's Prometheus metrics.
type metrics struct {
	deliveries *prometheus.CounterVec
	pending    prometheus.Gauge
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "convoy_alert_deliveries_total",
			Help: "Notifications of Alerts posted, by provider type and result: delivered (2xx), failed (one attempt; retried with backoff), dropped (given up after its attempts, or not queued because the queue was full).",
		}, []string{"provider", "result"}),
		pending: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "convoy_alert_notifications_pending",
			Help: "Notifications of Alerts waiting for delivery (bounded by the notifier's queue bound).",
		}),
	}
	if reg != nil {
		m.deliveries = register(reg, m.deliveries)
		m.pending = register(reg, m.pending)
	}
	return m
}

func (m *metrics) delivery(p v1.AlertProviderType, result string) {
	m.deliveries.WithLabelValues(string(p), result).Inc()
}

// register registers c, or returns the collector registered before it under the same
// name (a second notifier in the same process, as in tests).
func register[T prometheus.Collector](reg prometheus.Registerer, c T) T {
	err := reg.Register(c)
	if are, ok := errors.AsType[prometheus.AlreadyRegisteredError](err); ok {
		if existing, ok := are.ExistingCollector.(T); ok {
			return existing
		}
	}
	return c
}
