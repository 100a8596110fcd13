package testenv_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"kumodo.io/convoy/internal/localcluster"
	"kumodo.io/convoy/internal/testenv"
)

// A cluster of StartClusters can be made unreachable both ways a test needs: its API server
// stopped (refused at once) and started again, and a Link in front of it that holds
// connections (a request through it times out) and passes again.
func TestClusterUnreachableAndBack(t *testing.T) {
	testenv.Integration(t)
	f, err := localcluster.StartClusters(t.Context(), localcluster.ClustersOptions{Clusters: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Stop() })
	c := f.Clusters[0]
	link, err := testenv.LinkTo(c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = link.Close() })
	kubeconfig, err := testenv.Kubeconfig(c, link.URL())
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	through, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	direct, err := kubernetes.NewForConfig(c.RestConfig())
	if err != nil {
		t.Fatal(err)
	}
	version := func(kube kubernetes.Interface, timeout time.Duration) error {
		ctx, cancel := context.WithTimeout(t.Context(), timeout)
		defer cancel()
		return kube.Discovery().RESTClient().Get().AbsPath("/version").Do(ctx).Error()
	}
	if err := version(through, 10*time.Second); err != nil {
		t.Fatalf("/version through the link: %v", err)
	}

	link.Hang()
	if err := version(through, time.Second); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("/version through the hanging link: %v; want the request's deadline", err)
	}
	if link.Open() == 0 {
		t.Error("the hanging link holds no connection")
	}
	link.Pass()
	testenv.Eventually(t, t.Context(), "/version through the link again", 10*time.Second, func() (bool, string) {
		err := version(through, 2*time.Second)
		return err == nil, errString(err)
	})

	if err := testenv.StopAPIServer(c); err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	if err := version(direct, 5*time.Second); err == nil || errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("/version of a stopped API server: %v; want an error at once", err)
	}
	if took := time.Since(started); took > 3*time.Second {
		t.Errorf("a stopped API server took %s to refuse", took)
	}
	if err := testenv.StartAPIServer(t.Context(), c, time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := version(through, 10*time.Second); err != nil {
		t.Errorf("/version through the link after the API server started again: %v", err)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
