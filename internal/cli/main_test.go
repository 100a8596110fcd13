package cli

import (
	"os"
	"testing"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"kumodo.io/convoy/internal/apiserver/apiservertest"
	"kumodo.io/convoy/internal/localcluster"
	"kumodo.io/convoy/internal/testenv"
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
	testenv.Main(m, func(s *testenv.Setup) error {
		c, err := s.Cluster("the local control plane", localcluster.Options{Progress: os.Stderr})
		if err != nil {
			return err
		}
		dir, err := os.MkdirTemp("", "kubectl-convoy-test-")
		if err != nil {
			return err
		}
		s.Cleanup(func() { _ = os.RemoveAll(dir) })
		if err := apiservertest.StartWith(s, c, apiservertest.Options{
			Namespace: "convoy-cli-test", ServiceName: "convoy-apiserver-cli", EtcdPrefix: "/convoy-cli",
			// The controller of TestSyncWaitWithController maps convoy's kinds at start.
			WaitForDiscovery: true}); err != nil {
			return err
		}
		env = &struct {
			cluster    *localcluster.Cluster
			admin      *rest.Config
			kubeconfig string
			dir        string
		}{cluster: c, admin: c.RestConfig(), kubeconfig: c.KubeconfigPath(), dir: dir}
		return nil
	})
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
