package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"

	"kumodo.io/convoy/bench/internal/benchenv"
)

// env is benchenv's control plane, convoy apiserver and chart repository, with convoy
// controller and convoy observer beside them.
type env struct {
	*benchenv.Env
	obsMetricsURL string
}

// startObserver starts convoy observer from convoyBin beside the controller of be
// (which stops it).
func startObserver(ctx context.Context, cfg *config, be *benchenv.Env, convoyBin string) (*env, error) {
	e := &env{Env: be}
	// The observer's own identity, an admin: its least-privilege RBAC is tested elsewhere.
	kubeconfig, err := e.Cluster.UserKubeconfig("convoy-observer", "system:masters")
	if err != nil {
		return nil, err
	}
	if e.obsMetricsURL, err = e.StartComponent(ctx, "convoy-observer", convoyBin, "observer", []string{
		"--kubeconfig=" + kubeconfig,
		"--resync=" + cfg.Resync.String(),
		"--concurrency=" + strconv.Itoa(cfg.Concurrency),
	}); err != nil {
		return nil, err
	}
	return e, nil
}

// metricsSnap is every metrics text at one moment.
type metricsSnap struct {
	convoy, ctl, obs string
}

func (e *env) metricsNow(ctx context.Context) metricsSnap {
	return metricsSnap{
		convoy: e.ConvoyMetrics(ctx),
		ctl:    e.ControllerMetrics(ctx),
		obs:    benchenv.HTTPGet(ctx, http.DefaultClient, e.obsMetricsURL),
	}
}

// obsCounters are the observer's own counters in one metrics text.
type obsCounters struct {
	statusWrites, syncRequests, assessments float64
	triggers                                map[string]float64 // kind
	reconciles                              map[string]float64 // result
	requests                                map[string]float64 // method code, its client
}

func observerCounters(text string) obsCounters {
	return obsCounters{
		statusWrites: benchenv.Total(benchenv.Counts(text, "convoy_observer_status_writes_total")),
		syncRequests: benchenv.Total(benchenv.Counts(text, "convoy_observer_sync_requests_total")),
		assessments:  benchenv.Total(benchenv.Counts(text, "convoy_observer_assessment_duration_seconds_count")),
		triggers:     benchenv.Counts(text, "convoy_observer_sync_triggers_total", "kind"),
		reconciles:   filterController(benchenv.Counts(text, "controller_runtime_reconcile_total", "controller", "result"), "observer"),
		requests:     benchenv.Counts(text, "rest_client_requests_total", "method", "code"),
	}
}

func filterController(m map[string]float64, name string) map[string]float64 {
	out := map[string]float64{}
	for k, v := range m {
		if rest, ok := strings.CutPrefix(k, name+" "); ok {
			out[rest] = v
		}
	}
	return out
}

// sub is b − a of the observer's counters.
func (b obsCounters) sub(a obsCounters) obsCounters {
	return obsCounters{
		statusWrites: b.statusWrites - a.statusWrites,
		syncRequests: b.syncRequests - a.syncRequests,
		assessments:  b.assessments - a.assessments,
		triggers:     benchenv.Delta(a.triggers, b.triggers),
		reconciles:   benchenv.Delta(a.reconciles, b.reconciles),
		requests:     benchenv.Delta(a.requests, b.requests),
	}
}

// convoyRequests is convoy apiserver's apiserver_request_total between two texts
// (verb resource subresource code).
func convoyRequests(a, b string) map[string]float64 {
	kk := []string{"verb", "resource", "subresource", "code"}
	return benchenv.Delta(benchenv.Counts(a, "apiserver_request_total", kk...), benchenv.Counts(b, "apiserver_request_total", kk...))
}

func logf(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }
