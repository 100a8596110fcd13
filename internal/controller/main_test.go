package controller

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"kumodo.io/convoy/internal/apiserver/apiservertest"
	"kumodo.io/convoy/internal/localcluster"
)

// The package's integration tests run against a real local control plane with convoy's
// aggregated API server running in this process and registered with it. The control
// plane runs workloads (kube-controller-manager, kube-scheduler, kwok with one
// simulated node) so that hook Jobs complete. With -short only the pure tests run.

var (
	// controlPlane is the local control plane; nil with -short.
	controlPlane *localcluster.Cluster
	// charts is the package's Helm repository.
	charts *chartRepo
)

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run())
	}
	// The in-process API server and client-go log through klog; keep the test output
	// for the tests.
	klog.LogToStderr(false)
	klog.SetOutput(io.Discard)
	// CONVOY_TEST_LOG=1 shows the controller's log.
	logger := logr.Discard()
	if os.Getenv("CONVOY_TEST_LOG") != "" {
		logger = funcr.New(func(prefix, args string) { fmt.Fprintln(os.Stderr, prefix, args) }, funcr.Options{Verbosity: 1})
	}
	ctrllog.SetLogger(logger)
	code, err := runIntegration(m)
	if err != nil {
		fmt.Fprintf(os.Stderr, "integration setup: %v\n", err)
		os.Exit(1)
	}
	os.Exit(code)
}

func runIntegration(m *testing.M) (int, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, err := localcluster.Start(ctx, localcluster.Options{Workloads: true})
	if err != nil {
		return 0, fmt.Errorf("start the local control plane: %w", err)
	}
	controlPlane = c
	defer func() {
		cancel()
		if err := c.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "stop the local control plane: %v\n", err)
		}
	}()
	// convoy's API server in this process, registered with the aggregator and
	// discoverable, as the controller's REST mapper needs.
	stopAPIServer, err := apiservertest.Start(ctx, c, apiservertest.Options{
		Namespace: "convoy-local", ServiceName: "convoy-apiserver-controller", EtcdPrefix: "/convoy",
		RegistrationTimeout: 2 * time.Minute, WaitForDiscovery: true,
	})
	if err != nil {
		return 0, fmt.Errorf("start convoy's API server: %w", err)
	}
	defer stopAPIServer()
	if charts, err = newChartRepo(); err != nil {
		return 0, err
	}
	defer charts.close()
	return m.Run(), nil
}

// hostConfig is the admin configuration of the local control plane.
func hostConfig() *rest.Config { return controlPlane.RestConfig() }
