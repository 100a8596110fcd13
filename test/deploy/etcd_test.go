package deploy_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/pflag"
	clientv3 "go.etcd.io/etcd/client/v3"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/apiserver"
	"kumodo.io/convoy/internal/localcluster"
	"kumodo.io/convoy/internal/testenv"
	"kumodo.io/convoy/test/convoychart"
)

// etcdNamespace is the namespace the chart is rendered into for the etcd tests.
const etcdNamespace = "convoy-system"

const (
	// etcdRequestTimeout is how long etcd lets a proposal wait before it answers
	// "request timed out": 5 s and twice the election timeout (1 s, the chart keeps
	// etcd's default).
	etcdRequestTimeout = 7 * time.Second
	// apiRequestTimeout is convoy apiserver's --request-timeout (its default).
	apiRequestTimeout = time.Minute
)

// renderedEtcd is the chart's etcd, rendered with its default values: the
// StatefulSet, the TLS Secrets the chart made, and convoy apiserver's Deployment.
type renderedEtcd struct {
	sts                  appsv1.StatefulSet
	serverTLS, clientTLS corev1.Secret
	apiserver            appsv1.Deployment
}

func renderEtcd(t *testing.T, values map[string]any) renderedEtcd {
	t.Helper()
	c := convoychart.Load(t)
	objs := convoychart.Render(t, c, values, etcdNamespace)
	var r renderedEtcd
	typed(t, find(t, objs, "StatefulSet", "convoy-etcd"), &r.sts)
	typed(t, find(t, objs, "Secret", "convoy-etcd-server-tls"), &r.serverTLS)
	typed(t, find(t, objs, "Secret", "convoy-etcd-client-tls"), &r.clientTLS)
	typed(t, find(t, objs, "Deployment", "convoy-apiserver"), &r.apiserver)
	return r
}

// etcdMember is one member of the rendered StatefulSet run as a process.
type etcdMember struct {
	name    string
	args    []string
	client  string // https://127.0.0.1:port
	metrics string // http://127.0.0.1:port
	log     string
	cmd     *exec.Cmd
	exited  chan struct{}
}

// etcdProcesses runs the rendered StatefulSet's members as processes on this
// machine: the container's command with $(POD_NAME) expanded as the kubelet does,
// each member's DNS name and port mapped to 127.0.0.1 and a port of its own, the
// mounted Secret and volume mapped to folders. Every other flag is the chart's.
type etcdProcesses struct {
	members []*etcdMember
	// clientDir holds the client certificate of convoy's processes (ca.crt, tls.crt, tls.key).
	clientDir string
	// hostMap maps the in-cluster addresses of the render to local ones.
	hostMap *strings.Replacer
}

func freePort(t *testing.T) int {
	t.Helper()
	return testenv.FreePort(t)
}

func writeSecret(t *testing.T, dir string, s corev1.Secret) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for k, v := range s.Data {
		if err := os.WriteFile(filepath.Join(dir, k), v, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

func newEtcdProcesses(t *testing.T, r renderedEtcd) *etcdProcesses {
	t.Helper()
	bin, err := localcluster.BinDir()
	if err != nil {
		t.Fatal(err)
	}
	etcdBin := filepath.Join(bin, "etcd")
	if _, err := os.Stat(etcdBin); err != nil {
		t.Skipf("etcd is not built: %v", err)
	}
	dir := t.TempDir()
	serverDir, clientDir := filepath.Join(dir, "server-tls"), filepath.Join(dir, "client-tls")
	writeSecret(t, serverDir, r.serverTLS)
	writeSecret(t, clientDir, r.clientTLS)

	pod := r.sts.Spec.Template.Spec
	c := pod.Containers[0]
	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		mounts[m.Name] = m.MountPath
	}
	n := int(*r.sts.Spec.Replicas)
	var pairs []string
	type ports struct{ client, peer, metrics int }
	all := make([]ports, n)
	for i := range n {
		all[i] = ports{freePort(t), freePort(t), freePort(t)}
		host := fmt.Sprintf("convoy-etcd-%d.%s.%s.svc", i, r.sts.Spec.ServiceName, etcdNamespace)
		pairs = append(pairs, host+":2379", fmt.Sprintf("127.0.0.1:%d", all[i].client), host+":2380", fmt.Sprintf("127.0.0.1:%d", all[i].peer))
	}
	p := &etcdProcesses{clientDir: clientDir, hostMap: strings.NewReplacer(pairs...)}
	for i := range n {
		name := fmt.Sprintf("%s-%d", r.sts.Name, i)
		data := filepath.Join(dir, name)
		local := strings.NewReplacer(
			"$(POD_NAME)", name,
			"0.0.0.0:2379", fmt.Sprintf("127.0.0.1:%d", all[i].client),
			"0.0.0.0:2380", fmt.Sprintf("127.0.0.1:%d", all[i].peer),
			"0.0.0.0:2381", fmt.Sprintf("127.0.0.1:%d", all[i].metrics),
			mounts["tls"], serverDir,
			mounts["data"], data,
		)
		var args []string
		for _, a := range c.Command[1:] {
			a = p.hostMap.Replace(local.Replace(a))
			if strings.Contains(a, ".svc") || strings.Contains(a, "0.0.0.0") || strings.Contains(a, "$(") {
				t.Fatalf("%s: the flag %s of the render names an address this test does not map", name, a)
			}
			args = append(args, a)
		}
		args = append([]string{etcdBin}, args...)
		p.members = append(p.members, &etcdMember{
			name: name, args: args, log: filepath.Join(dir, name+".log"),
			client:  fmt.Sprintf("https://127.0.0.1:%d", all[i].client),
			metrics: fmt.Sprintf("http://127.0.0.1:%d", all[i].metrics),
		})
	}
	t.Cleanup(func() {
		for _, m := range p.members {
			m.kill()
		}
	})
	return p
}

func (m *etcdMember) start(t *testing.T) {
	t.Helper()
	log, err := os.OpenFile(m.log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(m.args[0], m.args[1:]...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", m.name, err)
	}
	m.cmd, m.exited = cmd, make(chan struct{})
	go func() {
		_ = cmd.Wait()
		log.Close()
		close(m.exited)
	}()
}

// kill stops the member at once (SIGKILL, as a node that dies) and waits for it.
func (m *etcdMember) kill() {
	if m.cmd == nil {
		return
	}
	_ = m.cmd.Process.Signal(syscall.SIGKILL)
	<-m.exited
	m.cmd = nil
}

// ready polls the member's /readyz (the chart's readiness probe) until it answers 200.
func (m *etcdMember) waitReady(t *testing.T, timeout time.Duration) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		select {
		case <-m.exited:
			return false, fmt.Errorf("%s exited (log %s)", m.name, m.log)
		default:
		}
		resp, err := http.Get(m.metrics + "/readyz")
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
	if err != nil {
		t.Fatalf("%s is not ready: %v\n%s", m.name, err, tail(m.log))
	}
}

func tail(path string) string {
	b, _ := os.ReadFile(path)
	if len(b) > 3000 {
		b = b[len(b)-3000:]
	}
	return string(b)
}

// etcdClient is an etcd client with the client certificate of convoy's processes.
func (p *etcdProcesses) etcdClient(t *testing.T, endpoints ...string) *clientv3.Client {
	t.Helper()
	cert, err := tls.LoadX509KeyPair(filepath.Join(p.clientDir, "tls.crt"), filepath.Join(p.clientDir, "tls.key"))
	if err != nil {
		t.Fatal(err)
	}
	ca, err := os.ReadFile(filepath.Join(p.clientDir, "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	c, err := clientv3.New(clientv3.Config{
		Endpoints: endpoints, DialTimeout: 5 * time.Second,
		TLS: &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: pool, MinVersion: tls.VersionTLS12},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// leader returns the member that leads the cluster now.
func (p *etcdProcesses) leader(t *testing.T, c *clientv3.Client) *etcdMember {
	t.Helper()
	var leader *etcdMember
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		for _, m := range p.members {
			if m.cmd == nil {
				continue
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			s, err := c.Status(ctx, m.client)
			cancel()
			if err == nil && s.Leader != 0 && s.Leader == s.Header.MemberId {
				leader = m
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("no etcd leader: %v", err)
	}
	return leader
}

// startAPIServer runs convoy apiserver in this process with the flags of the
// rendered Deployment (its --etcd-servers mapped to the local members, its mounted
// client certificate to the test's folder; the etcd is the test's own, so its
// --etcd-prefix is kept) and returns a client configuration that
// talks to it directly as the cluster's admin.
func (p *etcdProcesses) startAPIServer(t *testing.T, d appsv1.Deployment) *convoyAPI {
	t.Helper()
	c := d.Spec.Template.Spec.Containers[0]
	if c.Args[0] != "apiserver" {
		t.Fatalf("convoy-apiserver runs %v, want the apiserver subcommand", c.Args)
	}
	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		mounts[m.Name] = m.MountPath
	}
	if mounts["etcd-tls"] == "" {
		t.Fatalf("convoy-apiserver mounts no etcd client certificate: %v", c.VolumeMounts)
	}
	var args []string
	for _, a := range c.Args[1:] {
		a = strings.ReplaceAll(p.hostMap.Replace(a), mounts["etcd-tls"], p.clientDir)
		if strings.HasPrefix(a, "--secure-port=") {
			continue // the test's listener
		}
		args = append(args, a)
	}
	opts := apiserver.NewOptions()
	fs := pflag.NewFlagSet("apiserver", pflag.ContinueOnError)
	opts.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatalf("convoy apiserver's flags %v: %v", args, err)
	}
	ctx := context.Background()
	const identity = "convoy-apiserver-etcd-test"
	if err := apiserver.GrantHostAccess(ctx, env.admin, rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: identity}); err != nil {
		t.Fatal(err)
	}
	kubeconfig, err := env.cluster.UserKubeconfig(identity)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ro := opts.RecommendedOptions
	ro.SecureServing.Listener, ro.SecureServing.BindPort = ln, ln.Addr().(*net.TCPAddr).Port
	ro.Authentication.RemoteKubeConfigFile = kubeconfig
	ro.Authorization.RemoteKubeConfigFile = kubeconfig
	ro.CoreAPI.CoreAPIKubeconfigPath = kubeconfig
	srv, err := opts.NewServer()
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- srv.Run(runCtx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
		}
	})
	cfg := env.cluster.RestConfig()
	tlsCfg, err := rest.TLSConfigFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tlsCfg.RootCAs, tlsCfg.InsecureSkipVerify = nil, true // the server's self-signed certificate
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: tlsCfg, MaxIdleConnsPerHost: 256}, Timeout: 90 * time.Second}
	base := fmt.Sprintf("https://127.0.0.1:%d", ro.SecureServing.BindPort)
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(context.Context) (bool, error) {
		resp, err := hc.Get(base + "/readyz")
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
	if err != nil {
		t.Fatalf("convoy apiserver is not ready: %v", err)
	}
	// Ready is not yet authenticating: the delegated client CA loads on its own.
	api := &convoyAPI{base: base, http: hc}
	testenv.Eventually(t, ctx, "convoy apiserver to serve the admin", time.Minute, func() (bool, string) {
		res := api.do(ctx, http.MethodGet, "/apis/"+convoyv1alpha1.SchemeGroupVersion.String()+"/releases", "", nil)
		return res.code == http.StatusOK, fmt.Sprintf("%d %v %s", res.code, res.err, res.body)
	})
	return api
}

// convoyAPI talks to one convoy apiserver over plain HTTP requests, so that every
// response's status is seen (client-go would retry a 503 with Retry-After itself).
type convoyAPI struct {
	base string
	http *http.Client
}

type apiResponse struct {
	code       int
	retryAfter string
	body       string
	err        error
}

func (a *convoyAPI) do(ctx context.Context, method, path, contentType string, body []byte) apiResponse {
	req, err := http.NewRequestWithContext(ctx, method, a.base+path, bytes.NewReader(body))
	if err != nil {
		return apiResponse{err: err}
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := a.http.Do(req)
	if err != nil {
		return apiResponse{err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return apiResponse{code: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After"), body: string(b), err: err}
}

func releasesPath(ns string) string {
	return "/apis/" + convoyv1alpha1.SchemeGroupVersion.String() + "/namespaces/" + ns + "/releases"
}

const stepAnnotation = "test.convoy.kumodo.io/step"

func (a *convoyAPI) createRelease(ctx context.Context, ns, name string) apiResponse {
	r := convoyv1alpha1.Release{
		TypeMeta:   metav1.TypeMeta{APIVersion: convoyv1alpha1.SchemeGroupVersion.String(), Kind: "Release"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: map[string]string{stepAnnotation: "0"}},
		Spec: convoyv1alpha1.ReleaseSpec{
			Chart: convoyv1alpha1.ChartSource{Repository: "https://charts.example.com", Name: "podinfo", Version: "6.7.1"},
		},
	}
	b, _ := json.Marshal(r)
	return a.do(ctx, http.MethodPost, releasesPath(ns), "application/json", b)
}

func (a *convoyAPI) setStep(ctx context.Context, ns, name string, step int) apiResponse {
	b := fmt.Sprintf(`{"metadata":{"annotations":{%q:"%d"}}}`, stepAnnotation, step)
	return a.do(ctx, http.MethodPatch, releasesPath(ns)+"/"+name, "application/merge-patch+json", []byte(b))
}

func (a *convoyAPI) step(ctx context.Context, ns, name string) (int, apiResponse) {
	res := a.do(ctx, http.MethodGet, releasesPath(ns)+"/"+name, "", nil)
	if res.err != nil || res.code != http.StatusOK {
		return -1, res
	}
	var r convoyv1alpha1.Release
	if err := json.Unmarshal([]byte(res.body), &r); err != nil {
		return -1, apiResponse{err: err}
	}
	n, err := strconv.Atoi(r.Annotations[stepAnnotation])
	if err != nil {
		return -1, apiResponse{err: fmt.Errorf("annotation %s: %w", stepAnnotation, err)}
	}
	return n, res
}

// writeLoad is the concurrent writers of TestChartEtcdKeepsEveryWrite: each
// creates its Release and then sets its step annotation to 1, 2, 3, … one
// acknowledged write after the other, until stopped; a write that fails is
// repeated with the same step.
type writeLoad struct {
	api  *convoyAPI
	ns   string
	stop chan struct{}
	wg   sync.WaitGroup

	mu        sync.Mutex
	acked     map[string]int // the Release's last step the API acknowledged
	attempted map[string]int // the Release's last step written, acknowledged or not
	writes    int            // acknowledged writes
	errors    []loadError    // failed writes
}

type loadError struct {
	at   time.Time
	what string
	res  apiResponse
}

func (l *writeLoad) run(name string) {
	defer l.wg.Done()
	ctx := context.Background()
	step := 0
	for {
		select {
		case <-l.stop:
			return
		default:
		}
		var res apiResponse
		if step == 0 {
			res = l.api.createRelease(ctx, l.ns, name)
		} else {
			res = l.api.setStep(ctx, l.ns, name, step)
		}
		ok := res.err == nil && (res.code == http.StatusCreated || res.code == http.StatusOK)
		if step == 0 && res.code == http.StatusConflict {
			ok = true // created by an earlier attempt whose answer was lost
		}
		l.mu.Lock()
		l.attempted[name] = step
		if ok {
			l.acked[name] = step
			l.writes++
			step++
		} else {
			l.errors = append(l.errors, loadError{at: time.Now(), what: fmt.Sprintf("%s step %d", name, step), res: res})
		}
		l.mu.Unlock()
	}
}

func (l *writeLoad) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.writes
}

// waitWrites waits until n more writes than now were acknowledged.
func (l *writeLoad) waitWrites(t *testing.T, n int, timeout time.Duration) {
	t.Helper()
	want := l.count() + n
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		return l.count() >= want, nil
	})
	if err != nil {
		t.Fatalf("the writers did not make %d more writes (at %d): %v", n, l.count(), err)
	}
}

// convoy's etcd (decisions 0181, 0182): the chart's etcd, rendered with the default values (three members,
// peer and client TLS with the certificates the chart made) and started as
// processes with the StatefulSet's command, and convoy apiserver with the
// Deployment's flags (every member in --etcd-servers, the client certificate).
// Under 200 concurrent Release writers the leader is killed and started again:
// every acknowledged write is kept (each Release ends at its last acknowledged step,
// and the restarted member has every Release), and no request fails beyond the
// leader election. With two members gone every request of convoy's group is
// answered within seconds with 503 and a message naming etcd (quorum.go), /readyz
// fails, and the API serves again once they are back.
func TestChartEtcdKeepsEveryWrite(t *testing.T) {
	needCluster(t)
	r := renderEtcd(t, nil)
	if n := *r.sts.Spec.Replicas; n != 3 {
		t.Fatalf("the chart's etcd has %d members by default, want 3", n)
	}
	p := newEtcdProcesses(t, r)
	for _, m := range p.members {
		m.start(t)
	}
	for _, m := range p.members {
		m.waitReady(t, 2*time.Minute)
	}
	var endpoints []string
	for _, m := range p.members {
		endpoints = append(endpoints, m.client)
	}
	etcd := p.etcdClient(t, endpoints...)
	checkTLSOnly(t, p)

	api := p.startAPIServer(t, r.apiserver)
	kube := kubernetes.NewForConfigOrDie(env.admin)
	ns := "convoy-etcd-" + testenv.RandomSuffix()
	if _, err := kube.CoreV1().Namespaces().Create(ctx(t), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	const writers = 200
	load := &writeLoad{api: api, ns: ns, stop: make(chan struct{}), acked: map[string]int{}, attempted: map[string]int{}}
	for i := range writers {
		load.wg.Add(1)
		go load.run(fmt.Sprintf("r-%03d", i))
	}
	stopped := false
	stopLoad := func() {
		if !stopped {
			close(load.stop)
			load.wg.Wait()
			stopped = true
		}
	}
	t.Cleanup(stopLoad)
	load.waitWrites(t, 2*writers, 3*time.Minute)

	// The leader dies; the others elect a new one while the writers go on.
	leader := p.leader(t, etcd)
	killed := time.Now()
	leader.kill()
	t.Logf("Killed the leader %s at %d acknowledged writes", leader.name, load.count())
	var rest []string
	for _, m := range p.members {
		if m != leader {
			rest = append(rest, m.client)
		}
	}
	newLeader := p.leader(t, p.etcdClient(t, rest...))
	elected := time.Now()
	t.Logf("%s leads after %s", newLeader.name, elected.Sub(killed).Round(time.Millisecond))
	load.waitWrites(t, 2*writers, 3*time.Minute)
	leader.start(t)
	leader.waitReady(t, 2*time.Minute)
	load.waitWrites(t, 2*writers, 3*time.Minute)
	stopLoad()

	// Nothing lost: each Release is at its last acknowledged step, or at the step
	// after it when that write failed with an unknown outcome (a 500 "request timed
	// out" of a proposal that the new leader committed).
	for name, acked := range load.acked {
		got, res := api.step(ctx(t), ns, name)
		if got < acked || got > load.attempted[name] {
			t.Errorf("Release %s is at step %d (%d %v), want its last acknowledged step %d (or at most %d, written without an answer)",
				name, got, res.code, res.err, acked, load.attempted[name])
		}
	}
	if len(load.acked) != writers {
		t.Errorf("%d Releases acknowledged, want %d", len(load.acked), writers)
	}
	// The member that came back has every Release (read from it alone).
	back := p.etcdClient(t, leader.client)
	// Every key of convoy's prefix: the test's etcd holds only the writers' Releases.
	prefix := "/registry/convoy.kumodo.io/"
	testenv.Eventually(t, ctx(t), "the restarted member to hold every Release", time.Minute, func() (bool, string) {
		c, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		resp, err := back.Get(c, prefix, clientv3.WithPrefix(), clientv3.WithCountOnly(), clientv3.WithSerializable())
		if err != nil {
			return false, err.Error()
		}
		return resp.Count >= writers, fmt.Sprintf("%d keys under %s", resp.Count, prefix)
	})
	// No failure beyond the leader election: a write fails only if it was proposed
	// before a new leader was elected (in flight at the old one, or waiting for the
	// election), and it fails by etcd's request timeout after that, give or take the
	// time a loaded machine takes to answer (2 s: CI runs every package at once).
	t.Logf("%d acknowledged writes, %d failed", load.writes, len(load.errors))
	for _, e := range load.errors {
		if e.at.Before(killed) || e.at.After(elected.Add(etcdRequestTimeout+2*time.Second)) {
			t.Errorf("%s failed at %s (kill at %s, leader at %s): %d %v %s", e.what, e.at.Format(time.StampMilli),
				killed.Format(time.StampMilli), elected.Format(time.StampMilli), e.res.code, e.res.err, e.res.body)
		}
	}

	// Quorum lost: two of three members gone. Within a few seconds (two failed
	// probes of etcd) every request of convoy's group is answered at once with 503,
	// Retry-After and a message that names etcd, and the API serves again once a
	// majority is back.
	lost := []*etcdMember{p.members[1], p.members[2]}
	for _, m := range lost {
		m.kill()
	}
	quorumLost := time.Now()
	probes := []struct {
		what string
		do   func(context.Context) apiResponse
	}{
		{"GET", func(c context.Context) apiResponse { _, res := api.step(c, ns, "r-000"); return res }},
		{"PATCH", func(c context.Context) apiResponse { return api.setStep(c, ns, "r-000", 1000) }},
		{"POST", func(c context.Context) apiResponse { return api.createRelease(c, ns, "after-quorum-loss") }},
	}
	const noQuorum = "convoy's storage (etcd) has no quorum"
	testenv.Eventually(t, ctx(t), "convoy apiserver to answer 503 without quorum", apiRequestTimeout, func() (bool, string) {
		c, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		res := api.do(c, http.MethodGet, releasesPath(ns)+"/r-000", "", nil)
		return res.code == http.StatusServiceUnavailable, fmt.Sprintf("%d %v %s", res.code, res.err, res.body)
	})
	if took := time.Since(quorumLost); took > 10*time.Second {
		t.Errorf("the first 503 came %s after the quorum was lost, want within a few seconds", took.Round(time.Millisecond))
	}
	for _, probe := range probes {
		c, cancel := context.WithTimeout(context.Background(), 2*apiRequestTimeout)
		start := time.Now()
		res := probe.do(c)
		took := time.Since(start)
		cancel()
		t.Logf("Without quorum %s answered %d in %s: %s", probe.what, res.code, took.Round(time.Millisecond), res.body)
		if res.err != nil || res.code != http.StatusServiceUnavailable || res.retryAfter == "" || !strings.Contains(res.body, noQuorum) || took > time.Second {
			t.Errorf("without quorum %s answered %d (Retry-After %q) %v %s after %s, want 503 with Retry-After and %q at once",
				probe.what, res.code, res.retryAfter, res.err, res.body, took.Round(time.Millisecond), noQuorum)
		}
	}
	// Its /readyz (the Deployment's readiness probe) fails, so that in a cluster the
	// Pods leave the Service and the aggregator answers 503 at once.
	testenv.Eventually(t, ctx(t), "convoy apiserver's /readyz to fail without quorum", time.Minute, func() (bool, string) {
		c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		res := api.do(c, http.MethodGet, "/readyz", "", nil)
		return res.err == nil && res.code >= 500, fmt.Sprintf("%d %v %s", res.code, res.err, res.body)
	})
	for _, m := range lost {
		m.start(t)
	}
	testenv.Eventually(t, ctx(t), "the API to serve writes again", 2*time.Minute, func() (bool, string) {
		c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		res := api.setStep(c, ns, "r-000", 2000)
		return res.code == http.StatusOK, fmt.Sprintf("%d %v %s", res.code, res.err, res.body)
	})
	testenv.Eventually(t, ctx(t), "convoy apiserver's /readyz to pass again", time.Minute, func() (bool, string) {
		res := api.do(ctx(t), http.MethodGet, "/readyz", "", nil)
		return res.code == http.StatusOK, fmt.Sprintf("%d %v %s", res.code, res.err, res.body)
	})
	if got, _ := api.step(ctx(t), ns, "r-000"); got != 2000 {
		t.Errorf("r-000 at step %d after the quorum came back, want 2000", got)
	}
}

// checkTLSOnly: the members serve clients only over TLS and only with a client
// certificate of the chart's CA.
func checkTLSOnly(t *testing.T, p *etcdProcesses) {
	t.Helper()
	m := p.members[0]
	ca, err := os.ReadFile(filepath.Join(p.clientDir, "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	noCert := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}, Timeout: 10 * time.Second}
	resp, err := noCert.Get(m.client + "/version")
	if err == nil {
		resp.Body.Close()
		t.Errorf("%s answered a client without a certificate: %s", m.name, resp.Status)
	}
	plain := &http.Client{Timeout: 10 * time.Second}
	resp, err = plain.Get(strings.Replace(m.client, "https://", "http://", 1) + "/version")
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Errorf("%s answered plain HTTP", m.name)
		}
	}
}
