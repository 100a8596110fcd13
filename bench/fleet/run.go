package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/bench/internal/benchenv"
	"kumodo.io/convoy/internal/dev"
	"kumodo.io/convoy/internal/localcluster"
	"kumodo.io/convoy/internal/testenv"
)

// Namespaces of the two runs, on the host and on every target.
const (
	nsSingle = "bench-single"
	nsFleet  = "bench-fleet"
)

// env is the host (benchenv), convoy's processes, the fleet and a Link per cluster.
type env struct {
	*benchenv.Env
	fleet  *localcluster.Clusters
	links  []*testenv.Link
	ctlURL string // convoy controller's /metrics
	obsURL string // convoy observer's /metrics
}

// reading is the controller's and the observer's cost at one moment.
type reading struct {
	ctl, obs             benchenv.ProcStat
	ctlGor, obsGor       float64
	ctlMetric, obsMetric string
}

func (e *env) read(ctx context.Context) reading {
	r := reading{ctl: benchenv.ReadProc(e.PID("convoy-controller")), obs: benchenv.ReadProc(e.PID("convoy-observer"))}
	r.ctlMetric = benchenv.HTTPGet(ctx, http.DefaultClient, e.ctlURL)
	r.obsMetric = benchenv.HTTPGet(ctx, http.DefaultClient, e.obsURL)
	r.ctlGor = benchenv.Total(benchenv.Counts(r.ctlMetric, "go_goroutines"))
	r.obsGor = benchenv.Total(benchenv.Counts(r.obsMetric, "go_goroutines"))
	return r
}

func (cfg config) run(ctx context.Context) error {
	bin, cleanup, err := benchenv.ConvoyBinary(ctx, cfg.convoyBin, "fleet")
	if err != nil {
		return err
	}
	defer cleanup()
	root, err := localcluster.RepoRoot()
	if err != nil {
		return err
	}
	hostDir, fleetDir := "", ""
	if cfg.stateDir != "" {
		hostDir, fleetDir = filepath.Join(cfg.stateDir, "host"), filepath.Join(cfg.stateDir, "fleet")
	}
	be, err := benchenv.Start(ctx, bin, benchenv.Options{Dir: hostDir, Charts: filepath.Join(root, "bench", "fleet", "testdata")})
	if err != nil {
		return err
	}
	defer be.Stop()
	e := &env{Env: be}
	c := be.Cluster
	if e.ctlURL, err = be.StartComponent(ctx, "convoy-controller", bin, "controller", []string{
		"--kubeconfig=" + c.KubeconfigPath(), "--chart-cache-dir=" + filepath.Join(c.Dir(), "charts"),
	}); err != nil {
		return err
	}
	if e.obsURL, err = be.StartComponent(ctx, "convoy-observer", bin, "observer", []string{"--kubeconfig=" + c.KubeconfigPath()}); err != nil {
		return err
	}

	fmt.Fprintf(os.Stderr, "Starting a fleet of %d target clusters...\n", cfg.clusters)
	started := time.Now()
	e.fleet, err = localcluster.StartClusters(ctx, localcluster.ClustersOptions{
		Clusters: cfg.clusters, Etcd: c.EtcdURL(), Dir: fleetDir, Workloads: true, Nodes: 1, Progress: os.Stderr,
	})
	if err != nil {
		return err
	}
	defer func() { _ = e.fleet.Stop() }()
	fleetStart := time.Since(started)

	time.Sleep(cfg.settle) // an idle window, not a synchronisation
	noCluster := e.read(ctx)
	if err := e.register(ctx); err != nil {
		return err
	}
	res := &result{cfg: cfg, fleetStart: fleetStart, noCluster: noCluster, load: []string{benchenv.LoadAvg()}}
	// Warm up: the chart in the controller's cache and the connection to cluster 1,
	// so that the single run pays neither and the comparison is of the spread alone.
	if err := e.ensureNamespace(ctx, "bench-warmup"); err != nil {
		return err
	}
	if _, err := e.createAndWait(ctx, "bench-warmup", 1, func(int) int { return 0 }, cfg.timeout); err != nil {
		return fmt.Errorf("warm-up: %w", err)
	}

	// 1. single: every Release on cluster 1.
	if err := e.ensureNamespace(ctx, nsSingle); err != nil {
		return err
	}
	before := e.read(ctx)
	if res.single, err = e.createAndWait(ctx, nsSingle, cfg.releases, func(int) int { return 0 }, cfg.timeout); err != nil {
		return fmt.Errorf("single cluster: %w", err)
	}
	time.Sleep(cfg.settle)
	res.oneCluster = e.read(ctx)
	res.singleReq = requestsByHost(before, res.oneCluster)
	res.load = append(res.load, benchenv.LoadAvg())
	if err := e.deleteAll(ctx, nsSingle, cfg.timeout); err != nil {
		return err
	}

	// 2. fleet: the Releases spread over every cluster.
	if err := e.ensureNamespace(ctx, nsFleet); err != nil {
		return err
	}
	before = e.read(ctx)
	acceptedBefore := e.accepted()
	spread := func(i int) int { return i % cfg.clusters }
	if res.fleet, err = e.createAndWait(ctx, nsFleet, cfg.releases, spread, cfg.timeout); err != nil {
		return fmt.Errorf("fleet: %w", err)
	}
	time.Sleep(cfg.settle)
	res.allClusters = e.read(ctx)
	res.fleetReq = requestsByHost(before, res.allClusters)
	res.load = append(res.load, benchenv.LoadAvg())

	// 3. revision: new values for every fleet Release, cluster 1 (the canary) first,
	// then the rest once the canary's are Ready.
	canary := func(i int) bool { return spread(i) == 0 }
	if res.revision, err = e.reviseAndWait(ctx, nsFleet, cfg.releases, canary, cfg.timeout); err != nil {
		return fmt.Errorf("revision: %w", err)
	}
	res.connections = e.accepted()
	for i := range res.connections {
		res.connections[i] -= acceptedBefore[i]
	}
	res.open = e.open()
	res.load = append(res.load, benchenv.LoadAvg())

	// 4. ReleaseSets: releases/clusters sets, each a Release per cluster, canary first.
	if cfg.sets {
		res.setCount = max(cfg.releases/cfg.clusters, 1)
		if res.setsCreate, res.setsRevise, err = e.setsRun(ctx, res.setCount, cfg.timeout); err != nil {
			res.print(os.Stdout, e)
			return fmt.Errorf("ReleaseSets: %w", err)
		}
	}
	res.print(os.Stdout, e)
	return nil
}

// register registers each cluster of the fleet through a Link of its own and waits
// until the controller finds every Cluster Ready.
func (e *env) register(ctx context.Context) error {
	for i, cl := range e.fleet.Clusters {
		link, err := testenv.LinkTo(cl)
		if err != nil {
			return err
		}
		e.links = append(e.links, link)
		kubeconfig, err := testenv.Kubeconfig(cl, link.URL())
		if err != nil {
			return err
		}
		if err := dev.RegisterCluster(ctx, e.Admin, e.fleet.Name(i), clusterLabels(i), kubeconfig); err != nil {
			return err
		}
	}
	for i := range e.fleet.Clusters {
		if err := dev.WaitClusterReady(ctx, e.Admin, e.fleet.Name(i), 3*time.Minute); err != nil {
			return err
		}
	}
	return nil
}

// ensureNamespace creates ns on the host and on every target.
func (e *env) ensureNamespace(ctx context.Context, ns string) error {
	if err := e.EnsureNamespace(ctx, ns); err != nil {
		return err
	}
	for i, cl := range e.fleet.Clusters {
		kube, err := kubernetes.NewForConfig(cl.RestConfig())
		if err != nil {
			return err
		}
		_, err = kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create namespace %s on %s: %w", ns, e.fleet.Name(i), err)
		}
	}
	return nil
}

func releaseName(i int) string { return "podinfo-" + strconv.Itoa(i) }

// createAndWait creates n Releases in ns, the i-th on cluster clusterOf(i), and
// returns the time from the first create until every one is Ready.
func (e *env) createAndWait(ctx context.Context, ns string, n int, clusterOf func(int) int, timeout time.Duration) (time.Duration, error) {
	start := time.Now()
	for i := range n {
		rel := benchenv.PodinfoRelease(ns, releaseName(i), e.Charts.URL)
		rel.Spec.Cluster = e.fleet.Name(clusterOf(i))
		if err := e.Convoy.Post().Namespace(ns).Resource("releases").Body(rel).Do(ctx).Error(); err != nil {
			return 0, fmt.Errorf("create Release %s: %w", rel.Name, err)
		}
	}
	err := e.waitReady(ctx, ns, n, nil, start, timeout)
	return time.Since(start), err
}

// reviseAndWait gives every Release of ns new values, those of first before the
// others, which it changes once the first are Ready; it returns the time from the
// first change until every Release is Ready.
func (e *env) reviseAndWait(ctx context.Context, ns string, n int, first func(int) bool, timeout time.Duration) (time.Duration, error) {
	start := time.Now()
	patch := []byte(`{"spec":{"values":{"ui":{"message":"revision 2"}}}}`)
	revise := func(stage bool) error {
		for i := range n {
			if first(i) != stage {
				continue
			}
			if err := e.Convoy.Patch(types.MergePatchType).Namespace(ns).Resource("releases").Name(releaseName(i)).Body(patch).Do(ctx).Error(); err != nil {
				return fmt.Errorf("revise Release %s: %w", releaseName(i), err)
			}
		}
		return nil
	}
	if err := revise(true); err != nil {
		return 0, err
	}
	if err := e.waitReady(ctx, ns, n, first, start, timeout); err != nil {
		return 0, err
	}
	if err := revise(false); err != nil {
		return 0, err
	}
	err := e.waitReady(ctx, ns, n, nil, start, timeout)
	return time.Since(start), err
}

// waitReady polls until every Release of ns (only those of only, when set) is Ready at
// its generation.
func (e *env) waitReady(ctx context.Context, ns string, n int, only func(int) bool, start time.Time, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		list := &convoyv1alpha1.ReleaseList{}
		err := e.Convoy.Get().Namespace(ns).Resource("releases").Do(ctx).Into(list)
		ready, want := 0, 0
		if err == nil {
			for i := range n {
				if only == nil || only(i) {
					want++
				}
			}
			for _, rel := range list.Items {
				i, _ := strconv.Atoi(rel.Name[len("podinfo-"):])
				if only != nil && !only(i) {
					continue
				}
				c := apimeta.FindStatusCondition(rel.Status.Conditions, convoyv1alpha1.ConditionReady)
				if c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == rel.Generation && rel.Status.ObservedGeneration == rel.Generation {
					ready++
				}
			}
			if ready == want {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d Releases in %s Ready after %s (last error: %v)", ready, want, ns, time.Since(start).Round(time.Second), err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// deleteAll deletes the Releases of ns and waits until they are gone.
func (e *env) deleteAll(ctx context.Context, ns string, timeout time.Duration) error {
	if err := e.Convoy.Delete().Namespace(ns).Resource("releases").Do(ctx).Error(); err != nil {
		return fmt.Errorf("delete the Releases of %s: %w", ns, err)
	}
	deadline := time.Now().Add(timeout)
	for {
		list := &convoyv1alpha1.ReleaseList{}
		if err := e.Convoy.Get().Namespace(ns).Resource("releases").Do(ctx).Into(list); err == nil && len(list.Items) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the Releases of %s are not gone after %s", ns, timeout)
		}
		time.Sleep(500 * time.Millisecond) // polling with a deadline
	}
}

func (e *env) accepted() []int {
	out := make([]int, len(e.links))
	for i, l := range e.links {
		out[i] = l.Accepted()
	}
	return out
}

func (e *env) open() []int {
	out := make([]int, len(e.links))
	for i, l := range e.links {
		out[i] = l.Open()
	}
	return out
}

// requestsByHost is the controller's and the observer's requests between a and b by
// host (each target's Link address; the host cluster's own address).
func requestsByHost(a, b reading) map[string][2]float64 {
	ctl := benchenv.Delta(benchenv.Counts(a.ctlMetric, "rest_client_requests_total", "host"), benchenv.Counts(b.ctlMetric, "rest_client_requests_total", "host"))
	obs := benchenv.Delta(benchenv.Counts(a.obsMetric, "rest_client_requests_total", "host"), benchenv.Counts(b.obsMetric, "rest_client_requests_total", "host"))
	out := map[string][2]float64{}
	for h, v := range ctl {
		x := out[h]
		x[0] = v
		out[h] = x
	}
	for h, v := range obs {
		x := out[h]
		x[1] = v
		out[h] = x
	}
	return out
}
