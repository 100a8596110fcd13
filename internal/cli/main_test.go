package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"testing"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"kumodo.io/convoy/internal/apiserver/apiservertest"
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
	stop, err := apiservertest.Start(ctx, c, apiservertest.Options{
		Namespace: "convoy-cli-test", ServiceName: "convoy-apiserver-cli", EtcdPrefix: "/convoy-cli",
		// The controller of TestSyncWaitWithController maps convoy's kinds at start.
		WaitForDiscovery: true})
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
