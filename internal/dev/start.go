package dev

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/rest"

	"kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/apiserver"
	"kumodo.io/convoy/internal/localcluster"
)

// The one way to start convoy's processes beside a local cluster: `convoy dev`
// (Components), the benchmarks (bench/internal/benchenv) and the chaos harness
// (test/chaos) call Start or its three parts, so that a flag or a process is added
// here once. Each process is a localcluster process: its log is
// <cluster log dir>/<name>.log, and the cluster's Kill, Restart and Supervise take it
// by name.

// The default names of convoy's processes, which are also their identities when they
// act as users of their own.
const (
	APIServerName  = "convoy-apiserver"
	ControllerName = "convoy-controller"
	ObserverName   = "convoy-observer"
)

// StartOptions say which of convoy's processes Start runs, and how: convoy apiserver
// when APIServer is set, then a convoy controller per Controllers entry (replicas or
// shards), then a convoy observer per Observers entry.
type StartOptions struct {
	APIServer   *APIServerOptions
	Controllers []ProcessOptions
	Observers   []ProcessOptions
}

// Processes are what Start started, in the order of StartOptions.
type Processes struct {
	APIServer   *APIServer
	Controllers []*Process
	Observers   []*Process
}

// Start runs the processes of o beside c, in order, each ready before the next
// starts. On error, the processes it started keep running until c stops.
func Start(ctx context.Context, c *localcluster.Cluster, o StartOptions) (*Processes, error) {
	out := &Processes{}
	var err error
	if o.APIServer != nil {
		if out.APIServer, err = StartAPIServer(ctx, c, *o.APIServer); err != nil {
			return nil, err
		}
	}
	for _, po := range o.Controllers {
		p, err := StartController(ctx, c, po)
		if err != nil {
			return nil, err
		}
		out.Controllers = append(out.Controllers, p)
	}
	for _, po := range o.Observers {
		p, err := StartObserver(ctx, c, po)
		if err != nil {
			return nil, err
		}
		out.Observers = append(out.Observers, p)
	}
	return out, nil
}

// APIServerOptions say how StartAPIServer runs convoy apiserver.
type APIServerOptions struct {
	// Name names the process and the user it acts as (granted
	// apiserver.GrantHostAccess); default APIServerName.
	Name string
	// Convoy is the convoy binary; empty: this executable. Env is added to its
	// environment.
	Convoy string
	Env    []string
	// CertDir receives its self-signed serving certificate; it is emptied first (a
	// certificate of an earlier run may name another Service). Default
	// <cluster dir>/convoy-apiserver-certs.
	CertDir string
	// EtcdServers is its --etcd-servers; default the cluster's etcd.
	EtcdServers string
	// EtcdPrefix is its --etcd-prefix; default "/convoy".
	EtcdPrefix string
	// Registration names the Service that the APIService points at and bounds the
	// wait for it to be Available (zero fields: apiserver.Registration's defaults);
	// StartAPIServer sets its Port and CABundle.
	Registration apiserver.Registration
	// Args are more flags.
	Args []string
}

// APIServer is a running convoy apiserver, registered with the aggregator.
type APIServer struct {
	Name string
	Port int
	// URL is its own address, https://127.0.0.1:<Port>, not the aggregator's.
	URL string
	// CABundle is the self-signed certificate it serves with.
	CABundle []byte
}

// Direct is cfg (its credentials) pointed at convoy apiserver's own port rather than
// at kube-apiserver's aggregator: for its /metrics and /readyz.
func (a *APIServer) Direct(cfg *rest.Config) *rest.Config {
	d := rest.CopyConfig(cfg)
	d.Host = a.URL
	d.CAData, d.CAFile, d.ServerName = a.CABundle, "", ""
	return d
}

// certTimeout bounds the wait for convoy apiserver's serving certificate.
const certTimeout = 2 * time.Minute

// StartAPIServer runs `convoy apiserver` beside c on c's etcd under o.EtcdPrefix,
// with its own identity, on a free loopback port, and registers it with the
// aggregator (apiserver.Register) once it has written its serving certificate.
func StartAPIServer(ctx context.Context, c *localcluster.Cluster, o APIServerOptions) (*APIServer, error) {
	name := cmp.Or(o.Name, APIServerName)
	convoy, err := convoyBinary(o.Convoy)
	if err != nil {
		return nil, err
	}
	host := c.RestConfig()
	if err := apiserver.GrantHostAccess(ctx, host, rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: name}); err != nil {
		return nil, err
	}
	kubeconfig, err := c.UserKubeconfig(name)
	if err != nil {
		return nil, err
	}
	port, err := localcluster.FreePort()
	if err != nil {
		return nil, err
	}
	certDir := cmp.Or(o.CertDir, filepath.Join(c.Dir(), "convoy-apiserver-certs"))
	if err := os.RemoveAll(certDir); err != nil {
		return nil, err
	}
	reg := o.Registration
	reg.Port = port
	args := append([]string{
		"apiserver",
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--etcd-servers=" + cmp.Or(o.EtcdServers, c.EtcdURL()),
		"--etcd-prefix=" + cmp.Or(o.EtcdPrefix, "/convoy"),
		"--kubeconfig=" + kubeconfig,
		"--authentication-kubeconfig=" + kubeconfig,
		"--authorization-kubeconfig=" + kubeconfig,
		"--tls-alternate-dns=" + reg.ServiceDNSName(),
		"--cert-dir=" + certDir,
	}, o.Args...)
	certFile := filepath.Join(certDir, "apiserver.crt")
	waitCtx, cancel := context.WithTimeout(ctx, certTimeout)
	defer cancel()
	err = c.Run(waitCtx, localcluster.Process{Name: name, Path: convoy, Args: args, Env: o.Env, Ready: func(context.Context) bool {
		b, err := os.ReadFile(certFile)
		return err == nil && len(b) > 0
	}})
	if err != nil {
		return nil, fmt.Errorf("start convoy apiserver, which should write its serving certificate to %s (log: %s/%s.log): %w",
			certFile, c.LogDir(), name, err)
	}
	if reg.CABundle, err = os.ReadFile(certFile); err != nil {
		return nil, err
	}
	if err := apiserver.Register(ctx, host, reg); err != nil {
		return nil, fmt.Errorf("register convoy apiserver: %w", err)
	}
	return &APIServer{Name: name, Port: port, URL: "https://127.0.0.1:" + strconv.Itoa(port), CABundle: reg.CABundle}, nil
}

// ProcessOptions say how StartController, StartObserver or StartProcess run one of
// convoy's processes that serve a health probe.
type ProcessOptions struct {
	// Name names the process; default ControllerName, ObserverName, or
	// "convoy-<command>".
	Name string
	// Convoy is the convoy binary; empty: this executable. Env is added to its
	// environment.
	Convoy string
	Env    []string
	// Identity, when set, is the user the process acts as, with a kubeconfig of its
	// own; StartController and StartObserver first grant it what `convoy dev` grants
	// (GrantController, GrantObserver). Empty: Kubeconfig.
	Identity string
	// Kubeconfig is the process's --kubeconfig when Identity is empty; empty: the
	// cluster admin's.
	Kubeconfig string
	// Metrics serves /metrics on a free loopback port (Process.MetricsURL); false:
	// no metrics endpoint.
	Metrics bool
	// ReadyPath is the path of the health probe that says the process is ready;
	// default /readyz.
	ReadyPath string
	// ChartCacheDir is convoy controller's --chart-cache-dir; default
	// <cluster dir>/charts.
	ChartCacheDir string
	// DefaultServiceAccount, when set, is the lockdown of the controller and the
	// observer (--default-service-account).
	DefaultServiceAccount string
	// Args are more flags.
	Args []string
}

// Process is one of convoy's processes that StartProcess started.
type Process struct {
	Name string
	// PID is the process's pid when it was ready (a restart gives it another).
	PID int
	// MetricsURL is its /metrics; empty without ProcessOptions.Metrics.
	MetricsURL string
	// ReadyURL is its readiness probe (ProcessOptions.ReadyPath).
	ReadyURL string
}

// StartController runs `convoy controller` beside c (StartProcess), with its chart
// cache in o.ChartCacheDir; with o.Identity it first grants that user ControllerRules
// and, for dev, cluster-admin (GrantController).
func StartController(ctx context.Context, c *localcluster.Cluster, o ProcessOptions) (*Process, error) {
	o.Name = cmp.Or(o.Name, ControllerName)
	if o.Identity != "" {
		if err := grantController(ctx, c.RestConfig(), o.Identity); err != nil {
			return nil, err
		}
	}
	o.Args = append([]string{"--chart-cache-dir=" + cmp.Or(o.ChartCacheDir, filepath.Join(c.Dir(), "charts"))}, o.Args...)
	return StartProcess(ctx, c, "controller", o)
}

// StartObserver runs `convoy observer` beside c (StartProcess); with o.Identity it
// first grants that user ObserverRules and ObserverTargetRules (GrantObserver).
func StartObserver(ctx context.Context, c *localcluster.Cluster, o ProcessOptions) (*Process, error) {
	o.Name = cmp.Or(o.Name, ObserverName)
	if o.Identity != "" {
		if err := grantObserver(ctx, c.RestConfig(), o.Identity); err != nil {
			return nil, err
		}
	}
	return StartProcess(ctx, c, "observer", o)
}

// StartProcess runs `convoy <command>` beside c with o's kubeconfig, its metrics
// endpoint on a free loopback port or none, a health probe on another, the lockdown
// and o.Args, and returns once GET <probe><ReadyPath> answers 200 (ctx bounds the
// wait). It grants nothing: StartController and StartObserver do.
func StartProcess(ctx context.Context, c *localcluster.Cluster, command string, o ProcessOptions) (*Process, error) {
	p := &Process{Name: cmp.Or(o.Name, "convoy-"+command)}
	convoy, err := convoyBinary(o.Convoy)
	if err != nil {
		return nil, err
	}
	kubeconfig := cmp.Or(o.Kubeconfig, c.KubeconfigPath())
	if o.Identity != "" {
		if kubeconfig, err = c.UserKubeconfig(o.Identity); err != nil {
			return nil, err
		}
	}
	ports, err := localcluster.FreePorts(2)
	if err != nil {
		return nil, err
	}
	metrics := "0"
	if o.Metrics {
		metrics = "127.0.0.1:" + strconv.Itoa(ports[0])
		p.MetricsURL = "http://" + metrics + "/metrics"
	}
	p.ReadyURL = "http://127.0.0.1:" + strconv.Itoa(ports[1]) + cmp.Or(o.ReadyPath, "/readyz")
	args := []string{
		command,
		"--kubeconfig=" + kubeconfig,
		"--metrics-bind-address=" + metrics,
		"--health-probe-bind-address=127.0.0.1:" + strconv.Itoa(ports[1]),
	}
	if o.DefaultServiceAccount != "" {
		args = append(args, "--default-service-account="+o.DefaultServiceAccount)
	}
	args = append(args, o.Args...)
	err = c.Run(ctx, localcluster.Process{Name: p.Name, Path: convoy, Args: args, Env: o.Env, Ready: func(ctx context.Context) bool {
		return httpOK(ctx, p.ReadyURL)
	}})
	if err != nil {
		return nil, fmt.Errorf("start %s (log: %s/%s.log): %w", p.Name, c.LogDir(), p.Name, err)
	}
	p.PID = c.PID(p.Name)
	return p, nil
}

// convoyBinary is bin, or this executable when bin is empty.
func convoyBinary(bin string) (string, error) {
	if bin != "" {
		return bin, nil
	}
	return os.Executable()
}

// Scheme decodes what convoy apiserver sends.
var Scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(v1alpha1.AddToScheme(s))
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
	return s
}()

// RESTClient is a client of convoy.kumodo.io/v1alpha1 as cfg's user, in JSON.
func RESTClient(cfg *rest.Config) (*rest.RESTClient, error) {
	cc := rest.CopyConfig(cfg)
	cc.GroupVersion = &v1alpha1.SchemeGroupVersion
	cc.APIPath = "/apis"
	cc.NegotiatedSerializer = serializer.WithoutConversionCodecFactory{CodecFactory: serializer.NewCodecFactory(Scheme)}
	cc.ContentType = runtime.ContentTypeJSON
	return rest.RESTClientFor(cc)
}
