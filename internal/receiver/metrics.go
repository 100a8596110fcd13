package receiver

import "github.com/prometheus/client_golang/prometheus"

// metrics of the receiver server.
type metrics struct {
	calls *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{calls: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "convoy_receiver_calls_total",
		Help: "Calls of the receiver server, by receiver type (empty when no Receiver has the path) and result: " +
			"accepted, ping, unauthorized, bad_event, not_found, rate_limited, too_large, method_not_allowed, error.",
	}, []string{"type", "result"})}
	reg.MustRegister(m.calls)
	return m
}
