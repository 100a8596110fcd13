package notify_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/apiserver/apiservertest"
	"kumodo.io/convoy/internal/controller"
	"kumodo.io/convoy/internal/hostmanager"
	"kumodo.io/convoy/internal/localcluster"
	"kumodo.io/convoy/internal/notify"
	"kumodo.io/convoy/internal/testenv"
)

// The package's integration tests run against a real local control plane with
// workloads (kwok's nodes, so Deployments become Available, or never do) and convoy's
// API server in this process; real HTTP servers stand in for Slack, Teams and webhook
// receivers. With -short only the table tests run.

var (
	controlPlane *localcluster.Cluster
	chartsURL    string
)

func TestMain(m *testing.M) {
	apiservertest.Main(m, apiservertest.MainOptions{
		Name: "notify", Cluster: localcluster.Options{Workloads: true},
		Host: &controlPlane, Charts: "testdata/charts", ChartsURL: &chartsURL,
	})
}

type env struct {
	t   *testing.T
	ctx context.Context
	ns  string
	c   client.Client
}

func newEnv(t *testing.T) *env {
	t.Helper()
	testenv.Integration(t)
	scheme, err := hostmanager.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	ctx, c, ns := testenv.SetUp(t, controlPlane.RestConfig(), scheme, 4*time.Minute, "notify")
	return &env{t: t, ctx: ctx, c: c, ns: ns}
}

// request is a request a target received.
type request struct {
	body   string
	header http.Header
}

// target is an HTTP server standing in for Slack, Teams or a webhook receiver: it
// records each request and answers the next status of its script (200 when spent).
type target struct {
	url    string
	mu     sync.Mutex
	got    []request
	script []int
}

func newTarget(t *testing.T, script ...int) *target {
	tg := &target{script: script}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		tg.mu.Lock()
		tg.got = append(tg.got, request{body: string(body), header: r.Header.Clone()})
		status := http.StatusOK
		if len(tg.script) > 0 {
			status, tg.script = tg.script[0], tg.script[1:]
		}
		tg.mu.Unlock()
		w.WriteHeader(status)
	}))
	t.Cleanup(srv.Close)
	tg.url = srv.URL + "/services/T000/B000/secret"
	return tg
}

func (tg *target) requests() []request {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	return append([]request(nil), tg.got...)
}

// events are the "event" of each request body (webhook bodies), or the Slack text.
func (tg *target) events() []string {
	var out []string
	for _, r := range tg.requests() {
		var b struct {
			Event string `json:"event"`
			Text  string `json:"text"`
		}
		_ = json.Unmarshal([]byte(r.body), &b)
		out = append(out, b.Event+b.Text)
	}
	return out
}

// waitRequests waits until tg received n requests and returns them.
func (e *env) waitRequests(tg *target, n int) []request {
	e.t.Helper()
	testenv.Eventually(e.t, e.ctx, fmt.Sprintf("%d requests", n), time.Minute, func() (bool, string) {
		got := tg.requests()
		return len(got) >= n, fmt.Sprintf("%d requests: %v", len(got), tg.events())
	})
	return tg.requests()
}

func (e *env) create(obj client.Object) {
	e.t.Helper()
	if err := e.c.Create(e.ctx, obj); err != nil {
		e.t.Fatalf("create %T %s: %v", obj, obj.GetName(), err)
	}
}

func (e *env) secret(ns, name, address, token string) {
	e.t.Helper()
	data := map[string][]byte{v1.SecretKeyAddress: []byte(address)}
	if token != "" {
		data[v1.SecretKeyToken] = []byte(token)
	}
	e.create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: data})
}

func (e *env) alert(name string, t v1.AlertProviderType, secret, uiURL string, events ...v1.AlertEvent) *v1.Alert {
	e.t.Helper()
	a := &v1.Alert{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name}, Spec: v1.AlertSpec{
		Events: events, UIURL: uiURL,
		Provider: v1.AlertProvider{Type: t, SecretRef: v1.LocalObjectReference{Name: secret}},
	}}
	e.create(a)
	return a
}

func (e *env) getAlert(name string) *v1.Alert {
	e.t.Helper()
	a := &v1.Alert{}
	if err := e.c.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: name}, a); err != nil {
		e.t.Fatal(err)
	}
	return a
}

// waitAlertReady waits until the Alert's Ready condition has reason and returns it.
func (e *env) waitAlertReady(name, reason string) *v1.Alert {
	e.t.Helper()
	var a *v1.Alert
	testenv.Eventually(e.t, e.ctx, "Alert "+name+" Ready reason "+reason, time.Minute, func() (bool, string) {
		a = e.getAlert(name)
		c := apimeta.FindStatusCondition(a.Status.Conditions, v1.ConditionReady)
		return c != nil && c.Reason == reason, fmt.Sprintf("status %+v", a.Status)
	})
	return a
}

// notifier is a Notifier started by a test on a manager of its own.
type notifier struct {
	t       testing.TB
	metrics *prometheus.Registry
	stop    func()
}

func (n *notifier) count(provider v1.AlertProviderType, result string) int {
	n.t.Helper()
	return int(testenv.Counter(n.t, n.metrics, "convoy_alert_deliveries_total", map[string]string{"provider": string(provider), "result": result}))
}

// startNotifier runs a Notifier alone on a controller manager limited to namespaces
// (the test's by default), with a short backoff; Cleanup stops it.
func (e *env) startNotifier(namespaces ...string) *notifier {
	e.t.Helper()
	if len(namespaces) == 0 {
		namespaces = []string{e.ns}
	}
	mgr, err := controller.NewManager(controlPlane.RestConfig(), controller.ManagerOptions{
		MetricsBindAddress: "0", HealthProbeBindAddress: "0", Namespaces: namespaces,
	})
	if err != nil {
		e.t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	nt, err := notify.Setup(mgr, notify.Options{Metrics: reg, BaseDelay: 200 * time.Millisecond, MaxDelay: time.Second, MaxAttempts: 60})
	if err != nil {
		e.t.Fatal(err)
	}
	stop := testenv.RunManager(e.t, e.ctx, "notifier manager", mgr)
	select {
	case <-nt.Started():
	case <-e.ctx.Done():
		e.t.Fatal("the notifier did not start")
	}
	return &notifier{t: e.t, metrics: reg, stop: stop}
}
