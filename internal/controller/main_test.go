package controller

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/apiserver"
	"kumodo.io/convoy/internal/localcluster"
)

// The package's integration tests run against a real local control plane with convoy's
// aggregated API server running in this process and registered with it. With -short
// only the pure tests run.

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
	c, err := localcluster.Start(ctx, localcluster.Options{})
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
	if err := startAPIServer(ctx, c); err != nil {
		return 0, err
	}
	if charts, err = newChartRepo(); err != nil {
		return 0, err
	}
	defer charts.close()
	return m.Run(), nil
}

// startAPIServer runs convoy's API server in this process on the local control plane's
// etcd, delegating authentication and authorization to it, and registers it.
func startAPIServer(ctx context.Context, c *localcluster.Cluster) error {
	reg := apiserver.Registration{Timeout: 2 * time.Minute}
	o := apiserver.NewOptions()
	ro := o.RecommendedOptions
	ro.Etcd.StorageConfig.Transport.ServerList = []string{c.EtcdURL()}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	ro.SecureServing.Listener = ln
	ro.SecureServing.BindAddress = net.ParseIP("127.0.0.1")
	ro.Authentication.RemoteKubeConfigFile = c.KubeconfigPath()
	ro.Authorization.RemoteKubeConfigFile = c.KubeconfigPath()
	ro.CoreAPI.CoreAPIKubeconfigPath = c.KubeconfigPath()
	o.AlternateDNS = []string{reg.ServiceDNSName()}
	srv, err := o.NewServer()
	if err != nil {
		return fmt.Errorf("build convoy's API server: %w", err)
	}
	go func() {
		if err := srv.Run(ctx); err != nil && ctx.Err() == nil {
			fmt.Fprintf(os.Stderr, "convoy's API server: %v\n", err)
		}
	}()
	reg.Port = srv.Port()
	reg.CABundle = srv.CABundle()
	if err := apiserver.Register(ctx, c.RestConfig(), reg); err != nil {
		return fmt.Errorf("register convoy's API server: %w", err)
	}
	// Available is not yet discoverable: wait until discovery lists the resources, as
	// the controller's REST mapper needs them.
	dc, err := discovery.NewDiscoveryClientForConfig(c.RestConfig())
	if err != nil {
		return err
	}
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		// The aggregated discovery document, as REST mappers read it, lags behind.
		_, lists, err := dc.ServerGroupsAndResources()
		if err != nil {
			return false, nil
		}
		for _, l := range lists {
			if l.GroupVersion == convoyv1alpha1.SchemeGroupVersion.String() && len(l.APIResources) > 0 {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("wait for discovery of %s: %w", convoyv1alpha1.SchemeGroupVersion, err)
	}
	return nil
}

// hostConfig is the admin configuration of the local control plane.
func hostConfig() *rest.Config { return controlPlane.RestConfig() }
