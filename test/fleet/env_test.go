package fleet_test

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"kumodo.io/convoy/internal/controller"
	"kumodo.io/convoy/internal/dev/inprocess"
	"kumodo.io/convoy/internal/hostmanager"
	"kumodo.io/convoy/internal/observer"
	"kumodo.io/convoy/internal/testenv/convoytest"
)

// startConvoy runs the release controller and the observer on namespace ns until the
// end of the test, each a manager of its own (as `convoy controller` and `convoy
// observer` are processes of their own) with their default options, but metrics
// registries of their own, so that a test may start them more than once.
func startConvoy(t *testing.T, ctx context.Context, ns string) {
	t.Helper()
	startInProcess(t, ctx, host.RestConfig(), inprocess.Options{
		// Only the events under test reconcile: no resync within the test.
		Manager:       hostmanager.Options{Resync: 10 * time.Minute, Namespaces: []string{ns}},
		ChartCacheDir: t.TempDir(),
		Controller:    controller.Options{Metrics: prometheus.NewRegistry()},
		Observer:      observer.Options{Metrics: prometheus.NewRegistry()},
	})
}

// startInProcess runs the controller and the observer on host in this process
// (inprocess.Start) until the end of the test.
func startInProcess(t *testing.T, ctx context.Context, host *rest.Config, o inprocess.Options) {
	t.Helper()
	convoytest.Start(t, ctx, host, o)
}

// setUp starts a test: a context of timeout, the admin's client and a new namespace
// named after prefix.
func setUp(t *testing.T, timeout time.Duration, prefix string) (context.Context, client.Client, string) {
	t.Helper()
	return convoytest.SetUp(t, host.RestConfig(), timeout, prefix)
}
