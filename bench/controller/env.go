package main

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
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/apiserver"
	"kumodo.io/convoy/internal/localcluster"
	"kumodo.io/convoy/internal/render/chartrepo"
)

// scheme decodes what convoy apiserver sends.
var scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(convoyv1alpha1.AddToScheme(s))
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
	return s
}()

// env is one running control plane (with kwok nodes), convoy apiserver, convoy
// controller and the chart repository.
type env struct {
	cluster *localcluster.Cluster
	admin   *rest.Config
	convoy  *rest.RESTClient
	kube    kubernetes.Interface
	charts  *chartrepo.Server

	// convoy apiserver's /metrics, straight to its port.
	apiMetrics    *http.Client
	apiMetricsURL string
	// convoy controller's /metrics (plain HTTP on loopback).
	ctlMetricsURL string

	procs []namedPID
}

type namedPID struct {
	name string
	pid  int
}

// buildConvoy builds ./cmd/convoy into dir once and returns the binary.
func buildConvoy(ctx context.Context, dir string) (string, error) {
	root, err := localcluster.RepoRoot()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "convoy")
	fmt.Fprintln(os.Stderr, "Building ./cmd/convoy...")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/convoy")
	cmd.Dir, cmd.Stdout, cmd.Stderr = root, os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build ./cmd/convoy: %w", err)
	}
	return bin, nil
}

func startEnv(ctx context.Context, cfg config, convoyBin string, n int) (_ *env, err error) {
	fmt.Fprintln(os.Stderr, "Starting the local control plane with simulated nodes...")
	dir := ""
	if cfg.stateDir != "" {
		if dir, err = filepath.Abs(filepath.Join(cfg.stateDir, strconv.Itoa(n))); err != nil {
			return nil, err
		}
	}
	c, err := localcluster.Start(ctx, localcluster.Options{Dir: dir, Workloads: true, Nodes: cfg.nodes, Progress: os.Stderr, StartTimeout: 5 * time.Minute})
	if err != nil {
		return nil, fmt.Errorf("starting the local control plane: %w", err)
	}
	e := &env{cluster: c}
	defer func() {
		if err != nil {
			e.stop()
		}
	}()
	for _, pid := range c.PIDs() {
		e.procs = append(e.procs, namedPID{procName(pid), pid})
	}
	host := c.RestConfig()

	// convoy apiserver, as bench/apiserver and convoy dev start it.
	const identity = "convoy-apiserver"
	if err := apiserver.GrantHostAccess(ctx, host, rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: identity}); err != nil {
		return nil, err
	}
	kubeconfig, err := c.UserKubeconfig(identity)
	if err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	certDir := filepath.Join(c.Dir(), "convoy-apiserver-certs")
	reg := apiserver.Registration{Namespace: "convoy-bench", ServiceName: "convoy-apiserver", Port: port, Timeout: 3 * time.Minute}
	args := []string{"apiserver",
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--etcd-servers=" + c.EtcdURL(),
		"--etcd-prefix=/convoy-bench",
		"--kubeconfig=" + kubeconfig,
		"--authentication-kubeconfig=" + kubeconfig,
		"--authorization-kubeconfig=" + kubeconfig,
		"--tls-alternate-dns=" + reg.ServiceDNSName(),
		"--cert-dir=" + certDir,
	}
	certFile := filepath.Join(certDir, "apiserver.crt")
	if err := e.run(ctx, "convoy-apiserver", convoyBin, args, func(context.Context) bool {
		b, err := os.ReadFile(certFile)
		return err == nil && len(b) > 0
	}); err != nil {
		return nil, err
	}
	if reg.CABundle, err = os.ReadFile(certFile); err != nil {
		return nil, err
	}
	fmt.Fprintln(os.Stderr, "Registering the APIService...")
	if err := apiserver.Register(ctx, host, reg); err != nil {
		return nil, fmt.Errorf("registering convoy apiserver: %w", err)
	}

	e.admin = c.RestConfig()
	e.admin.QPS, e.admin.Burst = 2000, 4000
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
	mc := rest.CopyConfig(e.admin)
	mc.Host = fmt.Sprintf("https://127.0.0.1:%d", port)
	mc.CAData, mc.CAFile, mc.ServerName = reg.CABundle, "", ""
	if e.apiMetrics, err = rest.HTTPClientFor(mc); err != nil {
		return nil, err
	}
	e.apiMetricsURL = mc.Host + "/metrics"

	// The chart repository, on a free loopback port.
	root, err := localcluster.RepoRoot()
	if err != nil {
		return nil, err
	}
	repo, err := chartrepo.Build(filepath.Join(root, "bench", "controller", "testdata"))
	if err != nil {
		return nil, err
	}
	if e.charts, err = chartrepo.Serve("127.0.0.1:0", repo); err != nil {
		return nil, err
	}

	// convoy controller, with the admin kubeconfig.
	mport, err := freePort()
	if err != nil {
		return nil, err
	}
	hport, err := freePort()
	if err != nil {
		return nil, err
	}
	e.ctlMetricsURL = fmt.Sprintf("http://127.0.0.1:%d/metrics", mport)
	readyz := fmt.Sprintf("http://127.0.0.1:%d/readyz", hport)
	hc := &http.Client{Timeout: 2 * time.Second}
	if err := e.run(ctx, "convoy-controller", convoyBin, []string{"controller",
		"--kubeconfig=" + c.KubeconfigPath(),
		"--chart-cache-dir=" + filepath.Join(c.Dir(), "charts"),
		"--metrics-bind-address=127.0.0.1:" + strconv.Itoa(mport),
		"--health-probe-bind-address=127.0.0.1:" + strconv.Itoa(hport),
		"--resync=" + cfg.resync.String(),
		"--concurrency=" + strconv.Itoa(cfg.concurrency),
	}, func(ctx context.Context) bool {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, readyz, nil)
		if err != nil {
			return false
		}
		resp, err := hc.Do(req)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}); err != nil {
		return nil, err
	}
	return e, nil
}

// run starts one of convoy's processes beside the control plane and records its pid.
func (e *env) run(ctx context.Context, name, bin string, args []string, ready func(context.Context) bool) error {
	before := e.cluster.PIDs()
	fmt.Fprintln(os.Stderr, "Starting", name+":", bin, strings.Join(args, " "))
	if err := e.cluster.Run(ctx, localcluster.Process{Name: name, Path: bin, Args: args, Ready: ready}); err != nil {
		return fmt.Errorf("starting %s (log: %s/%s.log): %w", name, e.cluster.LogDir(), name, err)
	}
	after := e.cluster.PIDs()
	if len(after) != len(before)+1 {
		return fmt.Errorf("unexpected processes after starting %s: %v", name, after)
	}
	e.procs = append(e.procs, namedPID{name, after[len(after)-1]})
	return nil
}

func (e *env) stop() {
	if e.charts != nil {
		_ = e.charts.Close()
	}
	if e.cluster != nil {
		if err := e.cluster.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping the control plane:", err)
		}
	}
}

// kubeMetrics is kube-apiserver's /metrics, read as the admin.
func (e *env) kubeMetrics(ctx context.Context) (string, error) {
	b, err := e.kube.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	return string(b), err
}

// convoyMetrics is convoy apiserver's /metrics; "" when it does not answer.
func (e *env) convoyMetrics(ctx context.Context) string {
	return httpGet(ctx, e.apiMetrics, e.apiMetricsURL)
}

// controllerMetrics is convoy controller's /metrics; "" when it does not answer.
func (e *env) controllerMetrics(ctx context.Context) string {
	return httpGet(ctx, http.DefaultClient, e.ctlMetricsURL)
}

func httpGet(ctx context.Context, c *http.Client, url string) string {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return ""
	}
	resp, err := c.Do(req)
	if err != nil {
		fmt.Fprintf(os.Stderr, "GET %s: %v\n", url, err)
		return ""
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		fmt.Fprintf(os.Stderr, "GET %s: %s %v\n", url, resp.Status, err)
		return ""
	}
	return string(b)
}

func (e *env) ensureNamespace(ctx context.Context, ns string) error {
	_, err := e.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", ns, err)
	}
	return nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
