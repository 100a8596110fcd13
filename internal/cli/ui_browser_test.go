package cli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/observer"
	"kumodo.io/convoy/internal/observer/drift"
	"kumodo.io/convoy/internal/testenv"
)

// The browser tests drive Debian's chromium (make browser installs it; set
// CONVOY_CHROMIUM to use another binary) headless through the DevTools
// protocol, against `kubectl convoy ui` on the local control plane.
// Screenshots go to $CONVOY_UI_SCREENSHOTS (default: a convoy-ui-screenshots
// folder in the temporary directory).

func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("CONVOY_CHROMIUM"); p != "" {
		return p
	}
	p, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal("the browser tests need Debian's chromium: run make browser (apt-get install chromium), or set CONVOY_CHROMIUM")
	}
	return p
}

// browser starts a headless chromium for one test and returns its tab.
func browser(t *testing.T) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)),
		chromedp.NoSandbox, // root in CI
		chromedp.WindowSize(1280, 900),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
		// chromium's own temporary files (org.chromium.Chromium.*, in /tmp with
		// disable-dev-shm-usage) go where the test's cleanup removes them.
		chromedp.Env("TMPDIR="+t.TempDir()),
	)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	return ctx
}

// run runs browser steps with a deadline.
func run(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	if err := chromedp.Do(c, steps...); err != nil {
		page, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('main')?.innerText || ''`))
		t.Fatalf("%s: %v\npage:\n%s", what, err, page)
	}
}

// waitText waits until the text of the first element of sel satisfies ok.
func waitText(sel, what string, ok func(string) bool) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		var last string
		for {
			got, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector(`+strconv.Quote(sel)+`)?.innerText ?? ""`))
			if err == nil && ok(strings.TrimSpace(got)) {
				return nil
			}
			last = got
			select {
			case <-ctx.Done():
				return fmt.Errorf("%s never showed %s (last: %q)", sel, what, last)
			case <-time.After(100 * time.Millisecond):
			}
		}
	})
}

// textIs waits until the element of sel shows want.
func textIs(sel, want string) chromedp.Action[chromedp.Void] {
	return waitText(sel, strconv.Quote(want), func(s string) bool { return s == want })
}

// textHas waits until the element of sel contains want.
func textHas(sel, want string) chromedp.Action[chromedp.Void] {
	return waitText(sel, "a text with "+strconv.Quote(want), func(s string) bool { return strings.Contains(s, want) })
}

func visible(sel string) chromedp.Action[chromedp.Void] {
	return chromedp.WaitVisible(chromedp.CSS(sel))
}

func screenshotDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("CONVOY_UI_SCREENSHOTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "convoy-ui-screenshots")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// screenshot saves the whole page as name.png.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	b, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	path := filepath.Join(screenshotDir(t), name+".png")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
}

func row(ns, name string) string { return `[data-release="` + ns + `/` + name + `"]` }

// The Releases list follows the watch: a Release created after the page loaded
// appears, and a status change shows without a reload.
func TestUIBrowserListUpdatesLive(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	createRelease(t, ns, "podinfo")
	base := startUI(t, "-n", ns)
	ctx := browser(t)
	run(t, ctx, "open the Releases list", chromedp.Navigate(base), visible(row(ns, "podinfo")),
		textIs(`[data-testid=count-all]`, "1"))

	createRelease(t, ns, "frontend")
	run(t, ctx, "the new Release appears", visible(row(ns, "frontend")),
		textIs(`[data-testid=count-all]`, "2"))
	writeStatus(t, ns, "podinfo", func(r *v1.Release) {
		r.Status.Conditions = []metav1.Condition{appliedCondition(metav1.ConditionFalse, v1.ReasonWaitingForSync, "waiting for a sync")}
	})
	run(t, ctx, "the status change shows", textIs(row(ns, "podinfo")+` [data-testid=applied]`, v1.ReasonWaitingForSync),
		textIs(`[data-testid=count-Waiting]`, "1"))
	screenshot(t, ctx, "releases")
}

// The Clusters page shows a Cluster's reachability and version, and its Releases
// as lanes in cluster-wave order.
func TestUIBrowserClusterWaveLanes(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	c := admin(t)
	name := "staging-" + testenv.RandomSuffix()
	cl := &v1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.ClusterSpec{Kubeconfig: v1.KubeconfigSource{SecretRef: v1.SecretKeyReference{Namespace: ns, Name: "staging-kubeconfig"}}}}
	created := &v1.Cluster{}
	if err := c.rest.Post().Resource(v1.ResourceClusters).Body(cl).Do(testCtx(t)).Into(created); err != nil {
		t.Fatalf("creating Cluster %s: %v", name, err)
	}
	t.Cleanup(func() { _ = c.rest.Delete().Resource(v1.ResourceClusters).Name(name).Do(context.Background()).Error() })
	created.Status = v1.ClusterStatus{KubernetesVersion: "v1.37.2", Conditions: []metav1.Condition{{
		Type: v1.ConditionReady, Status: metav1.ConditionTrue, Reason: v1.ReasonReachable, Message: "reachable", LastTransitionTime: metav1.Now()}}}
	if err := c.rest.Put().Resource(v1.ResourceClusters).Name(name).SubResource("status").Body(created).Do(testCtx(t)).Error(); err != nil {
		t.Fatalf("writing the status of Cluster %s: %v", name, err)
	}
	for i, rel := range []string{"db", "api", "web", "worker"} {
		r := &v1.Release{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: rel},
			Spec: v1.ReleaseSpec{Cluster: name, ClusterWave: int32([]int{0, 1, 2, 1}[i]),
				Chart: v1.ChartSource{Repository: "https://charts.example.com", Name: rel, Version: "1.0.0"}}}
		if err := c.rest.Post().Namespace(ns).Resource(v1.ResourceReleases).Body(r).Do(testCtx(t)).Error(); err != nil {
			t.Fatal(err)
		}
	}
	base := startUI(t)
	ctx := browser(t)
	lanes := `[aria-label="Cluster waves of ` + name + `"]`
	run(t, ctx, "open the Clusters page", chromedp.Navigate(base+"#/clusters"),
		textHas(`[data-cluster="`+name+`"]`, "Reachable"), textHas(`[data-cluster="`+name+`"]`, "v1.37.2"),
		visible(lanes))
	got, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('`+lanes+` .lane')].map(l => l.innerText.replace(/\s+/g, ' ').trim())`))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"Wave 0 " + ns + "/db Pending",
		"Wave 1 " + ns + "/api Pending " + ns + "/worker Pending",
		"Wave 2 " + ns + "/web Pending",
	}
	if strings.Join(got, " | ") != strings.Join(want, " | ") {
		t.Errorf("lanes of %s:\n got %q\nwant %q", name, got, want)
	}
	screenshot(t, ctx, "clusters")
}

// serveTestCharts serves testdata/charts as a Helm repository and returns its URL.
func serveTestCharts(t *testing.T) string {
	t.Helper()
	return testenv.ServeCharts(t, filepath.Join("testdata", "charts"))
}

// startObserver runs convoy's observer in this process for the Releases of ns,
// as the admin of the local control plane, until the test ends.
func startObserver(t *testing.T, ns string) {
	t.Helper()
	ctrllog.SetLogger(logr.Discard())
	mgr, err := observer.NewManager(env.admin, observer.ManagerOptions{
		Resync: 10 * time.Minute, MetricsBindAddress: "0", HealthProbeBindAddress: "0", Namespaces: []string{ns},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := observer.Setup(mgr, observer.Options{Drift: drift.New(drift.Options{}), Metrics: prometheus.NewRegistry(), SkipNameValidation: true}); err != nil {
		t.Fatal(err)
	}
	testenv.StartManager(t, context.Background(), "observer", mgr)
}

// A manual Release shows WaitingForSync and the diff of its render against the
// cluster; pressing Sync applies it, and the page follows the sync it started
// until the Release is Applied and Healthy (the controller and the observer run).
func TestUIBrowserManualReleaseSyncToHealthy(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	charts := serveTestCharts(t)
	startController(t, ns)
	startObserver(t, ns)
	r := &v1.Release{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec:       v1.ReleaseSpec{Chart: v1.ChartSource{Repository: charts, Name: "settings", Version: "0.1.0"}},
	}
	if err := admin(t).rest.Post().Namespace(ns).Resource(v1.ResourceReleases).Body(r).Do(testCtx(t)).Error(); err != nil {
		t.Fatalf("creating the Release: %v", err)
	}
	t.Cleanup(func() { deleteRelease(t, ns, "web") })

	base := startUI(t)
	ctx := browser(t)
	run(t, ctx, "open the Release", chromedp.Navigate(base+"#/releases/"+ns+"/web"),
		textIs(`[data-testid=reason-Applied]`, v1.ReasonWaitingForSync),
		textHas(`[data-testid=cluster-diff]`, "Create ConfigMap "+ns+"/web-settings"),
		textHas(`[data-testid=cluster-diff]`, "Create Service "+ns+"/web"),
		textHas(`[data-testid=cluster-diff]`, `greeting: hello`))
	screenshot(t, ctx, "release-waiting-for-sync")

	run(t, ctx, "press Sync", chromedp.Click(chromedp.CSS(`[data-testid=sync]`)),
		textHas(`[data-testid=sync-progress]`, "Handled at"),
		textIs(`[data-testid=reason-Applied]`, v1.ReasonApplied),
		textIs(`[data-testid=reason-Healthy]`, v1.ReasonHealthy),
		textHas(`[data-testid=sync-progress]`, "Healthy Healthy"),
		textHas(`[data-testid=cluster-diff]`, "No differences"))
	rel := getRelease(t, ns, "web")
	if rel.Status.LastHandledSyncAt == nil || rel.Annotations[v1.AnnotationSyncRequestedAt] == "" {
		t.Errorf("the Sync button did not request a sync handled by the controller: %v", rel.Annotations)
	}
	// It approved the render whose diff the page showed, and says which.
	if got := rel.Annotations[v1.AnnotationSyncRequestedRender]; got != rel.Status.Render.Ref {
		t.Errorf("the Sync button approved render %q, want the render of the diff shown, %s", got, rel.Status.Render.Ref)
	}
	run(t, ctx, "the progress names the render", textIs(`[data-testid=sync-render]`, ShortRef(rel.Status.Render.Ref)))
	screenshot(t, ctx, "release-applied-healthy")
	// The list of every namespace, filtered to this one: the rows are virtualised,
	// and the other tests' namespaces may hold enough Releases to push this one out
	// of view.
	filter := chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		_, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(sessionStorage.setItem('convoy-filters', 'ns=`+ns+`'), true)`))
		return err
	})
	run(t, ctx, "open the list", filter, chromedp.Navigate(base+"#/"), textIs(row(ns, "web")+` [data-testid=healthy]`, v1.ReasonHealthy))
}

// The page's diff is of a render the Release no longer has when Sync is pressed (the
// page drew it just before the Release rendered anew): the server refuses the
// request (409), nothing is requested, and the page draws the current render's diff
// and asks for a new approval. The test makes the page's diff the older render's.
func TestUIBrowserSyncOfARenderNoLongerCurrent(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	createRenderedRelease(t, ns, "podinfo")
	base := startUI(t)
	ctx := browser(t)
	run(t, ctx, "open the Release", chromedp.Navigate(base+"#/releases/"+ns+"/podinfo"),
		textIs(`[data-testid=diff-render]`, "9a2b0c1d2e"),
		visible(`[data-testid=sync]`),
		// No Render object here: the diff ends in an error, which is fine; what
		// counts is that its request is over before the test replaces it.
		waitText(`section[aria-labelledby=h-diff]`, "the diff's answer", func(s string) bool {
			return s != "" && !strings.Contains(s, "Computing")
		}))
	older := chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		_, err := chromedp.Run(ctx, chromedp.Evaluate[bool](
			`(document.querySelector('release-page').clusterDiff = {to: '`+refA+`', objects: [], unchanged: 0}, true)`))
		return err
	})
	run(t, ctx, "the page shows the older render's diff", older,
		textIs(`[data-testid=diff-render]`, "4f1c2d3e4f"),
		textHas(`[data-testid=cluster-diff]`, "No differences"))
	run(t, ctx, "press Sync", chromedp.Click(chromedp.CSS(`[data-testid=sync]`)),
		textHas(`[data-testid=action-error]`, "The render changed"),
		textHas(`[data-testid=render-changed]`, "Review it and press Sync again"),
		textIs(`[data-testid=diff-render]`, "9a2b0c1d2e"))
	screenshot(t, ctx, "release-render-changed")
	if a := getRelease(t, ns, "podinfo").Annotations; a[v1.AnnotationSyncRequestedAt] != "" {
		t.Errorf("a refused Sync wrote %v", a)
	}
}

// A user without releases/sync sees no Sync, Force sync or Pin button, and
// nothing on the page sends a request the server refuses: every button is
// pressed and no answer is a 403.
func TestUIBrowserNoSyncButtonWithoutPermission(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	createRelease(t, ns, "podinfo")
	writeStatus(t, ns, "podinfo", func(r *v1.Release) {
		r.Status.Conditions = []metav1.Condition{appliedCondition(metav1.ConditionFalse, v1.ReasonWaitingForSync, "waiting for a sync")}
	})
	admin, err := client.New(env.admin, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	user := "viewer-" + testenv.RandomSuffix()
	testenv.Grant(t, testCtx(t), admin, ns, user,
		rbacv1.PolicyRule{APIGroups: []string{v1.GroupName}, Resources: []string{"releases", "renders", "releaseinventories"}, Verbs: []string{"get", "list", "watch"}})
	base := startUI(t, "--kubeconfig", userKubeconfig(t, user), "-n", ns)

	ctx := browser(t)
	var mu sync.Mutex
	var refused []string
	if err := chromedp.Listen(ctx, func(ev any) {
		if r, ok := ev.(*network.EventResponseReceived); ok && r.Response.Status == 403 {
			mu.Lock()
			refused = append(refused, r.Response.URL)
			mu.Unlock()
		}
	}); err != nil {
		t.Fatal(err)
	}
	run(t, ctx, "open the Release", chromedp.Navigate(base+"#/releases/"+ns+"/podinfo"),
		textIs(`[data-testid=reason-Applied]`, v1.ReasonWaitingForSync),
		visible(`.actions[data-access=loaded]`))
	buttons, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('main button')].map(b => b.dataset.testid || b.textContent.trim())`))
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range buttons {
		if b == "sync" || b == "force" || b == "pin-last" || b == "unpin" || b == "Pin" {
			t.Errorf("a user without releases/sync and releases/pin sees the button %q", b)
		}
	}
	pressed, err := chromedp.Run(ctx, chromedp.Evaluate[int](`(() => { const bs = [...document.querySelectorAll('main button')]; bs.forEach(b => b.click()); return bs.length; })()`))
	if err != nil {
		t.Fatal(err)
	}
	testenv.Consistently(t, testCtx(t), "no request of the page is refused", 2*time.Second, func() (bool, string) {
		mu.Lock()
		defer mu.Unlock()
		return len(refused) == 0, strings.Join(refused, ", ")
	})
	if a := getRelease(t, ns, "podinfo").Annotations[v1.AnnotationSyncRequestedAt]; a != "" {
		t.Errorf("the page requested a sync: %s", a)
	}
	t.Logf("pressed %d buttons: %v", pressed, buttons)
	screenshot(t, ctx, "release-read-only")
}

// At 1,000 Releases (CONVOY_UI_SCALE=1000, make test-ui-scale; skipped
// otherwise) the list loads, renders only the rows in view (virtualised), and
// still shows a status change at once.
func TestUIBrowserManyReleases(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("CONVOY_UI_SCALE"))
	if n <= 0 {
		t.Skip("set CONVOY_UI_SCALE=1000 (make test-ui-scale) to run the UI at that many Releases")
	}
	needCluster(t)
	ns := namespace(t)
	start := time.Now()
	var g sync.WaitGroup
	errs := make(chan error, n)
	sem := make(chan struct{}, 8)
	c := admin(t)
	for i := range n {
		g.Add(1)
		sem <- struct{}{}
		go func() {
			defer g.Done()
			defer func() { <-sem }()
			r := &v1.Release{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("app-%04d", i)},
				Spec:       v1.ReleaseSpec{Chart: v1.ChartSource{Repository: "https://charts.example.com", Name: "podinfo", Version: "6.7.1"}, ClusterWave: int32(i % 3)},
			}
			if err := c.rest.Post().Namespace(ns).Resource(v1.ResourceReleases).Body(r).Do(testCtx(t)).Error(); err != nil {
				errs <- err
			}
		}()
	}
	g.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("creating the Releases: %v", err)
	}
	t.Logf("created %d Releases in %s", n, time.Since(start).Round(time.Millisecond))

	base := startUI(t, "-n", ns)
	ctx := browser(t)
	start = time.Now()
	run(t, ctx, "load the list", chromedp.Navigate(base), textIs(`[data-testid=count-all]`, strconv.Itoa(n)), visible(row(ns, "app-0000")))
	t.Logf("the list of %d Releases showed in %s", n, time.Since(start).Round(time.Millisecond))
	rows, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('[data-release]').length`))
	if err != nil {
		t.Fatal(err)
	}
	if rows >= n/4 {
		t.Errorf("%d rows in the page for %d Releases: the list is not virtualised", rows, n)
	}
	t.Logf("%d rows rendered", rows)
	screenshot(t, ctx, "releases-many")

	start = time.Now()
	writeStatus(t, ns, "app-0000", func(r *v1.Release) {
		r.Status.Conditions = []metav1.Condition{appliedCondition(metav1.ConditionFalse, v1.ReasonWaitingForSync, "waiting")}
	})
	run(t, ctx, "a change shows", textIs(row(ns, "app-0000")+` [data-testid=applied]`, v1.ReasonWaitingForSync))
	t.Logf("a status change showed in %s", time.Since(start).Round(time.Millisecond))
	last := fmt.Sprintf("app-%04d", n-1)
	start = time.Now()
	run(t, ctx, "scroll to the last Release", chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		_, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => { const s = document.querySelector('lit-virtualizer'); s.scrollTop = s.scrollHeight; return true; })()`))
		return err
	}), visible(row(ns, last)))
	t.Logf("scrolled to the last of %d Releases in %s", n, time.Since(start).Round(time.Millisecond))
}
