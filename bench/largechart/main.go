// Command largechart measures one large chart end to end: the corpus
// chart large-umbrella (test/corpus/charts) with its ci/large-values.yaml — about 150
// objects, four vendored subcharts (one with its own dependency), CRDs of 1.1 MB and
// 0.5 MB in a subchart's crds/, a StatefulSet with volumeClaimTemplates and a
// DaemonSet — as one Release in automatic mode, with convoy controller and convoy
// observer as separate processes on a local control plane with simulated nodes. It
// reports:
//
//   - create → Ready (Applied and Healthy) of the install, and values change →
//     Ready of an upgrade that rolls every workload out;
//   - a steady window after the upgrade (default 70 s, two controller and observer
//     resyncs at -resync=30s): the writes that store something on kube-apiserver (its
//     apiserver_request_total, less server-side dry runs and the control plane's
//     heartbeats) and on convoy apiserver, the observer's status writes, and whether
//     the Release and its ReleaseInventory were written (goal 0 for all); and the
//     controller's dry runs (its client's writes: a resync dry-runs the render);
//   - Release deleted → gone (everything it applied deleted);
//   - the peak RSS (VmHWM) and CPU seconds of convoy controller, convoy observer and
//     convoy apiserver over the whole run, from /proc.
//
// The environment is bench/observer's: bench/internal/benchenv with workloads,
// convoy apiserver, convoy controller with the admin kubeconfig and convoy observer
// as an admin (their least-privilege RBAC is tested elsewhere), from ./cmd/convoy
// built as the image builds it (or -convoy=<binary>). Every wait is bounded by
// -timeout; everything stops by itself.
//
//	go run ./bench/largechart
//	make bench-largechart BENCH_FLAGS='-steady=30s'
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/bench/internal/benchenv"
	"kumodo.io/convoy/test/corpus"
)

const (
	chart     = "large-umbrella"
	namespace = "largechart"
	name      = "umbrella"
)

type config struct {
	timeout   time.Duration
	steady    time.Duration
	resync    time.Duration
	nodes     int
	values    string
	convoyBin string
	stateDir  string
}

func main() {
	var cfg config
	flag.DurationVar(&cfg.timeout, "timeout", 10*time.Minute, "upper bound of each wait: install, upgrade and deletion")
	flag.DurationVar(&cfg.steady, "steady", 70*time.Second, "the steady window after the upgrade, in which writes are counted")
	flag.DurationVar(&cfg.resync, "resync", 30*time.Second, "convoy controller --resync and convoy observer --resync (the steady window should hold two)")
	flag.IntVar(&cfg.nodes, "nodes", 2, "simulated nodes (the DaemonSet runs a pod on each)")
	flag.StringVar(&cfg.values, "values", filepath.Join(corpus.Dir(chart), "ci", "large-values.yaml"), "values file of the Release")
	flag.StringVar(&cfg.convoyBin, "convoy", "", "use this convoy binary instead of building ./cmd/convoy")
	flag.StringVar(&cfg.stateDir, "state-dir", "", "keep the control plane's state and logs in this folder (default: a temporary folder, removed)")
	flag.Parse()
	benchenv.Exit("largechart", 3*cfg.timeout+cfg.steady+15*time.Minute, cfg.run)
}

// result is what one run measured.
type result struct {
	objects                  int
	install, upgrade, delete time.Duration
	steadyKube               map[string]float64 // kube-apiserver writes that store: verb dry_run group resource subresource code
	steadyConvoy             float64            // convoy apiserver writes
	steadyClients            map[string]float64 // client (controller, observer) → write requests, dry runs included
	observerStatusWrites     float64
	releaseWritten           bool
	inventoryWritten         bool
	procs                    map[string]benchenv.ProcStat
	loadBefore, loadAfter    string
}

func (cfg config) run(ctx context.Context) error {
	bin, cleanup, err := benchenv.ConvoyBinary(ctx, cfg.convoyBin, "largechart")
	if err != nil {
		return err
	}
	defer cleanup()
	install, err := os.ReadFile(cfg.values)
	if err != nil {
		return err
	}
	if install, err = yaml.YAMLToJSON(install); err != nil {
		return fmt.Errorf("%s: %w", cfg.values, err)
	}
	upgrade, err := withPodAnnotation(install, "bench.convoy.kumodo.io/revision", "2")
	if err != nil {
		return err
	}

	r := &result{loadBefore: benchenv.LoadAvg()}
	e, err := benchenv.Start(ctx, bin, benchenv.Options{Dir: cfg.stateDir, Workloads: true, Nodes: cfg.nodes, Charts: filepath.Dir(corpus.Dir(chart))})
	if err != nil {
		return err
	}
	defer e.Stop()
	if err := e.StartController(ctx, bin, cfg.resync, 4); err != nil {
		return err
	}
	obsMetrics, err := startObserver(ctx, e, bin, cfg.resync)
	if err != nil {
		return err
	}
	if err := e.EnsureNamespace(ctx, namespace); err != nil {
		return err
	}
	c, err := client.New(e.Admin, client.Options{Scheme: benchenv.Scheme})
	if err != nil {
		return err
	}

	fmt.Fprintln(os.Stderr, "Installing", chart, "...")
	rel := &v1.Release{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: v1.ReleaseSpec{
			Chart:      v1.ChartSource{Repository: e.Charts.URL, Name: chart},
			Values:     &runtime.RawExtension{Raw: install},
			SyncPolicy: v1.SyncPolicy{Automatic: ptr.To(true)},
		},
	}
	start := time.Now()
	if err := c.Create(ctx, rel); err != nil {
		return fmt.Errorf("create the Release: %w", err)
	}
	first, err := waitReady(ctx, c, "", cfg.timeout)
	if err != nil {
		return fmt.Errorf("install: %w", err)
	}
	r.install = time.Since(start)
	inv := &v1.ReleaseInventory{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, inv); err != nil {
		return err
	}
	r.objects = len(inv.Objects)

	fmt.Fprintln(os.Stderr, "Upgrading (a pod annotation on every workload)...")
	start = time.Now()
	if err := retryUpdate(ctx, c, func(rel *v1.Release) { rel.Spec.Values = &runtime.RawExtension{Raw: upgrade} }); err != nil {
		return fmt.Errorf("update the values: %w", err)
	}
	if _, err := waitReady(ctx, c, first, cfg.timeout); err != nil {
		return fmt.Errorf("upgrade: %w", err)
	}
	r.upgrade = time.Since(start)

	fmt.Fprintf(os.Stderr, "Steady window of %s...\n", cfg.steady)
	relBefore, invBefore := &v1.Release{}, &v1.ReleaseInventory{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, relBefore); err != nil {
		return err
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, invBefore); err != nil {
		return err
	}
	ctlBefore, obsBefore := e.ControllerMetrics(ctx), benchenv.HTTPGet(ctx, http.DefaultClient, obsMetrics)
	kubeBefore, err := e.KubeMetrics(ctx)
	if err != nil {
		return err
	}
	convoyBefore := e.ConvoyMetrics(ctx)
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(cfg.steady):
	}
	ctlAfter, obsAfter := e.ControllerMetrics(ctx), benchenv.HTTPGet(ctx, http.DefaultClient, obsMetrics)
	kubeAfter, err := e.KubeMetrics(ctx)
	if err != nil {
		return err
	}
	convoyAfter := e.ConvoyMetrics(ctx)
	r.steadyClients = map[string]float64{
		"controller": writes(ctlBefore, ctlAfter),
		"observer":   writes(obsBefore, obsAfter),
	}
	kk := []string{"verb", "dry_run", "group", "resource", "subresource", "code"}
	r.steadyKube = benchenv.Filter(benchenv.Delta(benchenv.Counts(kubeBefore, "apiserver_request_total", kk...), benchenv.Counts(kubeAfter, "apiserver_request_total", kk...)),
		func(k string) bool { return benchenv.IsWrite(k) && !dryRun(k) && !heartbeat(k) })
	r.steadyConvoy = benchenv.SumWhere(benchenv.Delta(benchenv.Counts(convoyBefore, "apiserver_request_total", kk...), benchenv.Counts(convoyAfter, "apiserver_request_total", kk...)), benchenv.IsWrite)
	r.observerStatusWrites = benchenv.Total(benchenv.Counts(obsAfter, "convoy_observer_status_writes_total")) -
		benchenv.Total(benchenv.Counts(obsBefore, "convoy_observer_status_writes_total"))
	relAfter, invAfter := &v1.Release{}, &v1.ReleaseInventory{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, relAfter); err != nil {
		return err
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, invAfter); err != nil {
		return err
	}
	r.releaseWritten = relAfter.ResourceVersion != relBefore.ResourceVersion
	r.inventoryWritten = invAfter.ResourceVersion != invBefore.ResourceVersion

	fmt.Fprintln(os.Stderr, "Deleting the Release...")
	start = time.Now()
	if err := c.Delete(ctx, relAfter); err != nil {
		return fmt.Errorf("delete the Release: %w", err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, cfg.timeout, true, func(ctx context.Context) (bool, error) {
		err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &v1.Release{})
		return apierrors.IsNotFound(err), nil
	}); err != nil {
		return fmt.Errorf("deletion: the Release is still there after %s: %w", cfg.timeout, err)
	}
	r.delete = time.Since(start)
	r.procs = e.Snapshot()
	r.loadAfter = benchenv.LoadAvg()
	r.print(os.Stdout)
	return nil
}

// startObserver starts convoy observer as bench/observer does (an admin) and returns
// the URL of its /metrics.
func startObserver(ctx context.Context, e *benchenv.Env, bin string, resync time.Duration) (string, error) {
	kubeconfig, err := e.Cluster.UserKubeconfig("convoy-observer", "system:masters")
	if err != nil {
		return "", err
	}
	return e.StartComponent(ctx, "convoy-observer", bin, "observer", []string{
		"--kubeconfig=" + kubeconfig,
		"--resync=" + resync.String(),
	})
}

// waitReady waits until the Release has a render other than old and is Ready, and
// returns its render ref.
func waitReady(ctx context.Context, c client.Client, old string, timeout time.Duration) (string, error) {
	var last string
	var ref string
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		rel := &v1.Release{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, rel); err != nil {
			last = err.Error()
			return false, nil
		}
		ready := apimeta.FindStatusCondition(rel.Status.Conditions, v1.ConditionReady)
		switch {
		case rel.Status.Render == nil || rel.Status.Render.Ref == old:
			last = "no new render yet"
			return false, nil
		case ready == nil || ready.Status != metav1.ConditionTrue:
			last = fmt.Sprintf("Ready: %+v", ready)
			return false, nil
		}
		ref = rel.Status.Render.Ref
		return true, nil
	})
	if err != nil {
		return "", fmt.Errorf("not Ready after %s (last: %s): %w", timeout, last, err)
	}
	return ref, nil
}

// retryUpdate changes the Release, again on a conflict.
func retryUpdate(ctx context.Context, c client.Client, change func(*v1.Release)) error {
	for range 10 {
		rel := &v1.Release{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, rel); err != nil {
			return err
		}
		change(rel)
		err := c.Update(ctx, rel)
		if !apierrors.IsConflict(err) {
			return err
		}
	}
	return errors.New("10 conflicts in a row")
}

// withPodAnnotation adds global.podAnnotations[key] = value to JSON values.
func withPodAnnotation(values []byte, key, value string) ([]byte, error) {
	m := map[string]any{}
	if err := json.Unmarshal(values, &m); err != nil {
		return nil, err
	}
	global, _ := m["global"].(map[string]any)
	if global == nil {
		global = map[string]any{}
	}
	ann, _ := global["podAnnotations"].(map[string]any)
	if ann == nil {
		ann = map[string]any{}
	}
	ann[key] = value
	global["podAnnotations"], m["global"] = ann, global
	return json.Marshal(m)
}

// dryRun says whether a key carries the dry_run label: a server-side dry run, which
// kube-apiserver counts as a write but stores nothing.
func dryRun(key string) bool { return slices.Contains(strings.Fields(key), "All") }

// heartbeat says whether a key is one of the control plane's own periodic writes
// (Leases, Nodes) or a review that stores nothing.
func heartbeat(key string) bool {
	return slices.ContainsFunc(strings.Fields(key), func(w string) bool {
		return w == "leases" || w == "nodes" || w == "subjectaccessreviews" || w == "tokenreviews"
	})
}

// writes is the number of write requests of a client (rest_client_requests_total)
// between two metrics texts.
func writes(before, after string) float64 {
	d := benchenv.Delta(benchenv.Counts(before, "rest_client_requests_total", "method", "code"),
		benchenv.Counts(after, "rest_client_requests_total", "method", "code"))
	return benchenv.SumWhere(d, benchenv.IsWrite)
}

func mib(kib int64) string { return strconv.FormatFloat(float64(kib)/1024, 'f', 0, 64) + " MiB" }

func (r *result) print(w io.Writer) {
	fmt.Fprintf(w, "\n## %s: %d objects (ReleaseInventory)\n\n", chart, r.objects)
	fmt.Fprintf(w, "load average before / after: %s / %s\n\n", r.loadBefore, r.loadAfter)
	fmt.Fprintf(w, "| measure | value |\n|---|---|\n")
	fmt.Fprintf(w, "| install: create → Ready | **%s** |\n", r.install.Round(time.Millisecond))
	fmt.Fprintf(w, "| upgrade: values change → Ready | **%s** |\n", r.upgrade.Round(time.Millisecond))
	fmt.Fprintf(w, "| steady window: writes that store on kube-apiserver / convoy apiserver, observer status writes | **%.0f** / **%.0f** / %.0f %s |\n",
		benchenv.Total(r.steadyKube), r.steadyConvoy, r.observerStatusWrites, benchenv.FmtMap(r.steadyKube, 5))
	fmt.Fprintf(w, "| steady window: write requests of the controller / observer clients, dry runs included | %.0f / %.0f |\n",
		r.steadyClients["controller"], r.steadyClients["observer"])
	fmt.Fprintf(w, "| steady window: Release / ReleaseInventory written | %t / %t |\n", r.releaseWritten, r.inventoryWritten)
	fmt.Fprintf(w, "| deletion: delete → Release gone | **%s** |\n", r.delete.Round(time.Millisecond))
	for _, p := range []string{"convoy-controller", "convoy-observer", "convoy-apiserver"} {
		s := r.procs[p]
		fmt.Fprintf(w, "| %s: peak RSS (VmHWM), CPU s | **%s**, %.1f |\n", p, mib(s.HWMKiB), s.CPUSeconds)
	}
	fmt.Fprintf(w, "\n%s\n", benchenv.Command("largechart"))
}
