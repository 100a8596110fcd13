package releaseset

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the ReleaseSet controller's Prometheus metrics.
type metrics struct {
	// writes counts the Releases the controller wrote, by action (created, updated, deleted).
	writes *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{writes: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "convoy_releaseset_release_writes_total",
		Help: "Releases written by the ReleaseSet controller, by action (created, updated, deleted). Flat in steady state.",
	}, []string{"action"})}
	if err := reg.Register(m.writes); err != nil {
		// A second controller in the same process (tests) shares the first one's.
		if are, ok := errors.AsType[prometheus.AlreadyRegisteredError](err); ok {
			if existing, ok := are.ExistingCollector.(*prometheus.CounterVec); ok {
				m.writes = existing
			}
		}
	}
	return m
}

func (m *metrics) wrote(action string) { m.writes.WithLabelValues(action).Inc() }
