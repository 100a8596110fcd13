package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/bench/internal/benchenv"
	"kumodo.io/convoy/internal/localcluster"
)

const (
	namespace = "bench-storage"
)

// phase is what the bench read of convoy's etcd at one moment.
type phase struct {
	name string
	etcd etcdFigures
}

// result is the figures of one N.
type result struct {
	n, namespaces  int
	manual         bool   // -manual: rendered, not applied
	chart          string // -chart
	createElapsed  time.Duration
	toReady        time.Duration // first create → every Release Ready
	upgradeElapsed time.Duration
	toUpgraded     time.Duration // first upgrade → every Release Ready on its new render
	phases         []phase
	loadStart      string
	loadEnd        string
}

func (cfg *config) runOne(ctx context.Context, bin string, n int) (_ *result, err error) {
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
	etcdFlags := []string{fmt.Sprintf("--quota-backend-bytes=%d", cfg.quota)}
	if mode, retention, ok := strings.Cut(cfg.autoCompaction, "/"); ok {
		etcdFlags = append(etcdFlags, "--auto-compaction-mode="+mode, "--auto-compaction-retention="+retention)
	}
	e, err := benchenv.Start(ctx, bin, benchenv.Options{
		Dir: dir, Workloads: true, Nodes: cfg.nodes,
		Charts:     filepath.Join(root, "bench", "storage", "testdata"),
		ConvoyEtcd: etcdFlags,
	})
	if err != nil {
		return nil, err
	}
	defer e.Stop()
	ec, err := newEtcdReader(e.ConvoyEtcdURL, "/convoy-bench")
	if err != nil {
		return nil, err
	}
	defer ec.close()

	// convoy controller and observer with their default flags, as the admin.
	kubeconfig := e.Cluster.KubeconfigPath()
	if _, err := e.StartComponent(ctx, "convoy-controller", bin, "controller", []string{
		"--kubeconfig=" + kubeconfig, "--chart-cache-dir=" + filepath.Join(e.Cluster.Dir(), "charts"),
	}); err != nil {
		return nil, err
	}
	if _, err := e.StartComponent(ctx, "convoy-observer", bin, "observer", []string{"--kubeconfig=" + kubeconfig}); err != nil {
		return nil, err
	}
	nss := cfg.namespaces(n)
	for _, ns := range nss {
		if err := e.EnsureNamespace(ctx, ns); err != nil {
			return nil, err
		}
	}
	chartName, chartVersion, ok := strings.Cut(cfg.chart, ":")
	if !ok {
		return nil, fmt.Errorf("-chart=%q: want name:version", cfg.chart)
	}
	if !json.Valid([]byte(cfg.upgradeValues)) {
		return nil, fmt.Errorf("-upgrade-values=%q is not JSON", cfg.upgradeValues)
	}
	upgrade := []byte(`{"spec":{"values":` + cfg.upgradeValues + `}}`)
	res := &result{n: n, namespaces: len(nss), manual: cfg.manual, chart: cfg.chart, loadStart: benchenv.LoadAvg()}
	defer func() { res.loadEnd = benchenv.LoadAvg() }()
	measure := func(name string, compact bool) error {
		fmt.Fprintf(os.Stderr, "Reading convoy's etcd (%s)...\n", name)
		if compact {
			if err := ec.compactAndDefrag(ctx); err != nil {
				return err
			}
		}
		f, err := ec.read(ctx)
		if err != nil {
			return err
		}
		res.phases = append(res.phases, phase{name, f})
		return nil
	}
	if err := measure("empty", false); err != nil {
		return res, err
	}

	fmt.Fprintf(os.Stderr, "Creating %d Releases from %d clients...\n", n, cfg.createConcurrency)
	start := time.Now()
	var failures atomic.Int64
	benchenv.ForEach(ctx, n, cfg.createConcurrency, func(i int) {
		rel := benchenv.PodinfoRelease(cfg.namespaceOf(i), releaseName(i), e.Charts.URL)
		rel.Spec.Chart.Name, rel.Spec.Chart.Version = chartName, chartVersion
		if cfg.manual {
			rel.Spec.SyncPolicy.Automatic = ptr.To(false)
		}
		retry(ctx, &failures, "create "+rel.Name, func(rctx context.Context) error {
			err := e.Convoy.Post().Namespace(rel.Namespace).Resource(convoyv1alpha1.ResourceReleases).Body(rel).Do(rctx).Error()
			if err != nil && strings.Contains(err.Error(), "already exists") {
				return nil
			}
			return err
		})
	})
	res.createElapsed = time.Since(start)
	if f := failures.Load(); f > 0 {
		fmt.Fprintf(os.Stderr, "  %d failed creates (retried)\n", f)
	}
	fmt.Fprintf(os.Stderr, "  created in %s\n", res.createElapsed.Round(time.Millisecond))
	first, err := waitReady(ctx, e, n, start, cfg.timeout, cfg.manual, nil)
	res.toReady = time.Since(start)
	if err != nil {
		return res, err
	}
	fmt.Fprintf(os.Stderr, "  all %d %s after %s\n", n, state(cfg.manual), res.toReady.Round(time.Second))
	if err := measure(state(cfg.manual), false); err != nil {
		return res, err
	}
	if err := measure(state(cfg.manual)+", compacted and defragmented", true); err != nil {
		return res, err
	}
	if !cfg.upgrade {
		return res, nil
	}

	fmt.Fprintf(os.Stderr, "Upgrading %d Releases (spec.values %s)...\n", n, cfg.upgradeValues)
	start = time.Now()
	benchenv.ForEach(ctx, n, cfg.createConcurrency, func(i int) {
		name := releaseName(i)
		retry(ctx, &failures, "upgrade "+name, func(rctx context.Context) error {
			return e.Convoy.Patch(types.MergePatchType).Namespace(cfg.namespaceOf(i)).Resource(convoyv1alpha1.ResourceReleases).Name(name).Body(upgrade).Do(rctx).Error()
		})
	})
	res.upgradeElapsed = time.Since(start)
	fmt.Fprintf(os.Stderr, "  upgraded in %s\n", res.upgradeElapsed.Round(time.Millisecond))
	if _, err := waitReady(ctx, e, n, start, cfg.timeout, cfg.manual, first); err != nil {
		res.toUpgraded = time.Since(start)
		return res, err
	}
	res.toUpgraded = time.Since(start)
	fmt.Fprintf(os.Stderr, "  all %d %s on their new render after %s\n", n, state(cfg.manual), res.toUpgraded.Round(time.Second))
	if err := measure("upgraded, "+state(cfg.manual), false); err != nil {
		return res, err
	}
	if err := measure("upgraded, compacted and defragmented", true); err != nil {
		return res, err
	}
	return res, nil
}

// retry calls do with a bounded context up to 5 times until it succeeds, counting
// the failures.
func retry(ctx context.Context, failures *atomic.Int64, what string, do func(context.Context) error) {
	for try := 0; try < 5 && ctx.Err() == nil; try++ {
		rctx, cancel := context.WithTimeout(ctx, time.Minute)
		err := do(rctx)
		cancel()
		if err == nil {
			return
		}
		failures.Add(1)
		fmt.Fprintf(os.Stderr, "%s: %v\n", what, err)
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

// waitReady lists the Releases every 5 s until n are Ready (manual: rendered) on a
// render that is not the one before holds for them (before nil: any render), or
// timeout passes. It returns each Release's render ref, by namespace/name.
func waitReady(ctx context.Context, e *benchenv.Env, n int, start time.Time, timeout time.Duration, manual bool, before map[string]string) (map[string]string, error) {
	deadline := time.Now().Add(timeout)
	for {
		var list convoyv1alpha1.ReleaseList
		lctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		err := e.Convoy.Get().Resource(convoyv1alpha1.ResourceReleases).Do(lctx).Into(&list)
		cancel()
		refs := map[string]string{}
		if err == nil {
			for i := range list.Items {
				r := &list.Items[i]
				key := r.Namespace + "/" + r.Name
				if (manual && renderedOn(r, before[key])) || (!manual && readyOn(r, before[key])) {
					refs[key] = r.Status.Render.Ref
				}
			}
		} else {
			fmt.Fprintf(os.Stderr, "  list releases: %v\n", err)
		}
		fmt.Fprintf(os.Stderr, "  %s: %d/%d %s\n", time.Since(start).Round(time.Second), len(refs), n, state(manual))
		if len(refs) >= n {
			return refs, nil
		}
		if time.Now().After(deadline) {
			return refs, fmt.Errorf("only %d of %d Releases %s within %s (logs: %s)", len(refs), n, state(manual), timeout, e.Cluster.LogDir())
		}
		select {
		case <-ctx.Done():
			return refs, ctx.Err()
		case <-time.After(5 * time.Second):
		}
	}
}

// readyOn reports whether r is Ready, has applied its current render and that render
// is not old.
func readyOn(r *convoyv1alpha1.Release, old string) bool {
	s := r.Status
	return meta.IsStatusConditionTrue(s.Conditions, convoyv1alpha1.ConditionReady) &&
		s.ObservedGeneration == r.Generation && s.Render != nil && s.LastSuccessful != nil &&
		s.LastSuccessful.RenderRef == s.Render.Ref && s.Render.Ref != old
}

// renderedOn reports whether r's current render is stored, for its generation, and
// is not old.
func renderedOn(r *convoyv1alpha1.Release, old string) bool {
	s := r.Status
	return s.ObservedGeneration == r.Generation && s.Render != nil && s.Render.Ref != old
}

// state is what waitReady waits for.
func state(manual bool) string {
	if manual {
		return "rendered"
	}
	return "Ready"
}

// namespaceOf is the namespace of the i-th Release of a run (benchenv.NamespaceOf).
func (cfg *config) namespaceOf(i int) string {
	return benchenv.NamespaceOf(namespace, cfg.perNamespace, i)
}

// namespaces are the namespaces of the n Releases of a run, in order.
func (cfg *config) namespaces(n int) []string {
	return benchenv.Namespaces(namespace, cfg.perNamespace, n)
}

// releaseName is the name of the i-th Release.
func releaseName(i int) string { return fmt.Sprintf("webapp-%05d", i) }
