package testenv

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"kumodo.io/convoy/internal/localcluster"
)

// Clusters starts a set of target control planes (localcluster.StartClusters), stopped
// after the tests: opts.Etcd is usually the host's EtcdURL, so that N targets cost N
// kube-apiservers and no etcd. what names it in errors ("the target clusters").
func (s *Setup) Clusters(what string, opts localcluster.ClustersOptions) (*localcluster.Clusters, error) {
	f, err := localcluster.StartClusters(s.ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", what, err)
	}
	s.Cleanup(func() {
		if err := f.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "stop %s: %v\n", what, err)
		}
	})
	return f, nil
}

// StopAPIServer makes c unreachable: its kube-apiserver is killed and connections to
// its port are refused until StartAPIServer. Not for a supervised cluster (Supervise
// starts it again).
func StopAPIServer(c *localcluster.Cluster) error {
	return c.Kill("kube-apiserver")
}

// StartAPIServer starts c's kube-apiserver again on the same port and returns once it
// answers /readyz, within timeout.
func StartAPIServer(ctx context.Context, c *localcluster.Cluster, timeout time.Duration) error {
	if err := c.Restart("kube-apiserver"); err != nil {
		return err
	}
	kube, err := kubernetes.NewForConfig(c.RestConfig())
	if err != nil {
		return err
	}
	var last error
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		var body []byte
		body, last = kube.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(rctx)
		return last == nil && string(body) == "ok", nil
	})
	if err != nil {
		return fmt.Errorf("kube-apiserver of %s is not ready again (last: %v): %w", c.Host(), last, err)
	}
	return nil
}

// LinkTo puts a Link in front of c's kube-apiserver. Close it when done.
func LinkTo(c *localcluster.Cluster) (*Link, error) {
	u, err := url.Parse(c.Host())
	if err != nil {
		return nil, err
	}
	return NewLink(u.Host)
}

// Kubeconfig is c's admin kubeconfig (its credentials inline, as a Cluster's Secret
// needs) with server in place of c's own address when set, such as a Link's URL.
func Kubeconfig(c *localcluster.Cluster, server string) ([]byte, error) {
	cfg, err := clientcmd.LoadFromFile(c.KubeconfigPath())
	if err != nil {
		return nil, err
	}
	if server != "" {
		for _, cl := range cfg.Clusters {
			cl.Server = server
		}
	}
	return clientcmd.Write(*cfg)
}
