package main

import (
	"context"
	"fmt"
	"os"

	"kumodo.io/convoy/bench/internal/benchenv"
)

// env is one running control plane (with kwok nodes), convoy apiserver, convoy
// controller and the chart repository (benchenv).
type env struct {
	*benchenv.Env
}

func (e *env) metricsNow(ctx context.Context) metricsSnap {
	k, err := e.KubeMetrics(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "kube-apiserver /metrics:", err)
	}
	return metricsSnap{kube: k, convoy: e.ConvoyMetrics(ctx), ctl: e.ControllerMetrics(ctx)}
}
