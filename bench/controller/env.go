package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"

	"kumodo.io/convoy/bench/internal/benchenv"
	"kumodo.io/convoy/internal/localcluster"
)

// env is one running control plane (with kwok nodes), convoy apiserver, convoy
// controller and the chart repository (benchenv).
type env struct {
	*benchenv.Env
	// convoy controller's /metrics (plain HTTP on loopback).
	ctlMetricsURL string
}

func startEnv(ctx context.Context, cfg config, convoyBin string, n int) (_ *env, err error) {
	dir := ""
	if cfg.stateDir != "" {
		if dir, err = filepath.Abs(filepath.Join(cfg.stateDir, strconv.Itoa(n))); err != nil {
			return nil, err
		}
	}
	root, err := localcluster.RepoRoot()
	if err != nil {
		return nil, err
	}
	be, err := benchenv.Start(ctx, convoyBin, benchenv.Options{Dir: dir, Nodes: cfg.nodes, Charts: filepath.Join(root, "bench", "controller", "testdata")})
	if err != nil {
		return nil, err
	}
	e := &env{Env: be}
	defer func() {
		if err != nil {
			e.Stop()
		}
	}()
	// convoy controller, with the admin kubeconfig.
	c := e.Cluster
	if e.ctlMetricsURL, err = e.StartComponent(ctx, "convoy-controller", convoyBin, "controller", []string{
		"--kubeconfig=" + c.KubeconfigPath(),
		"--chart-cache-dir=" + filepath.Join(c.Dir(), "charts"),
		"--resync=" + cfg.resync.String(),
		"--concurrency=" + strconv.Itoa(cfg.concurrency),
	}); err != nil {
		return nil, err
	}
	return e, nil
}

// controllerMetrics is convoy controller's /metrics; "" when it does not answer.
func (e *env) controllerMetrics(ctx context.Context) string {
	return benchenv.HTTPGet(ctx, http.DefaultClient, e.ctlMetricsURL)
}

func (e *env) metricsNow(ctx context.Context) metricsSnap {
	k, err := e.KubeMetrics(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "kube-apiserver /metrics:", err)
	}
	return metricsSnap{kube: k, convoy: e.ConvoyMetrics(ctx), ctl: e.controllerMetrics(ctx)}
}
