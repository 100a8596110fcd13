package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/controller"
	"kumodo.io/convoy/internal/localcluster"
	"kumodo.io/convoy/internal/testenv"
	"kumodo.io/convoy/internal/wiring"
)

// kubectl convoy release sync NAME --wait against the real release controller (in
// this process, limited to the test's namespace) and the example chart of
// examples/charts: a manual Release is rendered and waits for a sync
// (WaitingForSync); the plugin requests the sync, follows the reconcile and exits 0
// once the controller applied the render and recorded the request as handled.
func TestSyncWaitWithController(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	charts := serveExampleCharts(t)
	startController(t, ns)

	r := &v1.Release{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hello"},
		Spec: v1.ReleaseSpec{
			Chart:  v1.ChartSource{Repository: charts, Name: "hello", Version: ">=0.1.0"},
			Values: &runtime.RawExtension{Raw: []byte(`{"replicaCount":2}`)},
		},
	}
	if err := admin(t).rest.Post().Namespace(ns).Resource(v1.ResourceReleases).Body(r).Do(testCtx(t)).Error(); err != nil {
		t.Fatalf("creating the Release: %v", err)
	}
	t.Cleanup(func() { deleteRelease(t, ns, "hello") })

	// Manual mode: rendered, not applied.
	waitForApplied(t, ns, "hello", metav1.ConditionFalse, v1.ReasonWaitingForSync)
	kube := kubernetes.NewForConfigOrDie(env.admin)
	if _, err := kube.AppsV1().Deployments(ns).Get(testCtx(t), "hello", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("before the sync, Deployment hello: err %v, want NotFound", err)
	}

	start := time.Now()
	res := plugin(t, nil, "release", "sync", "hello", "--wait", "--timeout", "90s", "-n", ns)
	t.Logf("release sync --wait took %s", time.Since(start).Round(time.Millisecond))
	if res.code != ExitOK {
		t.Fatalf("exit %d, want 0\nstdout %s\nstderr %s", res.code, res.stdout, res.stderr)
	}
	got := getRelease(t, ns, "hello")
	requested := got.Annotations[v1.AnnotationSyncRequestedAt]
	line := fmt.Sprintf("release.convoy.kumodo.io/hello sync of render %s requested at %s", ShortRef(got.Status.Render.Ref), requested)
	if !strings.Contains(res.stdout, line) || !strings.Contains(res.stdout, "sync "+requested+" handled") {
		t.Errorf("stdout %q, want %q and that it was handled", res.stdout, line)
	}
	if bound := got.Annotations[v1.AnnotationSyncRequestedRender]; bound != got.Status.Render.Ref {
		t.Errorf("%s = %q, want the render the plugin approved, status.render.ref %s", v1.AnnotationSyncRequestedRender, bound, got.Status.Render.Ref)
	}
	applied := apimeta.FindStatusCondition(got.Status.Conditions, v1.ConditionApplied)
	if applied == nil || applied.Status != metav1.ConditionTrue || applied.Reason != v1.ReasonApplied {
		t.Errorf("Applied condition %+v, want True/Applied", applied)
	}
	if got.Status.LastHandledSyncAt == nil || v1.FormatSyncTime(got.Status.LastHandledSyncAt.Time) != requested {
		t.Errorf("lastHandledSyncAt %v, want the request %s", got.Status.LastHandledSyncAt, requested)
	}
	if got.Status.LastSuccessful == nil || got.Status.Render == nil || got.Status.LastSuccessful.RenderRef != got.Status.Render.Ref {
		t.Errorf("lastSuccessful %+v, want the current render %+v", got.Status.LastSuccessful, got.Status.Render)
	}
	d, err := kube.AppsV1().Deployments(ns).Get(testCtx(t), "hello", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("after the sync, Deployment hello: %v", err)
	}
	if d.Spec.Replicas == nil || *d.Spec.Replicas != 2 {
		t.Errorf("Deployment hello replicas %v, want 2 (the Release's values)", d.Spec.Replicas)
	}
}

// serveExampleCharts serves examples/charts as a Helm repository and returns its URL.
func serveExampleCharts(t *testing.T) string {
	t.Helper()
	root, err := localcluster.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return testenv.ServeCharts(t, filepath.Join(root, "examples", "charts"))
}

// startController runs the release controller in this process for the Releases of
// ns, as the admin of the local control plane, until the test ends.
func startController(t *testing.T, ns string) {
	t.Helper()
	ctrllog.SetLogger(logr.Discard())
	waitForDiscovery(t)
	mgr, err := controller.NewManager(env.admin, controller.ManagerOptions{
		Resync:                 10 * time.Minute,
		MetricsBindAddress:     "0",
		HealthProbeBindAddress: "0",
		Namespaces:             []string{ns},
	})
	if err != nil {
		t.Fatal(err)
	}
	fetcher := testenv.Fetcher(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if _, err := wiring.Setup(ctx, mgr, wiring.Options{Release: controller.Options{
		Source: fetcher, Metrics: prometheus.NewRegistry(), SkipNameValidation: true,
	}}); err != nil {
		t.Fatal(err)
	}
	testenv.StartManager(t, ctx, "controller", mgr)
	testenv.WaitForCacheSync(t, testCtx(t), "the controller", mgr)
}

// waitForDiscovery waits until discovery lists convoy's resources, as the
// controller's REST mapper reads them.
func waitForDiscovery(t *testing.T) {
	t.Helper()
	dc := discovery.NewDiscoveryClientForConfigOrDie(env.admin)
	err := wait.PollUntilContextTimeout(testCtx(t), 100*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		l, err := dc.ServerResourcesForGroupVersion(v1.SchemeGroupVersion.String())
		return err == nil && len(l.APIResources) > 0, nil
	})
	if err != nil {
		t.Fatalf("discovery does not list %s: %v", v1.SchemeGroupVersion, err)
	}
}

// waitForApplied polls the Release until its Applied condition has status and reason.
func waitForApplied(t *testing.T, ns, name string, status metav1.ConditionStatus, reason string) {
	t.Helper()
	var last *metav1.Condition
	err := wait.PollUntilContextTimeout(testCtx(t), 100*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
		r, err := admin(t).GetRelease(ctx, ns, name)
		if err != nil {
			return false, nil
		}
		last = apimeta.FindStatusCondition(r.Status.Conditions, v1.ConditionApplied)
		return last != nil && last.Status == status && last.Reason == reason, nil
	})
	if err != nil {
		t.Fatalf("Release %s/%s: Applied %+v, want %s/%s", ns, name, last, status, reason)
	}
}

// deleteRelease deletes the Release and waits until the controller has removed its
// finalizer, so that the namespace can go.
func deleteRelease(t *testing.T, ns, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := admin(t)
	if err := c.rest.Delete().Namespace(ns).Resource(v1.ResourceReleases).Name(name).Do(ctx).Error(); err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("deleting Release %s/%s: %v", ns, name, err)
		return
	}
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		_, err := c.GetRelease(ctx, ns, name)
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Errorf("Release %s/%s still there a minute after its deletion", ns, name)
	}
}
