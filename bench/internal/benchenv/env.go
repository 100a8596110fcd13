// Package benchenv is what the benchmarks under bench/ share to run convoy's
// processes on a local control plane and read what they cost: a control plane (with
// simulated kwok nodes, or only etcd and kube-apiserver), convoy apiserver
// registered through an APIService, a Helm chart repository, convoy's other
// processes started from a built binary, their /metrics and /proc figures; and the
// flags and run loop of the benchmarks that measure N Releases on a fresh
// environment per N (run.go). It decides nothing about what a benchmark measures.
package benchenv

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"kumodo.io/convoy/internal/apiserver"
	"kumodo.io/convoy/internal/dev"
	"kumodo.io/convoy/internal/localcluster"
	"kumodo.io/convoy/internal/render/chartrepo"
)

// Scheme decodes what convoy apiserver sends (dev.Scheme).
var Scheme = dev.Scheme

// Options say what Start starts.
type Options struct {
	// Dir keeps the control plane's state and logs; empty: a temporary folder, removed.
	Dir string
	// Workloads also starts kube-controller-manager, kube-scheduler and kwok with
	// Nodes simulated nodes, so that workloads become ready.
	Workloads bool
	// Nodes is the number of simulated nodes.
	Nodes int
	// Charts is a folder of charts served as a Helm repository; empty: no repository.
	Charts string
	// Profiling serves kube-apiserver's /debug/pprof/ (convoy apiserver serves its own
	// at its defaults): see APIServerProfiles.
	Profiling bool
	// QPS and Burst are Admin's client-side limits (default 2,000 and 4,000).
	QPS   float32
	Burst int
	// ConvoyEtcd, when not nil, gives convoy apiserver an etcd of its own (StartEtcd),
	// started with these extra flags, instead of the control plane's: what is in it
	// is convoy's alone (bench/storage measures its size).
	ConvoyEtcd []string
}

// APIServerCommand is the first argument of convoy apiserver: Start runs
// `<convoyBin> apiserver <flags>` (dev.StartAPIServer).
const APIServerCommand = "apiserver"

// Env is one running control plane (with kwok nodes when Workloads), convoy
// apiserver, the chart repository, and the convoy processes started with
// StartComponent.
type Env struct {
	Cluster *localcluster.Cluster
	// Admin is the control plane's admin, without client-side throttling to speak of.
	Admin  *rest.Config
	Convoy *rest.RESTClient // convoy.kumodo.io/v1alpha1 as the admin, JSON
	Kube   kubernetes.Interface
	Charts *chartrepo.Server

	// convoy apiserver's /metrics, straight to its port.
	apiMetrics    *http.Client
	apiMetricsURL string
	api           *dev.APIServer
	// convoy controller's /metrics (plain HTTP on loopback), once StartController ran.
	ctlMetricsURL string
	// ConvoyEtcdURL is the client URL of the etcd that convoy apiserver uses: the
	// control plane's, or its own with Options.ConvoyEtcd.
	ConvoyEtcdURL string

	procs []NamedPID

	// ComponentEnv is added to the environment of the processes that StartComponent
	// starts (bench/e2e -memory-limit: GOMEMLIMIT, as the chart sets it).
	ComponentEnv []string
}

// NamedPID is one process of the environment.
type NamedPID struct {
	Name string
	PID  int
}

// BuildConvoy builds ./cmd/convoy into dir once, as the image builds it (hack/image:
// no cgo, -trimpath, stripped), and returns the binary. The processes' memory is that
// of the binary users run: a plain `go build` links with cgo and, since a dependency
// imports package plugin (kustomize's plugin loader, through cli-runtime), exports
// every symbol for the dynamic linker: a binary of 173 MB instead of 94, ~30 MiB more
// of the executable's pages resident in each process
// (docs/notes/performance-log.md, sixth round).
func BuildConvoy(ctx context.Context, dir string) (string, error) {
	root, err := localcluster.RepoRoot()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "convoy")
	fmt.Fprintln(os.Stderr, "Building ./cmd/convoy...")
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags", "-s -w", "-o", bin, "./cmd/convoy")
	cmd.Dir, cmd.Stdout, cmd.Stderr = root, os.Stderr, os.Stderr
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build ./cmd/convoy: %w", err)
	}
	return bin, nil
}

// ConvoyBinary is the convoy binary a benchmark runs: given (its -convoy flag) when set,
// else ./cmd/convoy built as the image is (BuildConvoy) into a temporary folder named
// for the benchmark, which cleanup removes.
func ConvoyBinary(ctx context.Context, given, bench string) (bin string, cleanup func(), err error) {
	if given != "" {
		return given, func() {}, nil
	}
	dir, err := os.MkdirTemp("", "convoy-bench-"+bench+"-")
	if err != nil {
		return "", nil, err
	}
	if bin, err = BuildConvoy(ctx, dir); err != nil {
		_ = os.RemoveAll(dir)
		return "", nil, err
	}
	return bin, func() { _ = os.RemoveAll(dir) }, nil
}

// Start starts the control plane (with workloads when o.Workloads), convoy apiserver
// from convoyBin (registered with an APIService, as convoy dev does) and the chart
// repository.
func Start(ctx context.Context, convoyBin string, o Options) (_ *Env, err error) {
	lo := localcluster.Options{Dir: o.Dir, Progress: os.Stderr, Profiling: o.Profiling}
	if o.Workloads {
		fmt.Fprintln(os.Stderr, "Starting the local control plane with simulated nodes...")
		lo.Workloads, lo.Nodes, lo.StartTimeout = true, o.Nodes, 5*time.Minute // more processes to start than localcluster's default allows for
	} else {
		fmt.Fprintln(os.Stderr, "Starting the local control plane...")
	}
	c, err := localcluster.Start(ctx, lo)
	if err != nil {
		return nil, fmt.Errorf("starting the local control plane: %w", err)
	}
	e := &Env{Cluster: c}
	defer func() {
		if err != nil {
			e.Stop()
		}
	}()
	for _, pid := range c.PIDs() {
		e.procs = append(e.procs, NamedPID{ProcName(pid), pid})
	}
	e.ConvoyEtcdURL = c.EtcdURL()
	if o.ConvoyEtcd != nil {
		if e.ConvoyEtcdURL, err = e.StartEtcd(ctx, "convoy-etcd", o.ConvoyEtcd); err != nil {
			return nil, err
		}
	}

	// convoy apiserver, as convoy dev starts it (dev.StartAPIServer).
	fmt.Fprintln(os.Stderr, "Starting convoy-apiserver and registering its APIService...")
	api, err := dev.StartAPIServer(ctx, c, dev.APIServerOptions{
		Convoy:       convoyBin,
		EtcdServers:  e.ConvoyEtcdURL,
		EtcdPrefix:   "/convoy-bench",
		Registration: apiserver.Registration{Namespace: "convoy-bench", ServiceName: dev.APIServerName, Timeout: 3 * time.Minute},
	})
	if err != nil {
		return nil, err
	}
	e.Track(api.Name, c.PID(api.Name))

	e.Admin = c.RestConfig()
	e.Admin.QPS, e.Admin.Burst = 2000, 4000
	if o.QPS != 0 {
		e.Admin.QPS = o.QPS
	}
	if o.Burst != 0 {
		e.Admin.Burst = o.Burst
	}
	if e.Kube, err = kubernetes.NewForConfig(e.Admin); err != nil {
		return nil, err
	}
	if e.Convoy, err = dev.RESTClient(e.Admin); err != nil {
		return nil, err
	}
	mc := api.Direct(e.Admin)
	if e.apiMetrics, err = rest.HTTPClientFor(mc); err != nil {
		return nil, err
	}
	e.apiMetricsURL = api.URL + "/metrics"
	e.api = api

	if o.Charts == "" {
		return e, nil
	}
	repo, err := chartrepo.Build(o.Charts)
	if err != nil {
		return nil, err
	}
	if e.Charts, err = chartrepo.Serve("127.0.0.1:0", repo); err != nil {
		return nil, err
	}
	return e, nil
}

// StartComponent starts `<convoyBin> <command> <args>` as name (dev.StartProcess),
// args holding its --kubeconfig, with --metrics-bind-address and
// --health-probe-bind-address on free loopback ports, waits until its /readyz answers
// 200, and returns the URL of its /metrics.
func (e *Env) StartComponent(ctx context.Context, name, convoyBin, command string, args []string) (metricsURL string, err error) {
	o := dev.ProcessOptions{Name: name, Convoy: convoyBin, Env: e.ComponentEnv, Metrics: true}
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--kubeconfig="); ok {
			o.Kubeconfig = v
			continue
		}
		o.Args = append(o.Args, a)
	}
	fmt.Fprintln(os.Stderr, "Starting", name+":", strings.Join(e.ComponentEnv, " "), convoyBin, command, strings.Join(args, " "))
	p, err := dev.StartProcess(ctx, e.Cluster, command, o)
	if err != nil {
		return "", err
	}
	e.Track(p.Name, p.PID)
	return p.MetricsURL, nil
}

// StartController starts convoy controller from convoyBin with the admin kubeconfig,
// its chart cache in the control plane's folder, --resync and --concurrency, every
// other flag at its default (dev.StartController).
func (e *Env) StartController(ctx context.Context, convoyBin string, resync time.Duration, concurrency int) error {
	fmt.Fprintln(os.Stderr, "Starting convoy-controller")
	p, err := dev.StartController(ctx, e.Cluster, dev.ProcessOptions{Convoy: convoyBin, Env: e.ComponentEnv, Metrics: true, Args: []string{
		"--resync=" + resync.String(),
		"--concurrency=" + strconv.Itoa(concurrency),
	}})
	if err != nil {
		return err
	}
	e.Track(p.Name, p.PID)
	e.ctlMetricsURL = p.MetricsURL
	return nil
}

// Track adds process pid, as name, to what Snapshot reads.
func (e *Env) Track(name string, pid int) {
	e.procs = append(e.procs, NamedPID{name, pid})
}

// Stop stops the chart repository and every process.
func (e *Env) Stop() {
	if e.Charts != nil {
		_ = e.Charts.Close()
	}
	if e.Cluster != nil {
		if err := e.Cluster.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping the control plane:", err)
		}
	}
}

// Profiled is a process that serves Go's /debug/pprof/ at Base to Client.
type Profiled struct {
	Name, Base string
	Client     *http.Client
}

// APIServerProfiles are kube-apiserver (with Options.Profiling) and convoy apiserver,
// read as the admin.
func (e *Env) APIServerProfiles(timeout time.Duration) ([]Profiled, error) {
	var out []Profiled
	if e.Cluster.Profiling() {
		admin := e.Cluster.RestConfig()
		admin.Timeout = timeout
		c, err := rest.HTTPClientFor(admin)
		if err != nil {
			return nil, err
		}
		out = append(out, Profiled{"kube-apiserver", e.Cluster.Host(), c})
	}
	c := *e.apiMetrics
	c.Timeout = timeout
	return append(out, Profiled{e.api.Name, e.api.URL, &c}), nil
}

// KubeMetrics is kube-apiserver's /metrics, read as the admin.
func (e *Env) KubeMetrics(ctx context.Context) (string, error) {
	b, err := e.Kube.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	return string(b), err
}

// ConvoyMetrics is convoy apiserver's /metrics; "" when it does not answer.
func (e *Env) ConvoyMetrics(ctx context.Context) string {
	return HTTPGet(ctx, e.apiMetrics, e.apiMetricsURL)
}

// ScrapeConvoy is convoy apiserver's /metrics, or why it could not be read.
func (e *Env) ScrapeConvoy(ctx context.Context) (string, error) {
	return Fetch(ctx, e.apiMetrics, e.apiMetricsURL)
}

// ControllerMetrics is convoy controller's /metrics; "" when it does not answer.
func (e *Env) ControllerMetrics(ctx context.Context) string {
	return HTTPGet(ctx, http.DefaultClient, e.ctlMetricsURL)
}

// EnsureNamespace creates namespace ns unless it exists.
func (e *Env) EnsureNamespace(ctx context.Context, ns string) error {
	_, err := e.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", ns, err)
	}
	return nil
}

// FreePort is a free loopback TCP port (localcluster.FreePort).
func FreePort() (int, error) { return localcluster.FreePort() }

// Direct is cfg (its credentials) pointed at convoy apiserver's port itself rather than
// at kube-apiserver's aggregator.
func (e *Env) Direct(cfg *rest.Config) *rest.Config { return e.api.Direct(cfg) }
