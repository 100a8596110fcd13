// Command git benchmarks charts from Git (issue 36): N Releases of one chart folder of
// one Git repository against the same N Releases of the same chart from a Helm
// repository, on a local control plane with convoy apiserver and convoy controller as
// separate processes (benchenv). The Git repository is served in this process over
// https with basic auth (internal/render/gittest), the Helm repository by
// internal/render/chartrepo; both count the requests they answer.
//
// It reports, for each source: the time from the first create to every Release
// Applied=True and the requests the source answered meanwhile; the requests per
// interval in a steady window of -steady-intervals intervals (goal for Git: one ref
// listing per repository and interval, whatever N); and for Git, after a new commit,
// the time until every Release applied it and the requests that took (one listing and
// one fetch of the one commit).
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
	"sort"
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
	flag.IntVar(&c.concurrency, "concurrency", 8, "convoy controller --concurrency")
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
	bin := c.convoy
	if bin == "" {
		dir, err := os.MkdirTemp("", "bench-git-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		if bin, err = benchenv.BuildConvoy(ctx, dir); err != nil {
			return err
		}
	}
	e, err := benchenv.Start(ctx, bin, benchenv.Options{})
	if err != nil {
		return err
	}
	defer e.Stop()
	if err := e.StartController(ctx, bin, 10*time.Minute, c.concurrency); err != nil {
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
	// Helm first, then Git: each on a controller that has nothing else to do.
	start, before := time.Now(), helmCount.n.Load()
	if err := c.createAll(ctx, e, helmRelease); err != nil {
		return err
	}
	if err := c.waitAll(ctx, e, helmNS, func(r *convoyv1alpha1.Release) bool { return applied(r) }); err != nil {
		return fmt.Errorf("Helm repository Releases: %w", err)
	}
	rep.helmReady, rep.helmReadyRequests = time.Since(start), helmCount.n.Load()-before

	start, beforeGit := time.Now(), gitSrv.Requests()
	if err := c.createAll(ctx, e, gitRelease); err != nil {
		return err
	}
	if err := c.waitAll(ctx, e, gitNS, func(r *convoyv1alpha1.Release) bool {
		return applied(r) && r.Status.LastSuccessful != nil && r.Status.LastSuccessful.Commit == first
	}); err != nil {
		return fmt.Errorf("Git Releases: %w", err)
	}
	rep.gitReady, rep.gitReadyRequests = time.Since(start), sub(gitSrv.Requests(), beforeGit)

	// The steady window: no change anywhere.
	helmBefore, gitBefore := helmCount.n.Load(), gitSrv.Requests()
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
	if err := c.waitAll(ctx, e, gitNS, func(r *convoyv1alpha1.Release) bool {
		return applied(r) && r.Status.LastSuccessful != nil && r.Status.LastSuccessful.Commit == next
	}); err != nil {
		return fmt.Errorf("Git Releases after a new commit: %w", err)
	}
	rep.gitCommit, rep.gitCommitRequests = time.Since(start), sub(gitSrv.Requests(), gitBefore)
	rep.print()
	return nil
}

func applied(r *convoyv1alpha1.Release) bool {
	return meta.IsStatusConditionTrue(r.Status.Conditions, convoyv1alpha1.ConditionApplied)
}

// createAll creates -releases Releases from mk, 16 at a time.
func (c config) createAll(ctx context.Context, e *benchenv.Env, mk func(name string) *convoyv1alpha1.Release) error {
	names := make(chan string)
	var wg sync.WaitGroup
	var firstErr atomic.Value
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for name := range names {
				r := mk(name)
				if err := e.Convoy.Post().Namespace(r.Namespace).Resource("releases").Body(r).Do(ctx).Error(); err != nil {
					firstErr.CompareAndSwap(nil, fmt.Errorf("create Release %s/%s: %w", r.Namespace, name, err))
				}
			}
		}()
	}
	for i := range c.releases {
		names <- fmt.Sprintf("podinfo-%04d", i)
	}
	close(names)
	wg.Wait()
	if err, _ := firstErr.Load().(error); err != nil {
		return err
	}
	return nil
}

// waitAll polls the Releases of ns until every one of -releases meets done, or
// -timeout passes.
func (c config) waitAll(ctx context.Context, e *benchenv.Env, ns string, done func(*convoyv1alpha1.Release) bool) error {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	last := ""
	for {
		var list convoyv1alpha1.ReleaseList
		if err := e.Convoy.Get().Namespace(ns).Resource("releases").Do(ctx).Into(&list); err == nil {
			n := 0
			for i := range list.Items {
				if done(&list.Items[i]) {
					n++
				} else if c := meta.FindStatusCondition(list.Items[i].Status.Conditions, convoyv1alpha1.ConditionApplied); c != nil {
					last = c.Reason + ": " + c.Message
				}
			}
			if n == c.releases {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not every Release done in %s (last: %s): %w", c.timeout, last, ctx.Err())
		case <-tick.C:
		}
	}
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
	helmReady, gitReady time.Duration
	helmReadyRequests   int64
	gitReadyRequests    map[string]int
	helmSteady          float64
	gitSteady           map[string]float64
	gitCommit           time.Duration
	gitCommitRequests   map[string]int
}

func (r report) print() {
	fmt.Printf("\n## bench/git: %d Releases per source, interval %s, controller --concurrency=%d\n\n", r.cfg.releases, r.cfg.interval, r.cfg.concurrency)
	fmt.Printf("Command: go run ./bench/git -releases=%d -interval=%s -steady-intervals=%d -concurrency=%d\n\n",
		r.cfg.releases, r.cfg.interval, r.cfg.steadyIntervals, r.cfg.concurrency)
	fmt.Println("| | Helm repository | Git repository |")
	fmt.Println("| --- | --- | --- |")
	fmt.Printf("| create → every Release Applied | %s | %s |\n", r.helmReady.Round(100*time.Millisecond), r.gitReady.Round(100*time.Millisecond))
	fmt.Printf("| source requests meanwhile | %d | %s |\n", r.helmReadyRequests, kinds(r.gitReadyRequests))
	fmt.Printf("| source requests per interval, steady | %.1f | %s |\n", r.helmSteady, kindsF(r.gitSteady))
	fmt.Printf("| new commit → every Release applied it | | %s, requests: %s |\n", r.gitCommit.Round(100*time.Millisecond), kinds(r.gitCommitRequests))
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
