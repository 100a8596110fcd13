package localcluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Options say what to start.
type Options struct {
	// Workloads also starts kube-controller-manager, kube-scheduler and kwok,
	// and creates Nodes simulated nodes, so that workloads become ready.
	Workloads bool
	// Nodes is the number of simulated nodes when Workloads is set (default 1).
	Nodes int
	// Dir keeps the cluster's state (PKI, etcd data, logs, kubeconfig). A Dir
	// that holds an earlier cluster's state is reused, and Stop keeps it.
	// Empty: a new temporary folder that Stop removes.
	Dir string
	// BinDir holds the binaries (default: BinDir()).
	BinDir string
	// Progress receives one line per step (default: discarded).
	Progress io.Writer
	// StartTimeout bounds the whole start (default 3 minutes).
	StartTimeout time.Duration
	// Profiling serves kube-apiserver's /debug/pprof/ (to the admin), for benchmarks.
	Profiling bool
	// Etcd, when set, is the client URL of a running etcd, such as another
	// cluster's EtcdURL: kube-apiserver keeps its data there under EtcdPrefix and
	// no etcd of this cluster's own starts. Such a cluster is as independent as
	// one with its own etcd (its own objects, PKI and admin) for a few tens of
	// MiB less; it must be stopped before the cluster whose etcd it uses, or
	// with it (StopClusters).
	Etcd string
	// EtcdPrefix is where kube-apiserver keeps its keys in etcd; required with
	// Etcd and unique among the clusters on that etcd (default /registry).
	EtcdPrefix string
	// AuditWrites makes kube-apiserver write an audit event (level Metadata: who,
	// which user agent, what, when) for every write request into AuditLog(), so
	// that a harness can tell whose a write was. Reads are not logged.
	AuditWrites bool
}

// Cluster is a running local control plane.
type Cluster struct {
	dir, logDir, binDir string
	ownsDir             bool
	pki                 *pki
	progress            io.Writer

	etcdPort, etcdPeerPort, apiserverPort int
	// etcdURL is the etcd that kube-apiserver uses: its own or Options.Etcd;
	// etcdPrefix its key prefix there.
	etcdURL, etcdPrefix string
	kubeconfig          string
	restConfig          *rest.Config

	mu        sync.Mutex
	processes []*process // in start order
	stopped   bool
	// stopDone is closed when the Stop that set stopped is done (stop.go).
	stopDone  chan struct{}
	profiling bool
	// auditLog is the audit log's path; "" without Options.AuditWrites.
	auditLog string
	// supervisor restarts processes that exit; nil until Supervise.
	supervisor *supervisor
}

// Start starts a control plane and returns once it answers (and, with
// workloads, once every node is Ready). On error nothing is left running.
func Start(ctx context.Context, opts Options) (_ *Cluster, err error) {
	if opts.StartTimeout == 0 {
		opts.StartTimeout = 3 * time.Minute
	}
	if opts.Workloads && opts.Nodes == 0 {
		opts.Nodes = 1
	}
	if opts.Progress == nil {
		opts.Progress = io.Discard
	}
	if err := validateEtcd(opts); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, opts.StartTimeout)
	defer cancel()

	sweepStale()
	c := &Cluster{progress: opts.Progress, binDir: opts.BinDir, profiling: opts.Profiling, etcdURL: opts.Etcd, etcdPrefix: opts.EtcdPrefix}
	if c.etcdPrefix == "" {
		c.etcdPrefix = defaultEtcdPrefix
	}
	if c.binDir == "" {
		if c.binDir, err = BinDir(); err != nil {
			return nil, err
		}
	}
	need := []string{"kube-apiserver"}
	if opts.Etcd == "" {
		need = append(need, "etcd")
	}
	if opts.Workloads {
		need = append(need, "kube-controller-manager", "kube-scheduler", "kwok", "kwok-stages.yaml")
	}
	if missing := missingFrom(c.binDir, need); len(missing) > 0 {
		return nil, fmt.Errorf("%s are missing from %s: run `make kube` (hack/kube/build.sh) first", strings.Join(missing, ", "), c.binDir)
	}
	if c.dir = opts.Dir; c.dir == "" {
		if c.dir, err = os.MkdirTemp("", tempPrefix); err != nil {
			return nil, err
		}
		c.ownsDir = true
		if err := os.WriteFile(filepath.Join(c.dir, ownerFile), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
			return nil, err
		}
	}
	if c.dir, err = filepath.Abs(c.dir); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			_ = c.Stop()
		}
	}()
	c.logDir = filepath.Join(c.dir, "logs")
	if err := os.MkdirAll(c.logDir, 0o755); err != nil {
		return nil, err
	}
	if opts.AuditWrites {
		if c.auditLog, err = writeAuditPolicy(c.dir, c.logDir); err != nil {
			return nil, err
		}
	}
	if c.pki, err = loadOrCreatePKI(filepath.Join(c.dir, "pki")); err != nil {
		return nil, fmt.Errorf("make the PKI: %w", err)
	}
	if c.etcdURL == "" {
		if err := retryPorts(ctx, c.startEtcd); err != nil {
			return nil, err
		}
	}
	if err := retryPorts(ctx, c.startAPIServer); err != nil {
		return nil, err
	}
	if opts.Workloads {
		if err := c.startWorkloads(ctx, opts.Nodes); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// RestConfig returns a client configuration of the admin (system:masters).
func (c *Cluster) RestConfig() *rest.Config { return rest.CopyConfig(c.restConfig) }

// KubeconfigPath is the admin kubeconfig file.
func (c *Cluster) KubeconfigPath() string { return c.kubeconfig }

// Host is the URL of kube-apiserver.
func (c *Cluster) Host() string { return c.restConfig.Host }

// EtcdURL is the client URL of the cluster's etcd (Options.Etcd when it shares
// another's). An aggregated API server may keep its data there under its own
// prefix, as may another cluster's kube-apiserver (Options.Etcd).
func (c *Cluster) EtcdURL() string { return c.etcdURL }

// EtcdPrefix is where kube-apiserver keeps its keys in etcd.
func (c *Cluster) EtcdPrefix() string { return c.etcdPrefix }

// Dir is the cluster's state folder.
func (c *Cluster) Dir() string { return c.dir }

// Profiling says whether kube-apiserver serves /debug/pprof/ (Options.Profiling).
func (c *Cluster) Profiling() bool { return c.profiling }

// LogDir holds one log file per process.
func (c *Cluster) LogDir() string { return c.logDir }

// BinDir is the folder of the Kubernetes binaries this cluster runs.
func (c *Cluster) BinDir() string { return c.binDir }

// Ports lists every TCP port the cluster's processes listen on (not those of
// an etcd it shares with another cluster).
func (c *Cluster) Ports() []int {
	if c.etcdPort == 0 {
		return []int{c.apiserverPort}
	}
	return []int{c.etcdPort, c.etcdPeerPort, c.apiserverPort}
}

// PIDs lists the process ids of the cluster's processes.
func (c *Cluster) PIDs() []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	pids := make([]int, 0, len(c.processes))
	for _, p := range c.processes {
		pids = append(pids, p.cmd.Process.Pid)
	}
	return pids
}

// UserConfig returns a client configuration that authenticates as user in
// groups, by a client certificate of the cluster's CA. It has no permission
// until RBAC grants one.
func (c *Cluster) UserConfig(user string, groups ...string) (*rest.Config, error) {
	kp, err := c.pki.clientCert(user, groups)
	if err != nil {
		return nil, err
	}
	cfg := rest.AnonymousClientConfig(c.restConfig)
	cfg.CertData, cfg.KeyData = kp.certPEM, kp.keyPEM
	return cfg, nil
}

func (c *Cluster) start(name string, args []string) (*process, error) {
	return c.startReady(name, args, nil)
}

// startReady starts the binary name with args; ready, when set, says whether it is
// ready (a supervisor polls it after a restart).
func (c *Cluster) startReady(name string, args []string, ready func(context.Context) bool) (*process, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return nil, errors.New("cluster is stopped")
	}
	p, err := startProcess(name, filepath.Join(c.binDir, name), args, c.logDir)
	if err != nil {
		return nil, err
	}
	p.ready = ready
	c.add(p)
	return p, nil
}

// add records a started process and, under supervision, watches it. The caller holds
// c.mu.
func (c *Cluster) add(p *process) {
	c.processes = append(c.processes, p)
	if c.supervisor != nil {
		c.supervisor.watch(p)
	}
}

func (c *Cluster) step(format string, args ...any) {
	fmt.Fprintf(c.progress, format+"\n", args...)
}

// errPortTaken marks a start that failed because a picked port was taken.
var errPortTaken = errors.New("port taken")

// retryPorts runs start up to three times while it fails for a taken port.
func retryPorts(ctx context.Context, start func(context.Context) error) error {
	var err error
	for range 3 {
		if err = start(ctx); !errors.Is(err, errPortTaken) {
			return err
		}
	}
	return err
}

// portTakenIn reports whether the log of p says that an address was in use.
func portTakenIn(p *process) bool {
	b, _ := os.ReadFile(p.log.Name())
	return strings.Contains(string(b), "address already in use")
}

func (c *Cluster) startEtcd(ctx context.Context) error {
	ports, err := FreePorts(2)
	if err != nil {
		return err
	}
	c.etcdPort, c.etcdPeerPort = ports[0], ports[1]
	client := fmt.Sprintf("http://127.0.0.1:%d", c.etcdPort)
	c.etcdURL = client
	peer := fmt.Sprintf("http://127.0.0.1:%d", c.etcdPeerPort)
	c.step("Starting etcd on %s", client)
	httpClient := &http.Client{Timeout: time.Second}
	healthy := func(ctx context.Context) bool {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, client+"/health", nil)
		if err != nil {
			return false
		}
		resp, err := httpClient.Do(req)
		if err != nil {
			return false
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK && strings.Contains(string(body), `"health":"true"`)
	}
	p, err := c.startReady("etcd", []string{
		"--name=default",
		"--data-dir=" + filepath.Join(c.dir, "etcd"),
		"--listen-client-urls=" + client,
		"--advertise-client-urls=" + client,
		"--listen-peer-urls=" + peer,
		"--initial-advertise-peer-urls=" + peer,
		"--initial-cluster=default=" + peer,
		"--unsafe-no-fsync=true", // a throw-away development store: speed over durability
		"--quota-backend-bytes=8589934592",
		"--log-level=warn",
	}, healthy)
	if err != nil {
		return err
	}
	err = waitFor(ctx, "etcd", []*process{p}, healthy)
	if err != nil && portTakenIn(p) {
		return errPortTaken
	}
	return err
}

func (c *Cluster) startAPIServer(ctx context.Context) error {
	ports, err := FreePorts(1)
	if err != nil {
		return err
	}
	c.apiserverPort = ports[0]
	pk := c.pki.path
	c.step("Starting kube-apiserver %s on https://127.0.0.1:%d", KubernetesVersion, c.apiserverPort)
	p, err := c.start("kube-apiserver", append([]string{
		"--etcd-servers=" + c.etcdURL,
		"--etcd-prefix=" + c.etcdPrefix,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--endpoint-reconciler-type=none", // loopback cannot be an Endpoints address
		"--secure-port=" + strconv.Itoa(c.apiserverPort),
		"--cert-dir=" + filepath.Join(c.dir, "apiserver-certs"),
		"--tls-cert-file=" + pk(servingName+".crt"),
		"--tls-private-key-file=" + pk(servingName+".key"),
		"--client-ca-file=" + pk(caName+".crt"),
		"--service-cluster-ip-range=10.96.0.0/16", // room for thousands of Services
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file=" + pk(serviceAccountKey+".pub"),
		"--service-account-signing-key-file=" + pk(serviceAccountKey+".key"),
		"--authorization-mode=RBAC",
		"--allow-privileged=true",
		// The aggregation layer, so an extension API server can authenticate
		// requests that kube-apiserver forwards.
		"--requestheader-client-ca-file=" + pk(frontProxyCAName+".crt"),
		"--requestheader-allowed-names=" + frontProxyClient,
		"--requestheader-username-headers=X-Remote-User",
		"--requestheader-group-headers=X-Remote-Group",
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
		"--proxy-client-cert-file=" + pk(frontProxyClient+".crt"),
		"--proxy-client-key-file=" + pk(frontProxyClient+".key"),
		"--enable-aggregator-routing=false",
		"--profiling=" + strconv.FormatBool(c.profiling),
	}, auditFlags(c.dir, c.auditLog)...))
	if err != nil {
		return err
	}
	c.restConfig = &rest.Config{
		Host:            fmt.Sprintf("https://127.0.0.1:%d", c.apiserverPort),
		TLSClientConfig: rest.TLSClientConfig{CAData: c.pki.ca.certPEM},
		QPS:             200,
		Burst:           400,
	}
	admin, err := readKeyPair(pk(adminName+".crt"), pk(adminName+".key"))
	if err != nil {
		return err
	}
	c.restConfig.CertData, c.restConfig.KeyData = admin.certPEM, admin.keyPEM
	if err := c.writeKubeconfig(admin); err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(c.restConfig)
	if err != nil {
		return err
	}
	ready := func(ctx context.Context) bool {
		rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		body, err := cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(rctx)
		return err == nil && string(body) == "ok"
	}
	c.mu.Lock()
	p.ready = ready
	c.mu.Unlock()
	err = waitFor(ctx, "kube-apiserver /readyz", []*process{p}, ready)
	if err != nil && portTakenIn(p) {
		return errPortTaken
	}
	return err
}

// defaultEtcdPrefix is kube-apiserver's own default --etcd-prefix.
const defaultEtcdPrefix = "/registry"

// validateEtcd checks the etcd options: a shared etcd needs a prefix of this
// cluster's own, an absolute path that is not kube-apiserver's default.
func validateEtcd(opts Options) error {
	switch {
	case opts.Etcd == "" && opts.EtcdPrefix != "" && opts.EtcdPrefix != defaultEtcdPrefix:
		return fmt.Errorf("etcd prefix %q without a shared etcd (Options.Etcd): a cluster's own etcd keeps its data under %s", opts.EtcdPrefix, defaultEtcdPrefix)
	case opts.Etcd == "":
		return nil
	case !strings.HasPrefix(opts.Etcd, "http://") && !strings.HasPrefix(opts.Etcd, "https://"):
		return fmt.Errorf("shared etcd %q is not an etcd client URL (http://host:port)", opts.Etcd)
	case opts.EtcdPrefix == "" || opts.EtcdPrefix == defaultEtcdPrefix:
		return fmt.Errorf("a cluster on a shared etcd (%s) needs an etcd prefix of its own (Options.EtcdPrefix), not %q", opts.Etcd, opts.EtcdPrefix)
	case !strings.HasPrefix(opts.EtcdPrefix, "/") || strings.HasSuffix(opts.EtcdPrefix, "/") || strings.Contains(opts.EtcdPrefix, "//"):
		return fmt.Errorf("etcd prefix %q: want an absolute path such as /clusters/dev-1", opts.EtcdPrefix)
	}
	return nil
}

func (c *Cluster) writeKubeconfig(admin *keyPair) error {
	c.kubeconfig = filepath.Join(c.dir, "kubeconfig")
	return writeKubeconfigFile(c.kubeconfig, c.restConfig.Host, c.pki.ca.certPEM, admin)
}

func writeKubeconfigFile(path, host string, caPEM []byte, user *keyPair) error {
	return writeKubeconfig(path, host, caPEM, &clientcmdapi.AuthInfo{ClientCertificateData: user.certPEM, ClientKeyData: user.keyPEM})
}

// writeKubeconfig writes a kubeconfig of host (served with a certificate of caPEM) as
// user to path.
func writeKubeconfig(path, host string, caPEM []byte, user *clientcmdapi.AuthInfo) error {
	const name = "convoy-local"
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[name] = &clientcmdapi.Cluster{Server: host, CertificateAuthorityData: caPEM}
	cfg.AuthInfos[name] = user
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name, Namespace: "default"}
	cfg.CurrentContext = name
	return clientcmd.WriteToFile(*cfg, path)
}
