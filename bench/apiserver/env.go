package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
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
)

// serveArg is the first argument of this program re-executed as convoy apiserver.
const serveArg = "apiserver"

// serve runs convoy apiserver with `convoy apiserver`'s flags (cmd/convoy/apiserver.go
// does the same: apiserver.NewOptions, AddFlags, Run).
func serve(args []string) int {
	opts := apiserver.NewOptions()
	fs := newFlagSet()
	opts.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := opts.Run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "convoy apiserver:", err)
		return 1
	}
	return 0
}

// scheme decodes what the server sends, like a client of the convoy API.
var scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(convoyv1alpha1.AddToScheme(s))
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
	return s
}()

// env is the running control plane and convoy apiserver.
type env struct {
	cluster *localcluster.Cluster
	admin   *rest.Config // admin (system:masters) of the host cluster, high QPS
	convoy  *rest.RESTClient
	kube    kubernetes.Interface
	// metrics GETs convoy apiserver's /metrics directly (not through the aggregator).
	metrics   *http.Client
	metricURL string
	// pids of the processes whose CPU time and RSS the report shows.
	procs []namedPID
}

type namedPID struct {
	name string
	pid  int
}

func startEnv(ctx context.Context, cfg config) (_ *env, err error) {
	fmt.Fprintln(os.Stderr, "Starting the local control plane...")
	c, err := localcluster.Start(ctx, localcluster.Options{Dir: cfg.stateDir, Progress: os.Stderr})
	if err != nil {
		return nil, fmt.Errorf("starting the local control plane: %w", err)
	}
	e := &env{cluster: c}
	defer func() {
		if err != nil {
			e.stop()
		}
	}()
	cpPIDs := c.PIDs() // etcd, kube-apiserver

	const identity = "convoy-apiserver"
	host := c.RestConfig()
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
	bin, args := cfg.convoyBin, []string{"apiserver"}
	if bin == "" {
		if bin, err = os.Executable(); err != nil {
			return nil, err
		}
		args = []string{serveArg}
	}
	args = append(args,
		"--bind-address=127.0.0.1",
		"--secure-port="+strconv.Itoa(port),
		"--etcd-servers="+c.EtcdURL(),
		"--etcd-prefix=/convoy-bench",
		"--kubeconfig="+kubeconfig,
		"--authentication-kubeconfig="+kubeconfig,
		"--authorization-kubeconfig="+kubeconfig,
		"--tls-alternate-dns="+reg.ServiceDNSName(),
		"--cert-dir="+certDir,
	)
	certFile := filepath.Join(certDir, "apiserver.crt")
	fmt.Fprintln(os.Stderr, "Starting convoy apiserver:", bin, args)
	err = c.Run(ctx, localcluster.Process{Name: "convoy-apiserver", Path: bin, Args: args, Ready: func(context.Context) bool {
		b, err := os.ReadFile(certFile)
		return err == nil && len(b) > 0
	}})
	if err != nil {
		return nil, fmt.Errorf("starting convoy apiserver: %w", err)
	}
	all := c.PIDs()
	if len(cpPIDs) != 2 || len(all) != 3 {
		return nil, fmt.Errorf("unexpected processes of the control plane: %v", all)
	}
	e.procs = []namedPID{
		{"convoy-apiserver", all[2]},
		{"kube-apiserver", cpPIDs[1]},
		{"etcd", cpPIDs[0]},
		{"bench client", os.Getpid()},
	}
	if reg.CABundle, err = os.ReadFile(certFile); err != nil {
		return nil, err
	}
	fmt.Fprintln(os.Stderr, "Registering the APIService...")
	if err := apiserver.Register(ctx, host, reg); err != nil {
		return nil, fmt.Errorf("registering convoy apiserver: %w", err)
	}

	e.admin = c.RestConfig()
	e.admin.QPS, e.admin.Burst = float32(cfg.qps), cfg.burst
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

	// convoy apiserver's /metrics, straight to its port, as the admin (its client
	// CA is the host cluster's; authorization is delegated).
	mc := rest.CopyConfig(e.admin)
	mc.Host = fmt.Sprintf("https://127.0.0.1:%d", port)
	mc.CAData, mc.CAFile = reg.CABundle, ""
	mc.ServerName = ""
	if e.metrics, err = rest.HTTPClientFor(mc); err != nil {
		return nil, err
	}
	e.metricURL = mc.Host + "/metrics"
	if _, err := e.scrape(ctx); err != nil {
		return nil, fmt.Errorf("reading convoy apiserver's metrics: %w", err)
	}
	return e, nil
}

func (e *env) stop() {
	if e.cluster != nil {
		if err := e.cluster.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping the control plane:", err)
		}
	}
}

// scrape returns convoy apiserver's metrics text.
func (e *env) scrape(ctx context.Context) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.metricURL, nil)
	if err != nil {
		return "", err
	}
	resp, err := e.metrics.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: %s: %.200s", e.metricURL, resp.Status, b)
	}
	return string(b), nil
}

// ensureNamespace creates ns unless it exists.
func (e *env) ensureNamespace(ctx context.Context, ns string) error {
	_, err := e.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", ns, err)
	}
	return nil
}

// newRelease is a valid Release.
func newRelease(ns, name string) *convoyv1alpha1.Release {
	return &convoyv1alpha1.Release{
		TypeMeta:   metav1.TypeMeta{APIVersion: convoyv1alpha1.SchemeGroupVersion.String(), Kind: "Release"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"bench": "convoy"}},
		Spec: convoyv1alpha1.ReleaseSpec{
			Chart: convoyv1alpha1.ChartSource{Repository: "https://charts.example.com", Name: "podinfo", Version: "6.7.1"},
		},
	}
}

func (e *env) create(ctx context.Context, r *convoyv1alpha1.Release) error {
	return e.convoy.Post().Namespace(r.Namespace).Resource("releases").Body(r).Do(ctx).Error()
}

func (e *env) get(ctx context.Context, ns, name string) (*convoyv1alpha1.Release, error) {
	out := &convoyv1alpha1.Release{}
	return out, e.convoy.Get().Namespace(ns).Resource("releases").Name(name).Do(ctx).Into(out)
}

// statusCode is the HTTP status of err: 0 for nil, -1 when no response came.
func statusCode(err error) int {
	if err == nil {
		return 0
	}
	var s apierrors.APIStatus
	if errors.As(err, &s) {
		return int(s.Status().Code)
	}
	return -1
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
