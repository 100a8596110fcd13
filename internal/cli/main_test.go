package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
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

// env is the local control plane with convoy apiserver that the integration tests
// (integration_test.go) run the plugin against; nil with -short.
var env *struct {
	cluster    *localcluster.Cluster
	admin      *rest.Config
	kubeconfig string
	dir        string
}

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if testing.Short() {
		return m.Run()
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, err := localcluster.Start(ctx, localcluster.Options{Progress: os.Stderr})
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting the local control plane:", err)
		return 1
	}
	defer func() { _ = c.Stop() }()
	dir, err := os.MkdirTemp("", "kubectl-convoy-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = os.RemoveAll(dir) }()
	stop, err := startConvoyAPIServer(ctx, c, dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting convoy apiserver:", err)
		return 1
	}
	defer stop()
	env = &struct {
		cluster    *localcluster.Cluster
		admin      *rest.Config
		kubeconfig string
		dir        string
	}{cluster: c, admin: c.RestConfig(), kubeconfig: c.KubeconfigPath(), dir: dir}
	return m.Run()
}

// startConvoyAPIServer runs convoy apiserver in this process as the user
// convoy-apiserver, with its objects under a fresh prefix of the cluster's etcd, and
// registers it with the aggregator through an APIService.
func startConvoyAPIServer(ctx context.Context, c *localcluster.Cluster, dir string) (func(), error) {
	const identity = "convoy-apiserver"
	err := apiserver.GrantHostAccess(ctx, c.RestConfig(), rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: identity})
	if err != nil {
		return nil, err
	}
	userCfg, err := c.UserConfig(identity)
	if err != nil {
		return nil, err
	}
	kubeconfig := filepath.Join(dir, "apiserver.kubeconfig")
	if err := writeKubeconfig(kubeconfig, userCfg); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	reg := apiserver.Registration{Namespace: "convoy-cli-test", ServiceName: "convoy-apiserver-cli", Port: port}

	opts := apiserver.NewOptions()
	ro := opts.RecommendedOptions
	ro.SecureServing.Listener, ro.SecureServing.BindPort = ln, port
	ro.Etcd.StorageConfig.Transport.ServerList = []string{c.EtcdURL()}
	ro.Etcd.StorageConfig.Prefix = "/convoy-cli-" + randomSuffix()
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
	stop := func() {
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
	return stop, nil
}

// writeKubeconfig writes a kubeconfig of cfg (client certificates) to path.
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
