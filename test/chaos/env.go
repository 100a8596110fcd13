package chaos

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/apiserver"
	"kumodo.io/convoy/internal/cli"
	"kumodo.io/convoy/internal/dev"
	"kumodo.io/convoy/internal/localcluster"
)

// The names of convoy's processes, as the faults and the report name them.
const (
	procAPIServer  = dev.APIServerName
	procController = dev.ControllerName
	// procController2 is the second controller replica; the two elect a leader.
	procController2 = dev.ControllerName + "-2"
	procObserver    = dev.ObserverName
	procEtcd        = "etcd"
	procKubeAPI     = "kube-apiserver"
	// The remote cluster's control plane, as the report names it (localcluster
	// names them etcd and kube-apiserver in their own cluster).
	procRemoteKubeAPI = "remote kube-apiserver"
	procRemoteEtcd    = "remote etcd"
)

// remoteClusterName is the Cluster object of the second control plane; the Secret
// with its kubeconfig is systemNamespace/remoteClusterName-kubeconfig, beside the
// controller's leader election Lease.
const (
	remoteClusterName = "remote"
	systemNamespace   = "convoy-system"
)

// env is one running system under test: the host control plane, convoy's three
// processes, the chart repository and the proxy in front of it, and a second control
// plane, the remote Cluster, that convoy reaches through another proxy (the link).
type env struct {
	cluster *localcluster.Cluster
	admin   *rest.Config
	kube    kubernetes.Interface
	convoy  *rest.RESTClient // convoy.kumodo.io/v1alpha1, JSON, as the admin
	cli     *cli.Client
	repo    *flakyRepo
	proxy   *proxy
	log     *eventLog

	remote     *localcluster.Cluster
	remoteKube kubernetes.Interface // straight to the remote kube-apiserver (the harness's view)
	link       *proxy               // in front of the remote kube-apiserver: convoy's way there

	canary *release   // an automatic Release on the host that only the injector changes
	fleet  fleetState // what the harness did to the ReleaseSet during the faults (fleetgates.go)

	// moments receive, for each aimed kill, what just happened when a fault waits for
	// it (senders drop them otherwise): the deletions the driver sends, the first wave
	// of an apply, hook Jobs, prunes and a stage of the ReleaseSet rolling out that the
	// recorder sees (aim).
	moments map[faultKind]chan string

	mu          sync.Mutex
	violations  []violation     // found by the injector during the fault phase, and "alive" ones
	handovers   []time.Duration // leader handovers: from the SIGKILL to the other replica leading
	leaseLosses int             // controller replicas started again after losing their lease (addDead)
	dead        map[string]bool // convoy processes found exited (each one reported once)

	bin string
	// metrics of each convoy process (the apiserver's needs the admin's client).
	metricsURL map[string]string
	readyURL   map[string]string
	apiMetrics *http.Client
}

// startEnv starts everything; stop with env.stop. On error nothing is left running.
func startEnv(ctx context.Context, bin, dir string, nodes int, log *eventLog) (_ *env, err error) {
	e := &env{bin: bin, log: log, metricsURL: map[string]string{}, readyURL: map[string]string{}, moments: map[faultKind]chan string{}, dead: map[string]bool{}}
	for _, k := range []faultKind{faultKillMidDelete, faultKillMidApply, faultKillMidHook, faultKillMidPrune, faultKillMidStage, faultLeaveMidStage} {
		e.moments[k] = make(chan string)
	}
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
	log.printf("Starting the local control plane with %d kwok nodes, and the remote one with 1", nodes)
	var hostErr, remoteErr error
	var wg sync.WaitGroup
	wg.Go(func() {
		e.cluster, hostErr = localcluster.Start(ctx, localcluster.Options{Dir: dir, Workloads: true, Nodes: nodes, StartTimeout: 5 * time.Minute, AuditWrites: true})
	})
	wg.Go(func() {
		e.remote, remoteErr = localcluster.Start(ctx, localcluster.Options{Dir: filepath.Join(dir, "remote"), Workloads: true, Nodes: 1, StartTimeout: 5 * time.Minute, AuditWrites: true})
	})
	wg.Wait()
	if hostErr != nil {
		return nil, fmt.Errorf("starting the local control plane: %w", hostErr)
	}
	if remoteErr != nil {
		return nil, fmt.Errorf("starting the remote control plane: %w", remoteErr)
	}
	if err := e.connectRemote(ctx); err != nil {
		return nil, err
	}
	e.admin = e.cluster.RestConfig()
	e.admin.QPS, e.admin.Burst = 500, 1000
	if e.kube, err = kubernetes.NewForConfig(e.admin); err != nil {
		return nil, err
	}
	if e.convoy, err = dev.RESTClient(e.admin); err != nil {
		return nil, err
	}
	if e.cli, err = cli.NewClient(e.admin); err != nil {
		return nil, err
	}
	// The controllers' leader election keeps its Lease in this namespace, as the
	// remote Cluster's kubeconfig Secret.
	_, err = e.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: systemNamespace}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, err
	}
	if err := e.startConvoy(ctx); err != nil {
		return nil, err
	}
	if err := e.registerRemote(ctx); err != nil {
		return nil, err
	}
	return e, nil
}

// connectRemote puts the link proxy in front of the remote kube-apiserver and makes
// the harness's own client of it (straight, not through the link).
func (e *env) connectRemote(ctx context.Context) error {
	u, err := url.Parse(e.remote.Host())
	if err != nil {
		return err
	}
	if e.link, err = newProxy(u.Host, e.log); err != nil {
		return err
	}
	rc := e.remote.RestConfig()
	rc.QPS, rc.Burst = 200, 400
	if e.remoteKube, err = kubernetes.NewForConfig(rc); err != nil {
		return err
	}
	return e.remoteKube.Discovery().RESTClient().Get().AbsPath("/version").Do(ctx).Error()
}

// registerRemote stores the remote cluster's admin kubeconfig, with the link proxy as
// its server, in a Secret of the host, creates the Cluster object that names it, and
// waits until the controller finds it Ready.
func (e *env) registerRemote(ctx context.Context) error {
	rc := e.remote.RestConfig()
	kc := clientcmdapi.NewConfig()
	kc.Clusters[remoteClusterName] = &clientcmdapi.Cluster{Server: e.link.https(), CertificateAuthorityData: rc.CAData}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: rc.CertData, ClientKeyData: rc.KeyData}
	kc.Contexts[remoteClusterName] = &clientcmdapi.Context{Cluster: remoteClusterName, AuthInfo: "admin"}
	kc.CurrentContext = remoteClusterName
	data, err := clientcmd.Write(*kc)
	if err != nil {
		return err
	}
	secretName := remoteClusterName + "-kubeconfig"
	_, err = e.kube.CoreV1().Secrets(systemNamespace).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: systemNamespace, Name: secretName},
		Data:       map[string][]byte{"value": data},
	}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("create the remote Cluster's kubeconfig Secret: %w", err)
	}
	cl := &convoyv1alpha1.Cluster{
		TypeMeta:   metav1.TypeMeta{APIVersion: convoyv1alpha1.SchemeGroupVersion.String(), Kind: "Cluster"},
		ObjectMeta: metav1.ObjectMeta{Name: remoteClusterName},
		Spec: convoyv1alpha1.ClusterSpec{Kubeconfig: convoyv1alpha1.KubeconfigSource{
			SecretRef: convoyv1alpha1.SecretKeyReference{Namespace: systemNamespace, Name: secretName},
		}},
	}
	if err := e.convoy.Post().Resource(convoyv1alpha1.ResourceClusters).Body(cl).Do(ctx).Error(); err != nil {
		return fmt.Errorf("create the remote Cluster: %w", err)
	}
	e.log.printf("Cluster %s: the remote control plane through the link proxy %s", remoteClusterName, e.link.https())
	return retry(ctx, 2*time.Minute, func(ctx context.Context) error {
		got := &convoyv1alpha1.Cluster{}
		if err := e.convoy.Get().Resource(convoyv1alpha1.ResourceClusters).Name(remoteClusterName).Do(ctx).Into(got); err != nil {
			return err
		}
		if c := apimeta.FindStatusCondition(got.Status.Conditions, convoyv1alpha1.ConditionReady); c == nil || c.Status != metav1.ConditionTrue {
			return fmt.Errorf("cluster %s is not Ready: %+v", remoteClusterName, c)
		}
		return nil
	})
}

// leader is the controller replica that holds the leader election's Lease (its
// leader_election_master_status is 1), "" when none says so.
func (e *env) leader(ctx context.Context) string {
	for _, name := range []string{procController, procController2} {
		if v, ok := gauge(e.metrics(ctx, name), "leader_election_master_status"); ok && v == 1 {
			return name
		}
	}
	return ""
}

// kubeOf is the harness's client of the cluster a Release targets ("" is the host).
func (e *env) kubeOf(cluster string) kubernetes.Interface {
	if cluster == remoteClusterName {
		return e.remoteKube
	}
	return e.kube
}

// addViolation records a violation that the injector found during the fault phase.
func (e *env) addViolation(v violation) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.violations = append(e.violations, v)
}

// startConvoy starts convoy apiserver on the cluster's etcd, registered through an
// APIService, two controller replicas that elect a leader (each with its own chart
// cache, as two pods would) and the observer, as convoy dev does (dev.Start) but
// with the admin's kubeconfig, every flag at its default, and metrics on loopback.
func (e *env) startConvoy(ctx context.Context) error {
	controller := func(name string) dev.ProcessOptions {
		return dev.ProcessOptions{Name: name, Convoy: e.bin, Metrics: true,
			ChartCacheDir: filepath.Join(e.cluster.Dir(), "charts-"+name),
			Args:          []string{"--leader-elect", "--leader-election-namespace=" + systemNamespace}}
	}
	e.log.printf("Starting %s, %s, %s and %s", procAPIServer, procController, procController2, procObserver)
	procs, err := dev.Start(ctx, e.cluster, dev.StartOptions{
		APIServer: &dev.APIServerOptions{
			Convoy: e.bin, EtcdPrefix: "/convoy-chaos",
			Registration: apiserver.Registration{Namespace: "convoy-chaos", ServiceName: procAPIServer, Timeout: 2 * time.Minute},
		},
		Controllers: []dev.ProcessOptions{controller(procController), controller(procController2)},
		Observers:   []dev.ProcessOptions{{Convoy: e.bin, Metrics: true}},
	})
	if err != nil {
		return fmt.Errorf("%w (logs: %s)", err, e.cluster.LogDir())
	}
	api := procs.APIServer
	if e.apiMetrics, err = rest.HTTPClientFor(api.Direct(e.admin)); err != nil {
		return err
	}
	e.metricsURL[api.Name] = api.URL + "/metrics"
	e.readyURL[api.Name] = api.URL + "/readyz"
	for _, p := range append(procs.Controllers, procs.Observers...) {
		e.metricsURL[p.Name] = p.MetricsURL
		e.readyURL[p.Name] = p.ReadyURL
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
	case procRemoteKubeAPI, procRemoteEtcd:
		body, err := e.remoteKube.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
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

// readyBound bounds how long a process may take to be ready again after a fault.
const readyBound = 2 * time.Minute

// convoyProcs are convoy's processes, which the harness starts (and a fault starts
// again) but nothing restarts when they exit by themselves.
var convoyProcs = []string{procAPIServer, procController, procController2, procObserver}

// waitReady polls ready(name) every 200 ms for up to readyBound. A convoy process
// that has exited ends the wait at once with an *exitedError.
func (e *env) waitReady(ctx context.Context, name string) error {
	timeout := readyBound
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		if e.ready(ctx, name) {
			return nil
		}
		if err := e.exited(name); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s is not ready %s after its restart (logs: %s, %s)", name, timeout, e.cluster.LogDir(), e.remote.LogDir())
		case <-tick.C:
		}
	}
}

// exitedError says that a convoy process has exited, with the end of its log.
type exitedError struct {
	name, log string // the process, its log file
	tail      string // the last lines its last start wrote
}

func (err *exitedError) Error() string {
	return fmt.Sprintf("%s is not running: it exited, and nothing started it again; the last lines of its log (%s):\n%s", err.name, err.log, err.tail)
}

// exited is an *exitedError when name is a convoy process of which none runs; nil
// otherwise.
func (e *env) exited(name string) error {
	if !slices.Contains(convoyProcs, name) || e.cluster.PID(name) != 0 {
		return nil
	}
	path := filepath.Join(e.cluster.LogDir(), name+".log")
	b, err := os.ReadFile(path)
	if err != nil {
		return &exitedError{name: name, log: path, tail: err.Error()}
	}
	return &exitedError{name: name, log: path, tail: lastStartTail(string(b), logTailLines)}
}

// logTailLines is how much of a dead process's log a violation quotes.
const logTailLines = 12

// lastStartTail is the last n lines of a process's log that its last start wrote
// (localcluster begins each start with a "--- <time> <binary> <args>" line), each
// indented for the report.
func lastStartTail(log string, n int) string {
	lines := strings.Split(strings.TrimRight(log, "\n"), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.HasPrefix(lines[i], "--- ") {
			lines = lines[i+1:]
			break
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	for i := range lines {
		lines[i] = "    " + lines[i]
	}
	return strings.Join(lines, "\n")
}

// leaseLost says whether err is a controller replica that ended because it lost its
// leader lease: controller-runtime (as kube-controller-manager) ends a leader that
// could not renew its lease within the renew deadline, which a kube-apiserver down
// longer than that, or a machine too loaded to answer in time, causes. In a cluster
// the kubelet starts the Pod again; so does the harness (restartLeaseLoser).
func leaseLost(err *exitedError) bool {
	return (err.name == procController || err.name == procController2) && strings.Contains(err.tail, "leader election lost")
}

// addDead records once that a convoy process has exited (when says at what point of
// the run it was found): an "alive" violation, named by the process, with the end of
// its log. A controller replica that lost its lease (leaseLost) is started again
// instead, as the kubelet would, and counted; a violation only if it does not start.
func (e *env) addDead(err *exitedError, when string) {
	if leaseLost(err) {
		rerr := e.cluster.Restart(err.name)
		if rerr == nil {
			e.mu.Lock()
			e.leaseLosses++
			e.mu.Unlock()
			e.log.printf("RESTARTED %s, found %s: it lost its leader lease and ended (as designed); started again as a kubelet would", err.name, when)
			return
		}
		err.tail += fmt.Sprintf("\n    (started again after losing its lease: %v)", rerr)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.dead[err.name] {
		return
	}
	e.dead[err.name] = true
	e.log.printf("DEAD %s, found %s: %v", err.name, when, err)
	e.violations = append(e.violations, violation{"alive", err.name, fmt.Sprintf("found %s: %v", when, err)})
}

// checkAlive records every convoy process that no longer runs (addDead).
func (e *env) checkAlive(when string) {
	for _, name := range convoyProcs {
		var dead *exitedError
		if errors.As(e.exited(name), &dead) {
			e.addDead(dead, when)
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

// kubeMetrics is the /metrics of the kube-apiserver of kube (the host's or the remote's).
func kubeMetrics(ctx context.Context, kube kubernetes.Interface) string {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	b, err := kube.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
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
	if e.remote != nil {
		if err := e.remote.Stop(); err != nil {
			e.log.printf("Stopping the remote control plane: %v", err)
		}
	}
	if e.link != nil {
		e.link.close()
	}
	if e.proxy != nil {
		e.proxy.close()
	}
	if e.repo != nil {
		e.repo.close()
	}
}

// aim offers what just happened to a kill waiting for that kind of moment; it never
// blocks.
func (e *env) aim(kind faultKind, moment string) {
	select {
	case e.moments[kind] <- moment:
	default:
	}
}
