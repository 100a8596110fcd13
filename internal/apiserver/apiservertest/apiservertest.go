// Package apiservertest runs convoy apiserver inside a test process against a
// local control plane (internal/localcluster) and registers it with the
// aggregator, so tests reach the convoy API through kube-apiserver as users do.
// Only tests import it.
package apiservertest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/apiserver"
	"kumodo.io/convoy/internal/localcluster"
	"kumodo.io/convoy/internal/testenv"
)

// Identity is the host-cluster user the in-process server authenticates as.
const Identity = "convoy-apiserver"

// Options name the registration. Each test package uses its own Service, so
// that a dry run of deploy/ finds convoy-system/convoy-apiserver free.
type Options struct {
	// Namespace and ServiceName of the ExternalName Service the APIService points at.
	Namespace, ServiceName string
	// EtcdPrefix is the start of the etcd prefix; a random suffix keeps runs apart.
	EtcdPrefix string
	// RegistrationTimeout bounds the wait for the APIService to become Available;
	// default apiserver.Registration's (1 minute).
	RegistrationTimeout time.Duration
	// WaitForDiscovery makes Start also wait until the host's discovery lists
	// convoy's resources: an Available APIService is not yet discoverable, and
	// REST mappers (a controller's) read discovery.
	WaitForDiscovery bool
}

// Start runs convoy apiserver in this process as the user Identity (granted the
// host access an aggregated server needs), with its objects under a fresh
// prefix of the cluster's etcd, and registers it. stop ends the server.
func Start(ctx context.Context, c *localcluster.Cluster, o Options) (stop func(), err error) {
	err = apiserver.GrantHostAccess(ctx, c.RestConfig(), rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: Identity})
	if err != nil {
		return nil, err
	}
	kubeconfig, err := c.UserKubeconfig(Identity)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	reg := apiserver.Registration{Namespace: o.Namespace, ServiceName: o.ServiceName, Port: port, Timeout: o.RegistrationTimeout}

	opts := apiserver.NewOptions()
	ro := opts.RecommendedOptions
	ro.SecureServing.Listener, ro.SecureServing.BindPort = ln, port
	ro.Etcd.StorageConfig.Transport.ServerList = []string{c.EtcdURL()}
	ro.Etcd.StorageConfig.Prefix = o.EtcdPrefix + "-" + randomSuffix()
	ro.Authentication.RemoteKubeConfigFile = kubeconfig
	ro.Authorization.RemoteKubeConfigFile = kubeconfig
	ro.CoreAPI.CoreAPIKubeconfigPath = kubeconfig
	opts.AlternateDNS = []string{reg.ServiceDNSName()}

	srv, err := opts.NewServer()
	if err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- srv.Run(runCtx) }()
	stop = func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				fmt.Fprintln(os.Stderr, "convoy apiserver stopped:", err)
			}
		case <-time.After(30 * time.Second):
		}
	}
	reg.CABundle = srv.CABundle()
	if err := apiserver.Register(ctx, c.RestConfig(), reg); err != nil {
		stop()
		return nil, err
	}
	if o.WaitForDiscovery {
		if err := waitForDiscovery(ctx, c.RestConfig()); err != nil {
			stop()
			return nil, err
		}
	}
	return stop, nil
}

// StartIn is Start for a package's TestMain (testenv.Main) whose tests use convoy's API
// through the aggregator: the registration is named after the package (namespace
// convoy-<name>, Service convoy-apiserver-<name>, etcd prefix /convoy-<name>), waits up
// to 2 minutes for it and for discovery (a controller's REST mapper reads it), and s
// stops the server after the tests.
func StartIn(s *testenv.Setup, c *localcluster.Cluster, name string) error {
	return StartWith(s, c, Options{
		Namespace: "convoy-" + name, ServiceName: "convoy-apiserver-" + name, EtcdPrefix: "/convoy-" + name,
		RegistrationTimeout: 2 * time.Minute, WaitForDiscovery: true,
	})
}

// StartWith starts convoy's API server on c with o (Start) until the tests are done.
func StartWith(s *testenv.Setup, c *localcluster.Cluster, o Options) error {
	stop, err := Start(s.Context(), c, o)
	if err != nil {
		return fmt.Errorf("start convoy's API server: %w", err)
	}
	s.Cleanup(stop)
	return nil
}

// waitForDiscovery waits until the discovery of the cluster of cfg lists the
// resources of convoy's group version (the aggregated discovery document lags
// behind the APIService's Available condition).
func waitForDiscovery(ctx context.Context, cfg *rest.Config) error {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	gv := convoyv1alpha1.SchemeGroupVersion.String()
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		_, lists, err := dc.ServerGroupsAndResources()
		if err != nil {
			return false, nil //nolint:nilerr // not discoverable yet: poll again
		}
		for _, l := range lists {
			if l.GroupVersion == gv && len(l.APIResources) > 0 {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("wait for discovery of %s: %w", gv, err)
	}
	return nil
}

func randomSuffix() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// MainOptions say what Main starts for a package's tests.
type MainOptions struct {
	// Name names the API server's registration (StartIn): the package's name.
	Name string
	// Cluster are the options of the local control plane.
	Cluster localcluster.Options
	// Host is set to the local control plane (nil with -short).
	Host **localcluster.Cluster
	// Charts, when set, is a folder of charts served as a Helm repository
	// (testenv.Setup.Charts) whose URL is written to ChartsURL.
	Charts    string
	ChartsURL *string
	// Then, when set, starts what else the package's tests share, after the rest.
	Then func(s *testenv.Setup) error
}

// Main is the TestMain of a package whose integration tests run against a local
// control plane with convoy's API server in this process (StartIn) and, usually, a
// chart repository: it quiets the logs (testenv.QuietLogs), starts them, runs o.Then
// and the tests (testenv.Main), and stops everything.
func Main(m *testing.M, o MainOptions) {
	testenv.QuietLogs()
	testenv.Main(m, func(s *testenv.Setup) error {
		host, err := s.Cluster("the local control plane", o.Cluster)
		if err != nil {
			return err
		}
		*o.Host = host
		if err := StartIn(s, host, o.Name); err != nil {
			return err
		}
		if o.Charts != "" {
			if *o.ChartsURL, err = s.Charts(o.Charts); err != nil {
				return err
			}
		}
		if o.Then != nil {
			return o.Then(s)
		}
		return nil
	})
}
