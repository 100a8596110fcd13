package chaos

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/apiserver"
	"kumodo.io/convoy/internal/cli"
	"kumodo.io/convoy/internal/localcluster"
)

// scheme decodes what convoy apiserver sends.
var scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(convoyv1alpha1.AddToScheme(s))
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
	return s
}()

// The names of convoy's processes, as the faults and the report name them.
const (
	procAPIServer  = "convoy-apiserver"
	procController = "convoy-controller"
	procObserver   = "convoy-observer"
	procEtcd       = "etcd"
	procKubeAPI    = "kube-apiserver"
)

// env is one running system under test: the control plane, convoy's three
// processes, the chart repository and the proxy in front of it.
type env struct {
	cluster *localcluster.Cluster
	admin   *rest.Config
	kube    kubernetes.Interface
	convoy  *rest.RESTClient // convoy.kumodo.io/v1alpha1, JSON, as the admin
	cli     *cli.Client
	repo    *flakyRepo
	proxy   *proxy
	log     *eventLog

	bin string
	// metrics of each convoy process (the apiserver's needs the admin's client).
	metricsURL map[string]string
	readyURL   map[string]string
	apiMetrics *http.Client
}

// startEnv starts everything; stop with env.stop. On error nothing is left running.
func startEnv(ctx context.Context, bin, dir string, nodes int, log *eventLog) (_ *env, err error) {
	e := &env{bin: bin, log: log, metricsURL: map[string]string{}, readyURL: map[string]string{}}
	defer func() {
		if err != nil {
			e.stop()
		}
	}()
	if e.repo, err = newFlakyRepo(filepath.Join("testdata", "charts"), log); err != nil {
		return nil, err
	}
	if e.proxy, err = newProxy(e.repo.addr(), log); err != nil {
		return nil, err
	}
	log.printf("Starting the local control plane with %d kwok nodes", nodes)
	e.cluster, err = localcluster.Start(ctx, localcluster.Options{Dir: dir, Workloads: true, Nodes: nodes, StartTimeout: 5 * time.Minute})
	if err != nil {
		return nil, fmt.Errorf("starting the local control plane: %w", err)
	}
	e.admin = e.cluster.RestConfig()
	e.admin.QPS, e.admin.Burst = 500, 1000
	if e.kube, err = kubernetes.NewForConfig(e.admin); err != nil {
		return nil, err
	}
	cc := rest.CopyConfig(e.admin)
	cc.GroupVersion = &convoyv1alpha1.SchemeGroupVersion
	cc.APIPath = "/apis"
	cc.NegotiatedSerializer = serializer.WithoutConversionCodecFactory{CodecFactory: serializer.NewCodecFactory(scheme)}
	cc.ContentType = runtime.ContentTypeJSON
	if e.convoy, err = rest.RESTClientFor(cc); err != nil {
		return nil, err
	}
	if e.cli, err = cli.NewClient(e.admin); err != nil {
		return nil, err
	}
	if err := e.startAPIServer(ctx); err != nil {
		return nil, err
	}
	for _, p := range []struct{ name, command string }{{procController, "controller"}, {procObserver, "observer"}} {
		if err := e.startComponent(ctx, p.name, p.command); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// startAPIServer runs convoy apiserver on the cluster's etcd, registered through an
// APIService, as convoy dev does.
func (e *env) startAPIServer(ctx context.Context) error {
	host := e.cluster.RestConfig()
	if err := apiserver.GrantHostAccess(ctx, host, rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: procAPIServer}); err != nil {
		return err
	}
	kubeconfig, err := e.cluster.UserKubeconfig(procAPIServer)
	if err != nil {
		return err
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	certDir := filepath.Join(e.cluster.Dir(), "convoy-apiserver-certs")
	reg := apiserver.Registration{Namespace: "convoy-chaos", ServiceName: procAPIServer, Port: port, Timeout: 2 * time.Minute}
	certFile := filepath.Join(certDir, "apiserver.crt")
	err = e.cluster.Run(ctx, localcluster.Process{Name: procAPIServer, Path: e.bin, Args: []string{"apiserver",
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--etcd-servers=" + e.cluster.EtcdURL(),
		"--etcd-prefix=/convoy-chaos",
		"--kubeconfig=" + kubeconfig,
		"--authentication-kubeconfig=" + kubeconfig,
		"--authorization-kubeconfig=" + kubeconfig,
		"--tls-alternate-dns=" + reg.ServiceDNSName(),
		"--cert-dir=" + certDir,
	}, Ready: func(context.Context) bool {
		b, err := os.ReadFile(certFile)
		return err == nil && len(b) > 0
	}})
	if err != nil {
		return fmt.Errorf("starting convoy apiserver (log: %s): %w", e.cluster.LogDir(), err)
	}
	if reg.CABundle, err = os.ReadFile(certFile); err != nil {
		return err
	}
	if err := apiserver.Register(ctx, host, reg); err != nil {
		return fmt.Errorf("registering convoy apiserver: %w", err)
	}
	mc := rest.CopyConfig(e.admin)
	mc.Host = fmt.Sprintf("https://127.0.0.1:%d", port)
	mc.CAData, mc.CAFile, mc.ServerName = reg.CABundle, "", ""
	if e.apiMetrics, err = rest.HTTPClientFor(mc); err != nil {
		return err
	}
	e.metricsURL[procAPIServer] = mc.Host + "/metrics"
	e.readyURL[procAPIServer] = mc.Host + "/readyz"
	return nil
}

// startComponent runs `convoy <command>` with the admin kubeconfig, its default flags,
// and metrics and health probes on free loopback ports; it returns once /readyz answers.
func (e *env) startComponent(ctx context.Context, name, command string) error {
	mport, err := freePort()
	if err != nil {
		return err
	}
	hport, err := freePort()
	if err != nil {
		return err
	}
	args := []string{command,
		"--kubeconfig=" + e.cluster.KubeconfigPath(),
		"--metrics-bind-address=127.0.0.1:" + strconv.Itoa(mport),
		"--health-probe-bind-address=127.0.0.1:" + strconv.Itoa(hport),
	}
	if command == "controller" {
		args = append(args, "--chart-cache-dir="+filepath.Join(e.cluster.Dir(), "charts"))
	}
	e.metricsURL[name] = fmt.Sprintf("http://127.0.0.1:%d/metrics", mport)
	e.readyURL[name] = fmt.Sprintf("http://127.0.0.1:%d/readyz", hport)
	e.log.printf("Starting %s", name)
	err = e.cluster.Run(ctx, localcluster.Process{Name: name, Path: e.bin, Args: args, Ready: func(ctx context.Context) bool {
		return e.ready(ctx, name)
	}})
	if err != nil {
		return fmt.Errorf("starting %s (log: %s/%s.log): %w", name, e.cluster.LogDir(), name, err)
	}
	return nil
}

// ready says whether the process name answers its readiness check: /readyz for
// convoy's processes, a read through the aggregator for convoy apiserver, /readyz
// for kube-apiserver, a read for etcd (through kube-apiserver).
func (e *env) ready(ctx context.Context, name string) bool {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	switch name {
	case procAPIServer:
		return e.convoy.Get().Resource(convoyv1alpha1.ResourceReleases).Param("limit", "1").Do(ctx).Error() == nil
	case procKubeAPI, procEtcd:
		body, err := e.kube.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		return err == nil && string(body) == "ok"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.readyURL[name], nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// waitReady polls ready(name) every 200 ms for up to timeout.
func (e *env) waitReady(ctx context.Context, name string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		if e.ready(ctx, name) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s is not ready %s after its restart (log: %s/%s.log)", name, timeout, e.cluster.LogDir(), name)
		case <-tick.C:
		}
	}
}

// metrics is the /metrics text of a convoy process; "" when it does not answer.
func (e *env) metrics(ctx context.Context, name string) string {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	c := http.DefaultClient
	if name == procAPIServer {
		c = e.apiMetrics
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.metricsURL[name], nil)
	if err != nil {
		return ""
	}
	resp, err := c.Do(req)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		return ""
	}
	return string(b)
}

// kubeMetrics is kube-apiserver's /metrics.
func (e *env) kubeMetrics(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	b, err := e.kube.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return ""
	}
	return string(b)
}

func (e *env) stop() {
	if e.cluster != nil {
		if err := e.cluster.Stop(); err != nil {
			e.log.printf("Stopping the control plane: %v", err)
		}
	}
	if e.proxy != nil {
		e.proxy.close()
	}
	if e.repo != nil {
		e.repo.close()
	}
}

// buildConvoy builds ./cmd/convoy into dir and returns the binary's path.
func buildConvoy(ctx context.Context, dir string) (string, error) {
	root, err := localcluster.RepoRoot()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "convoy")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/convoy")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/convoy: %w\n%s", err, out)
	}
	return bin, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
