package fleet_test

import (
	"context"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"kumodo.io/convoy/internal/controller"
	"kumodo.io/convoy/internal/hostmanager"
	"kumodo.io/convoy/internal/observer"
	"kumodo.io/convoy/internal/render"
	"kumodo.io/convoy/internal/testenv"
)

// startConvoy runs the release controller and the observer on namespace ns until the
// end of the test, each a manager of its own (as `convoy controller` and `convoy
// observer` are processes of their own) with their default options.
func startConvoy(t *testing.T, ctx context.Context, ns string) {
	t.Helper()
	opts := hostmanager.Options{
		// Only the events under test reconcile: no resync within the test.
		Resync:                 10 * time.Minute,
		MetricsBindAddress:     "0",
		HealthProbeBindAddress: "0",
		Namespaces:             []string{ns},
	}
	ctlMgr, err := controller.NewManager(host.RestConfig(), opts)
	if err != nil {
		t.Fatal(err)
	}
	renderer, err := render.New(render.Options{CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := controller.Setup(ctx, ctlMgr, controller.Options{Renderer: renderer, SkipNameValidation: true}); err != nil {
		t.Fatal(err)
	}
	obsMgr, err := observer.NewManager(host.RestConfig(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := observer.Setup(obsMgr, observer.Options{SkipNameValidation: true}); err != nil {
		t.Fatal(err)
	}
	for _, m := range []manager.Manager{ctlMgr, obsMgr} {
		run(t, ctx, m)
	}
}

// run starts mgr and stops it at the end of the test.
func run(t *testing.T, ctx context.Context, mgr manager.Manager) {
	t.Helper()
	ctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		t.Fatal("a manager's cache did not sync")
	}
}

// setUp starts a test: a context of timeout, the admin's client and a new namespace
// named after prefix.
func setUp(t *testing.T, timeout time.Duration, prefix string) (context.Context, client.Client, string) {
	t.Helper()
	testenv.Integration(t)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	scheme, err := hostmanager.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	c := testenv.Client(t, host.RestConfig(), scheme)
	return ctx, c, testenv.Namespace(t, ctx, c, prefix, nil)
}
