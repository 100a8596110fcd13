// Package tenancy_test proves the lockdown of issue 14 end to end: one local control
// plane, convoy's API server and one release controller started with
// --default-service-account=convoy-deployer, shared by every test. Each team gets a
// namespace whose ServiceAccount convoy-deployer may do anything in that namespace
// and nothing elsewhere, and a user who may only create Releases there and /sync
// them. Whatever the chart, the Release's spec or its mutations ask, the controller
// acts as that ServiceAccount: a request outside the team's rights is refused with
// a condition naming the object and the missing permission, and nothing of the
// render is applied.
//
// With -short nothing runs.
package tenancy_test

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/rest"

	"kumodo.io/convoy/internal/apiserver/apiservertest"
	"kumodo.io/convoy/internal/controller"
	"kumodo.io/convoy/internal/localcluster"
	"kumodo.io/convoy/internal/render"
	"kumodo.io/convoy/internal/render/chartrepo"
	"kumodo.io/convoy/internal/testenv"
)

// deployer is the controller's --default-service-account in these tests.
const deployer = "convoy-deployer"

var (
	// host is the local control plane; nil with -short.
	host *localcluster.Cluster
	// charts is the URL of the chart repository of testdata/charts.
	charts string
)

func TestMain(m *testing.M) {
	testenv.QuietLogs()
	testenv.Main(m, func(s *testenv.Setup) (err error) {
		if host, err = s.Cluster("the local control plane", localcluster.Options{}); err != nil {
			return err
		}
		stopAPIServer, err := apiservertest.Start(s.Context(), host, apiservertest.Options{
			Namespace: "convoy-tenancy", ServiceName: "convoy-apiserver-tenancy", EtcdPrefix: "/convoy-tenancy",
			RegistrationTimeout: 2 * time.Minute, WaitForDiscovery: true,
		})
		if err != nil {
			return errors.New("start convoy's API server: " + err.Error())
		}
		s.Cleanup(stopAPIServer)
		repo, err := chartrepo.Build("testdata/charts")
		if err != nil {
			return err
		}
		srv, err := chartrepo.Serve("127.0.0.1:0", repo)
		if err != nil {
			return err
		}
		s.Cleanup(func() { _ = srv.Close() })
		charts = srv.URL
		return startController(s, host.RestConfig())
	})
}

// startController runs the release controller on cfg, locked down, until the tests end.
func startController(s *testenv.Setup, cfg *rest.Config) error {
	mgr, err := controller.NewManager(cfg, controller.ManagerOptions{
		Resync: 10 * time.Minute, MetricsBindAddress: "0", HealthProbeBindAddress: "0",
	})
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "convoy-tenancy-charts-")
	if err != nil {
		return err
	}
	s.Cleanup(func() { _ = os.RemoveAll(dir) })
	renderer, err := render.New(render.Options{CacheDir: dir})
	if err != nil {
		return err
	}
	if _, err := controller.Setup(s.Context(), mgr, controller.Options{
		Renderer: renderer, Metrics: prometheus.NewRegistry(), DefaultServiceAccount: deployer,
	}); err != nil {
		return err
	}
	ctx, stop := context.WithCancel(s.Context())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	s.Cleanup(func() {
		stop()
		<-done
	})
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		return errors.New("the controller's cache did not sync")
	}
	return nil
}
