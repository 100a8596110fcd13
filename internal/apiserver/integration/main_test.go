package integration_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"kumodo.io/convoy/internal/apiserver"
	"kumodo.io/convoy/internal/localcluster"
)

// env is the package's control plane and convoy apiserver.
var env struct {
	cluster *localcluster.Cluster
	admin   *rest.Config
}

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, err := localcluster.Start(ctx, localcluster.Options{Progress: os.Stderr})
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting the local control plane:", err)
		return 1
	}
	defer func() { _ = c.Stop() }()
	env.cluster, env.admin = c, c.RestConfig()

	stop, err := startConvoyAPIServer(ctx, c)
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting convoy apiserver:", err)
		return 1
	}
	defer stop()
	return m.Run()
}

// startConvoyAPIServer runs convoy apiserver in this process, as the user
// convoy-apiserver of the host cluster, stores its objects under a fresh etcd prefix
// of the cluster's etcd, and registers it with the aggregator.
func startConvoyAPIServer(ctx context.Context, c *localcluster.Cluster) (stop func(), err error) {
	const identity = "convoy-apiserver"
	err = apiserver.GrantHostAccess(ctx, c.RestConfig(), rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: identity})
	if err != nil {
		return nil, err
	}
	userCfg, err := c.UserConfig(identity)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "convoy-apiserver-test-")
	if err != nil {
		return nil, err
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := writeKubeconfig(kubeconfig, userCfg); err != nil {
		return nil, err
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	// Not convoy-system/convoy-apiserver: deploy/apiserver's manifests are dry-run
	// against this cluster and must not collide with the local registration.
	reg := apiserver.Registration{Namespace: "convoy-local", ServiceName: "convoy-apiserver-local", Port: port}

	opts := apiserver.NewOptions()
	ro := opts.RecommendedOptions
	ro.SecureServing.Listener, ro.SecureServing.BindPort = ln, port
	ro.Etcd.StorageConfig.Transport.ServerList = []string{c.EtcdURL()}
	ro.Etcd.StorageConfig.Prefix = "/convoy-" + randomSuffix()
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
		_ = os.RemoveAll(dir)
	}
	reg.CABundle = srv.CABundle()
	if err := apiserver.Register(ctx, c.RestConfig(), reg); err != nil {
		stop()
		return nil, err
	}
	return stop, nil
}

func writeKubeconfig(path string, cfg *rest.Config) error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["host"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["user"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData}
	kc.Contexts["default"] = &clientcmdapi.Context{Cluster: "host", AuthInfo: "user"}
	kc.CurrentContext = "default"
	return clientcmd.WriteToFile(*kc, path)
}

func randomSuffix() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
