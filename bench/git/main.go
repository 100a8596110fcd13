// Command git benchmarks charts from Git: N Releases of one chart folder of
// one Git repository against the same N Releases of the same chart from a Helm
// repository, on a local control plane with simulated workloads, convoy apiserver,
// convoy controller and convoy observer as separate processes (benchenv), the
// controller and the observer with their default flags as bench/e2e runs them. The Git
// repository is served in this process over https with basic auth
// (internal/render/gittest), the Helm repository by internal/render/chartrepo; both
// count the requests they answer.
//
// The two sources run side by side in one run: the i-th Release of each is created
// together, in alternating order, so both meet the same warming controller and the
// same load. It reports, for each source: each Release's create → Ready (p50/p99/max)
// and the requests the source answered meanwhile; the requests per interval in a
// steady window of -steady-intervals intervals (goal for Git: one ref listing per
// repository and interval, whatever N); and for Git, after a new commit, the time until
// every Release is Ready on it and the requests that took (one listing and one fetch
// of the one commit).
//
//	go run ./bench/git -releases=1000
//	make bench-git BENCH_FLAGS='-releases=100'
package main

import (
	"context"
	"flag"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/bench/internal/benchenv"
	"kumodo.io/convoy/internal/localcluster"
	"kumodo.io/convoy/internal/render/chartrepo"
	"kumodo.io/convoy/internal/render/gittest"
)

type config struct {
	releases        int
	interval        time.Duration
	steadyIntervals int
	timeout         time.Duration
	concurrency     int
	convoy          string
}

func main() {
	var c config
	flag.IntVar(&c.releases, "releases", 1000, "Releases per source")
	flag.DurationVar(&c.interval, "interval", 30*time.Second, "syncPolicy.interval of every Release")
	flag.IntVar(&c.steadyIntervals, "steady-intervals", 2, "intervals of the steady window in which requests are counted")
	flag.DurationVar(&c.timeout, "timeout", 15*time.Minute, "upper bound of each wait for the Releases")
	flag.IntVar(&c.concurrency, "concurrency", 0, "convoy controller --concurrency; 0: its default")
	flag.StringVar(&c.convoy, "convoy", "", "a built convoy binary; empty: build ./cmd/convoy")
	flag.Parse()
	tb := &mainTB{}
	defer tb.cleanup()
	if err := c.run(context.Background(), tb); err != nil {
		tb.cleanup()
		fmt.Fprintln(os.Stderr, "bench/git:", err)
		os.Exit(1)
	}
}

// counter counts the requests of an HTTP server.
type counter struct{ n atomic.Int64 }

func (c *counter) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.n.Add(1)
		h.ServeHTTP(w, r)
	})
}

func gitRequests(s *gittest.Server) int64 {
	var n int64
	for _, v := range s.Requests() {
		n += int64(v)
	}
	return n
}

func (c config) run(ctx context.Context, tb *mainTB) error {
	ctx, cancel := context.WithTimeout(ctx, 4*c.timeout)
	defer cancel()
	bin, cleanup, err := benchenv.ConvoyBinary(ctx, c.convoy, "git")
	if err != nil {
		return err
	}
	defer cleanup()
	// Workloads (kube-controller-manager, one simulated node): the Deployment's status
	// that the observer reads to call a Release Healthy, hence Ready.
	e, err := benchenv.Start(ctx, bin, benchenv.Options{Workloads: true, Nodes: 1})
	if err != nil {
		return err
	}
	defer e.Stop()
	// convoy controller and observer as bench/e2e runs them: their default flags, plus
	// the kubeconfig, the chart cache, and loopback metrics and probe addresses.
	kubeconfig := "--kubeconfig=" + e.Cluster.KubeconfigPath()
	ctlArgs := []string{kubeconfig, "--chart-cache-dir=" + filepath.Join(e.Cluster.Dir(), "charts")}
	if c.concurrency > 0 {
		ctlArgs = append(ctlArgs, "--concurrency="+strconv.Itoa(c.concurrency))
	}
	if _, err := e.StartComponent(ctx, "convoy-controller", bin, "controller", ctlArgs); err != nil {
		return err
	}
	if _, err := e.StartComponent(ctx, "convoy-observer", bin, "observer", []string{kubeconfig}); err != nil {
		return err
	}

	root, err := localcluster.RepoRoot()
	if err != nil {
		return err
	}
	chartDir := filepath.Join(root, "bench", "controller", "testdata")
	helmRepo, err := chartrepo.Build(chartDir)
	if err != nil {
		return err
	}
	var helmCount counter
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	helmSrv := &http.Server{Handler: helmCount.wrap(helmRepo), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = helmSrv.Serve(ln) }()
	defer helmSrv.Close()
	helmURL := "http://" + ln.Addr().String()

	gitSrv := gittest.NewServer(tb, "bench", "bench-password")
	repo := gitSrv.Repo(tb, "platform/charts")
	files, err := chartFiles(filepath.Join(chartDir, "podinfo"), "charts/podinfo")
	if err != nil {
		return err
	}
	first := repo.Commit(tb, "main", "podinfo", files)

	helmNS, gitNS := "bench-git-helm", "bench-git"
	for _, ns := range []string{helmNS, gitNS} {
		if err := e.EnsureNamespace(ctx, ns); err != nil {
			return err
		}
	}
	if _, err := e.Kube.CoreV1().Secrets(gitNS).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: gitNS, Name: "git-creds"},
		Data:       map[string][]byte{"username": []byte("bench"), "password": []byte("bench-password"), "caFile": gitSrv.CA()},
	}, metav1.CreateOptions{}); err != nil {
		return err
	}
	iv := &metav1.Duration{Duration: c.interval}
	helmRelease := func(name string) *convoyv1alpha1.Release {
		r := benchenv.PodinfoRelease(helmNS, name, helmURL)
		r.Spec.SyncPolicy.Interval = iv
		return r
	}
	gitRelease := func(name string) *convoyv1alpha1.Release {
		r := benchenv.PodinfoRelease(gitNS, name, "")
		r.Spec.Chart = convoyv1alpha1.ChartSource{Git: &convoyv1alpha1.GitChartSource{
			URL: gitSrv.RepoURL("platform/charts"), Ref: convoyv1alpha1.GitRef{Branch: "main"}, Path: "charts/podinfo",
			SecretRef: &convoyv1alpha1.LocalObjectReference{Name: "git-creds"},
		}}
		r.Spec.SyncPolicy = convoyv1alpha1.SyncPolicy{Automatic: ptr.To(true), Interval: iv}
		return r
	}

	var rep report
	rep.cfg = c
	// Both sources side by side: the i-th Helm and the i-th Git Release are created
	// together, in alternating order, so that both meet the same controller and observer
	// (their start, their load) and neither pays the warm-up alone.
	start, helmBefore, gitBefore := time.Now(), helmCount.n.Load(), gitSrv.Requests()
	if err := c.createAll(ctx, e, func(i int) []*convoyv1alpha1.Release {
		name := fmt.Sprintf("podinfo-%04d", i)
		if i%2 == 1 {
			return []*convoyv1alpha1.Release{gitRelease(name), helmRelease(name)}
		}
		return []*convoyv1alpha1.Release{helmRelease(name), gitRelease(name)}
	}); err != nil {
		return err
	}
	var helmLats, gitLats []time.Duration
	errc := make(chan error, 2)
	go func() {
		var err error
		helmLats, err = c.waitAll(ctx, e, helmNS, func(*convoyv1alpha1.Release) bool { return true })
		if err != nil {
			err = fmt.Errorf("Helm repository Releases: %w", err)
		}
		errc <- err
	}()
	go func() {
		var err error
		gitLats, err = c.waitAll(ctx, e, gitNS, func(r *convoyv1alpha1.Release) bool {
			return r.Status.LastSuccessful != nil && r.Status.LastSuccessful.Commit == first
		})
		if err != nil {
			err = fmt.Errorf("Git Releases: %w", err)
		}
		errc <- err
	}()
	for range 2 {
		if err := <-errc; err != nil {
			return err
		}
	}
	rep.helmReady, rep.gitReady = latencies(helmLats), latencies(gitLats)
	rep.total = time.Since(start)
	rep.helmReadyRequests, rep.gitReadyRequests = helmCount.n.Load()-helmBefore, sub(gitSrv.Requests(), gitBefore)

	// The steady window: no change anywhere.
	helmBefore, gitBefore = helmCount.n.Load(), gitSrv.Requests()
	window := time.Duration(c.steadyIntervals) * c.interval
	fmt.Fprintf(os.Stderr, "Counting requests for %s (%d intervals)...\n", window, c.steadyIntervals)
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(window):
	}
	rep.helmSteady = float64(helmCount.n.Load()-helmBefore) / float64(c.steadyIntervals)
	rep.gitSteady = perInterval(sub(gitSrv.Requests(), gitBefore), c.steadyIntervals)

	// A new commit on the branch.
	files["charts/podinfo/values.yaml"] += "\n# a new commit\n"
	gitBefore, start = gitSrv.Requests(), time.Now()
	next := repo.Commit(tb, "main", "podinfo: a new commit", map[string]string{"charts/podinfo/values.yaml": files["charts/podinfo/values.yaml"]})
	fmt.Fprintln(os.Stderr, "Waiting for every Git Release to be Ready on the new commit...")
	if _, err := c.waitAll(ctx, e, gitNS, func(r *convoyv1alpha1.Release) bool {
		return r.Status.LastSuccessful != nil && r.Status.LastSuccessful.Commit == next
	}); err != nil {
		return fmt.Errorf("Git Releases after a new commit: %w", err)
	}
	rep.gitCommit, rep.gitCommitRequests = time.Since(start), sub(gitSrv.Requests(), gitBefore)
	rep.print()
	return nil
}

// createAll creates the Releases that mk gives for 0 ≤ i < -releases, 16 creators at
// once, each creating mk(i) in order.
func (c config) createAll(ctx context.Context, e *benchenv.Env, mk func(i int) []*convoyv1alpha1.Release) error {
	is := make(chan int)
	var wg sync.WaitGroup
	var firstErr atomic.Value
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range is {
				for _, r := range mk(i) {
					if err := e.Convoy.Post().Namespace(r.Namespace).Resource("releases").Body(r).Do(ctx).Error(); err != nil {
						firstErr.CompareAndSwap(nil, fmt.Errorf("create Release %s/%s: %w", r.Namespace, r.Name, err))
					}
				}
			}
		}()
	}
	for i := range c.releases {
		is <- i
	}
	close(is)
	wg.Wait()
	if err, _ := firstErr.Load().(error); err != nil {
		return err
	}
	return nil
}

// waitAll polls the Releases of ns every two seconds until every one of -releases is
// Ready and meets done, or -timeout passes. It returns each Release's create → Ready:
// its Ready condition's lastTransitionTime less its creationTimestamp (both to the
// second, as the API server keeps them).
func (c config) waitAll(ctx context.Context, e *benchenv.Env, ns string, done func(*convoyv1alpha1.Release) bool) ([]time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	last, lastPrint, start := "", time.Now(), time.Now()
	for {
		var list convoyv1alpha1.ReleaseList
		if err := e.Convoy.Get().Namespace(ns).Resource("releases").Do(ctx).Into(&list); err == nil {
			var lats []time.Duration
			for i := range list.Items {
				r := &list.Items[i]
				ready := meta.FindStatusCondition(r.Status.Conditions, convoyv1alpha1.ConditionReady)
				if ready != nil && ready.Status == metav1.ConditionTrue && done(r) {
					lats = append(lats, ready.LastTransitionTime.Sub(r.CreationTimestamp.Time))
				} else if ready != nil {
					last = ready.Reason + ": " + ready.Message
				}
			}
			if len(lats) == c.releases {
				return lats, nil
			}
			if time.Since(lastPrint) > 15*time.Second {
				lastPrint = time.Now()
				fmt.Fprintf(os.Stderr, "  %s %s: %d/%d Ready\n", ns, time.Since(start).Round(time.Second), len(lats), c.releases)
			}
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("not every Release Ready in %s (last: %s): %w", c.timeout, last, ctx.Err())
		case <-tick.C:
		}
	}
}

// spread is the create → Ready of the Releases of one source.
type spread struct{ p50, p99, max time.Duration }

func latencies(lats []time.Duration) spread {
	if len(lats) == 0 {
		return spread{}
	}
	slices.Sort(lats)
	return spread{lats[len(lats)/2], lats[min(len(lats)-1, len(lats)*99/100)], lats[len(lats)-1]}
}

func sub(a, b map[string]int) map[string]int {
	out := map[string]int{}
	for k, v := range a {
		if d := v - b[k]; d != 0 {
			out[k] = d
		}
	}
	return out
}

func perInterval(m map[string]int, intervals int) map[string]float64 {
	out := map[string]float64{}
	for k, v := range m {
		out[k] = float64(v) / float64(intervals)
	}
	return out
}

// chartFiles reads a chart folder into repository paths under prefix.
func chartFiles(dir, prefix string) (map[string]string, error) {
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		files[prefix+"/"+filepath.ToSlash(rel)] = string(b)
		return nil
	})
	return files, err
}

type report struct {
	cfg                 config
	total               time.Duration // first create → every Release of both sources Ready
	helmReady, gitReady spread
	helmReadyRequests   int64
	gitReadyRequests    map[string]int
	helmSteady          float64
	gitSteady           map[string]float64
	gitCommit           time.Duration
	gitCommitRequests   map[string]int
}

func (r report) print() {
	conc := "its default"
	if r.cfg.concurrency > 0 {
		conc = fmt.Sprintf("--concurrency=%d", r.cfg.concurrency)
	}
	fmt.Printf("\n## bench/git: %d Releases per source, created side by side, interval %s, controller %s, observer with its defaults\n\n", r.cfg.releases, r.cfg.interval, conc)
	flags := ""
	if r.cfg.concurrency > 0 {
		flags = fmt.Sprintf(" -concurrency=%d", r.cfg.concurrency)
	}
	fmt.Printf("Command: go run ./bench/git -releases=%d -interval=%s -steady-intervals=%d%s\n\n",
		r.cfg.releases, r.cfg.interval, r.cfg.steadyIntervals, flags)
	fmt.Printf("First create → all %d Releases of both sources Ready: %s\n\n", 2*r.cfg.releases, r.total.Round(time.Second))
	fmt.Println("| | Helm repository | Git repository |")
	fmt.Println("| --- | --- | --- |")
	fmt.Printf("| create → Ready per Release, p50 / p99 / max | %s | %s |\n", r.helmReady, r.gitReady)
	fmt.Printf("| source requests meanwhile | %d | %s |\n", r.helmReadyRequests, kinds(r.gitReadyRequests))
	fmt.Printf("| source requests per interval, steady | %.1f | %s |\n", r.helmSteady, kindsF(r.gitSteady))
	fmt.Printf("| new commit → every Release Ready on it | | %s, requests: %s |\n", r.gitCommit.Round(time.Second), kinds(r.gitCommitRequests))
}

func (s spread) String() string {
	return fmt.Sprintf("%s / %s / %s", s.p50, s.p99, s.max)
}

func kinds(m map[string]int) string {
	f := map[string]float64{}
	for k, v := range m {
		f[k] = float64(v)
	}
	return kindsF(f)
}

func kindsF(m map[string]float64) string {
	if len(m) == 0 {
		return "0"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %.1f", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

// mainTB is what gittest needs of a test, for a main: a failure ends the program.
type mainTB struct {
	mu       sync.Mutex
	cleanups []func()
}

func (t *mainTB) Helper() {}
func (t *mainTB) Fatal(args ...any) {
	t.cleanup()
	fmt.Fprintln(os.Stderr, append([]any{"bench/git:"}, args...)...)
	os.Exit(1)
}
func (t *mainTB) Fatalf(format string, args ...any) { t.Fatal(fmt.Sprintf(format, args...)) }
func (t *mainTB) Cleanup(f func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.cleanups = append(t.cleanups, f)
}
func (t *mainTB) cleanup() {
	t.mu.Lock()
	fs := t.cleanups
	t.cleanups = nil
	t.mu.Unlock()
	for i := len(fs) - 1; i >= 0; i-- {
		fs[i]()
	}
}
