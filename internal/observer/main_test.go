package observer

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"k8s.io/klog/v2"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"kumodo.io/convoy/internal/apiserver/apiservertest"
	"kumodo.io/convoy/internal/localcluster"
	"kumodo.io/convoy/internal/render/chartrepo"
)

// The package's integration tests run against one real local control plane with
// workloads (kube-controller-manager, kube-scheduler and kwok's simulated nodes, so
// Deployments really become Available) and convoy's API server in this process. With
// -short only the unit tests run.

var (
	// controlPlane is the local control plane; nil with -short.
	controlPlane *localcluster.Cluster
	// chartsURL is the test Helm repository (testdata/charts).
	chartsURL string
)

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run())
	}
	klog.LogToStderr(false)
	klog.SetOutput(io.Discard)
	// CONVOY_TEST_LOG=1 shows the observer's (and controller's) log.
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
	c, err := localcluster.Start(ctx, localcluster.Options{Workloads: true, Nodes: 2})
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
	stopAPIServer, err := apiservertest.Start(ctx, c, apiservertest.Options{
		Namespace: "convoy-local", ServiceName: "convoy-apiserver-observer", EtcdPrefix: "/convoy",
		RegistrationTimeout: 2 * time.Minute, WaitForDiscovery: true,
	})
	if err != nil {
		return 0, fmt.Errorf("start convoy's API server: %w", err)
	}
	defer stopAPIServer()
	repo, err := chartrepo.Build("testdata/charts")
	if err != nil {
		return 0, err
	}
	charts := httptest.NewServer(repo)
	defer charts.Close()
	chartsURL = charts.URL
	return m.Run(), nil
}
