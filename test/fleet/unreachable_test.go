package fleet_test

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/dev"
	"kumodo.io/convoy/internal/testenv"
)

// releasesPerCluster is the number of Releases on each target cluster: more than the
// controller's and the observer's workers (4 each), so that workers stuck on the
// unreachable cluster's Releases would leave none for the others.
const releasesPerCluster = 6

// delayAllowed is the goal: one cluster unreachable delays no Release of another
// cluster by more than this.
const delayAllowed = 5 * time.Second

// loadFactor scales the time a change takes with every cluster up: the machine runs
// other work beside the test, so the same change takes longer at another moment.
const loadFactor = 1.5

// One target cluster that cannot be reached — (a) its kube-apiserver stopped, (b) a
// link in front of it that holds every connection — delays no Release of another
// cluster: a change of every Release of the fleet (new values; the manual ones, every
// second, then synced), the unreachable cluster's included, makes those of the other
// clusters Ready within 5 s of the time the same change took with every cluster up
// (times the load factor). Once the cluster is back, its
// Releases get the change too, and the process's goroutines (the controller's and the
// observer's) come back near what they were before the fault.
func TestOneUnreachableClusterDelaysNoOther(t *testing.T) {
	ctx, c, ns := setUp(t, 15*time.Minute, "fleet")
	startConvoy(t, ctx, ns)
	links := registerFleet(t, ctx, ns)
	var rels [fleetSize][]types.NamespacedName
	for i := range fleetSize {
		for j := range releasesPerCluster {
			key := types.NamespacedName{Namespace: ns, Name: fmt.Sprintf("r%d-%d", i+1, j)}
			createRelease(t, ctx, c, key, fleet.Name(i), "v0", manual(key))
			rels[i] = append(rels[i], key)
		}
	}
	all := slices.Concat(rels[:]...)
	waitReadyAll(t, ctx, c, all, "v0", 3*time.Minute)

	// With every cluster up: the time of a change, and the goroutines at rest.
	up := changeAndTime(t, ctx, c, all, "v1", 3*time.Minute)
	base := slowest(up)
	baseGoroutines := settledGoroutines(t, ctx)
	t.Logf("every cluster up: slowest Release Ready after %s; %d goroutines", base.Round(time.Millisecond), baseGoroutines)
	limit := time.Duration(float64(base)*loadFactor) + delayAllowed

	down := fleet.Clusters[0]
	faults := []struct {
		name        string
		break_, fix func() error
	}{
		{"kube-apiserver stopped", func() error { return testenv.StopAPIServer(down) },
			func() error { return testenv.StartAPIServer(ctx, down, 2*time.Minute) }},
		{"link holds connections", func() error { links[0].Hang(); return nil },
			func() error { links[0].Pass(); return nil }},
	}
	for n, f := range faults {
		value := fmt.Sprintf("v%d", n+2)
		if err := f.break_(); err != nil {
			t.Fatalf("%s: %v", f.name, err)
		}
		// Every Release changes, the unreachable cluster's first: their reconciles
		// are queued before the others'.
		times := changeAndTime(t, ctx, c, slices.Concat(rels[1:]...), value, limit+time.Minute, rels[0]...)
		t.Logf("cluster %s unreachable (%s): slowest Release of another cluster Ready after %s (with every cluster up %s; allowed %s)",
			fleet.Name(0), f.name, slowest(times).Round(time.Millisecond), base.Round(time.Millisecond), limit.Round(time.Millisecond))
		for key, took := range times {
			if took > limit {
				t.Errorf("cluster %s unreachable (%s): Release %s of another cluster Ready after %s, more than %s (%s with every cluster up, ×%.1f, + %s)",
					fleet.Name(0), f.name, key.Name, took.Round(time.Millisecond), limit.Round(time.Millisecond), base.Round(time.Millisecond), loadFactor, delayAllowed)
			}
		}
		if t.Failed() {
			t.Logf("goroutines while %s: %d", f.name, runtime.NumGoroutine())
		}
		if err := f.fix(); err != nil {
			t.Fatalf("end %s: %v", f.name, err)
		}
		waitReadyAll(t, ctx, c, rels[0], value, 3*time.Minute)
		noLeak(t, ctx, f.name, baseGoroutines)
	}
}

// goroutineMargin is how far above the count before a fault the goroutines may stay
// once the cluster is back: informers and connections come and go at rest too.
func goroutineMargin(base int) int { return base/10 + 25 }

// noLeak waits until the process has no more goroutines than before the fault, within
// a margin.
func noLeak(t *testing.T, ctx context.Context, fault string, base int) {
	t.Helper()
	want := base + goroutineMargin(base)
	var now int
	testenv.Eventually(t, ctx, fmt.Sprintf("goroutines back near %d after %s", base, fault), 2*time.Minute, func() (bool, string) {
		now = runtime.NumGoroutine()
		return now <= want, fmt.Sprintf("%d goroutines, at most %d wanted (%d before the fault)", now, want, base)
	})
	t.Logf("after %s: %d goroutines (%d before)", fault, now, base)
}

// settledGoroutines is the goroutine count once it stops falling for a while.
func settledGoroutines(t *testing.T, ctx context.Context) int {
	t.Helper()
	low, since := runtime.NumGoroutine(), time.Now()
	testenv.Eventually(t, ctx, "goroutines to settle", time.Minute, func() (bool, string) {
		if n := runtime.NumGoroutine(); n < low {
			low, since = n, time.Now()
		}
		return time.Since(since) > 3*time.Second, fmt.Sprintf("%d goroutines", low)
	})
	return low
}

// registerFleet registers each cluster of the fleet as a Cluster whose kubeconfig
// points at a Link in front of it, creates ns on it, and waits until the controller
// finds every Cluster Ready. The Links are closed at the end of the test.
func registerFleet(t *testing.T, ctx context.Context, ns string) []*testenv.Link {
	t.Helper()
	links := make([]*testenv.Link, fleetSize)
	for i, cl := range fleet.Clusters {
		link, err := testenv.LinkTo(cl)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = link.Close() })
		links[i] = link
		kubeconfig, err := testenv.Kubeconfig(cl, link.URL())
		if err != nil {
			t.Fatal(err)
		}
		target, err := kubernetes.NewForConfig(cl.RestConfig())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := target.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create namespace %s on %s: %v", ns, fleet.Name(i), err)
		}
		if err := dev.RegisterCluster(ctx, host.RestConfig(), fleet.Name(i), map[string]string{"fleet-test": "true"}, kubeconfig); err != nil {
			t.Fatal(err)
		}
	}
	for i := range fleetSize {
		if err := dev.WaitClusterReady(ctx, host.RestConfig(), fleet.Name(i), 2*time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	return links
}

// manual is whether the Release key is in manual mode: every second one, whose changes
// are applied by POST releases/<name>/sync.
func manual(key types.NamespacedName) bool {
	var i, j int
	_, _ = fmt.Sscanf(key.Name, "r%d-%d", &i, &j)
	return j%2 == 1
}

// createRelease creates a Release key of the configmap chart on cluster with the
// value, automatic unless manual (then synced at once).
func createRelease(t *testing.T, ctx context.Context, c client.Client, key types.NamespacedName, cluster, value string, manual bool) {
	t.Helper()
	rel := &v1.Release{
		ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name},
		Spec: v1.ReleaseSpec{
			Cluster:    cluster,
			Chart:      v1.ChartSource{Repository: charts, Name: "configmap", Version: "0.1.0"},
			Values:     &k8sruntime.RawExtension{Raw: fmt.Appendf(nil, `{"value":%q}`, value)},
			SyncPolicy: v1.SyncPolicy{Automatic: ptr.To(!manual)},
		},
	}
	if err := c.Create(ctx, rel); err != nil {
		t.Fatal(err)
	}
	if manual {
		testenv.PostSync(t, ctx, host.RestConfig(), key.Namespace, key.Name, false)
	}
}

// setValue changes the Release's values (a merge patch: the controller writes its
// status meanwhile), syncs it when it is manual, and returns its new generation.
func setValue(t *testing.T, ctx context.Context, c client.Client, key types.NamespacedName, value string) int64 {
	t.Helper()
	rel := &v1.Release{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
	patch := fmt.Appendf(nil, `{"spec":{"values":{"value":%q}}}`, value)
	if err := c.Patch(ctx, rel, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
	if manual(key) {
		testenv.PostSync(t, ctx, host.RestConfig(), key.Namespace, key.Name, false)
	}
	return rel.Generation
}

// readyAt reports whether the Release is Ready at generation (its status observed it,
// and its last applied render is the one the observer assessed), and what it is.
func readyAt(ctx context.Context, c client.Client, key types.NamespacedName, generation int64) (bool, string) {
	rel, inv := &v1.Release{}, &v1.ReleaseInventory{}
	if err := c.Get(ctx, key, rel); err != nil {
		return false, err.Error()
	}
	if err := c.Get(ctx, key, inv); err != nil {
		return false, err.Error()
	}
	ready := apimeta.FindStatusCondition(rel.Status.Conditions, v1.ConditionReady)
	last := ""
	if rel.Status.LastSuccessful != nil {
		last = rel.Status.LastSuccessful.RenderRef
	}
	ok := ready != nil && ready.Status == metav1.ConditionTrue && ready.ObservedGeneration == generation &&
		rel.Status.ObservedGeneration == generation && last != "" && inv.Status.RenderRef == last
	return ok, fmt.Sprintf("%s: Ready %v, generation %d observed %d, last applied %q, assessed %q",
		key.Name, ready, generation, rel.Status.ObservedGeneration, last, inv.Status.RenderRef)
}

// changeAndTime sets value on the Releases also (not timed) and then on timed, and
// returns how long each of timed took from its change to Ready at it; it fails t when
// one is not Ready within timeout.
func changeAndTime(t *testing.T, ctx context.Context, c client.Client, timed []types.NamespacedName, value string,
	timeout time.Duration, also ...types.NamespacedName) map[types.NamespacedName]time.Duration {
	t.Helper()
	for _, key := range also {
		setValue(t, ctx, c, key, value)
	}
	changed := make(map[types.NamespacedName]time.Time, len(timed))
	generations := make(map[types.NamespacedName]int64, len(timed))
	for _, key := range timed {
		changed[key] = time.Now()
		generations[key] = setValue(t, ctx, c, key, value)
	}
	took := make(map[types.NamespacedName]time.Duration, len(timed))
	testenv.Eventually(t, ctx, fmt.Sprintf("%d Releases Ready with %q", len(timed), value), timeout, func() (bool, string) {
		var waiting []string
		for _, key := range timed {
			if _, done := took[key]; done {
				continue
			}
			ok, state := readyAt(ctx, c, key, generations[key])
			if !ok {
				waiting = append(waiting, state)
				continue
			}
			took[key] = time.Since(changed[key])
		}
		if len(waiting) > 0 {
			return false, fmt.Sprintf("%d not Ready, such as %s", len(waiting), waiting[0])
		}
		return true, ""
	})
	return took
}

// waitReadyAll waits until every Release of keys is Ready at its current generation
// with value applied.
func waitReadyAll(t *testing.T, ctx context.Context, c client.Client, keys []types.NamespacedName, value string, timeout time.Duration) {
	t.Helper()
	testenv.Eventually(t, ctx, fmt.Sprintf("%d Releases Ready with %q", len(keys), value), timeout, func() (bool, string) {
		for _, key := range keys {
			rel := &v1.Release{}
			if err := c.Get(ctx, key, rel); err != nil {
				return false, err.Error()
			}
			if ok, state := readyAt(ctx, c, key, rel.Generation); !ok {
				return false, state
			}
			if got := string(rel.Spec.Values.Raw); got != fmt.Sprintf(`{"value":%q}`, value) {
				return false, fmt.Sprintf("%s: values %s", key.Name, got)
			}
		}
		return true, ""
	})
}

// slowest is the longest of times.
func slowest(times map[types.NamespacedName]time.Duration) time.Duration {
	var max time.Duration
	for _, d := range times {
		max = maxDuration(max, d)
	}
	return max
}

func maxDuration(a, b time.Duration) time.Duration {
	if a > b {
		return a
	}
	return b
}
