package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/hostmanager"
	"kumodo.io/convoy/internal/testenv"
)

// Decision 0152: convoy's processes started while kube-apiserver is away wait for it, logging
// what they wait for, and start when it is back (the controller reconciles a Release, the
// observer's and a second convoy apiserver's readiness pass), where the observer used to
// exit at once with "failed to get restmapping". With a short --startup-timeout and
// kube-apiserver still away, the observer and convoy apiserver exit non-zero with an
// error that says what they waited for and what to check.
func TestProcessesStartedWhileKubeAPIServerIsAwayWaitForIt(t *testing.T) {
	controlPlane := hostCluster(t)
	kubeconfig := controlPlane.KubeconfigPath()
	host := controlPlane.Host()
	if err := controlPlane.Kill("kube-apiserver"); err != nil {
		t.Fatal(err)
	}
	restarted := false
	t.Cleanup(func() {
		if !restarted {
			_ = controlPlane.Restart("kube-apiserver")
		}
	})

	hostFlags := func(probe int, extra ...string) []string {
		return append([]string{"--kubeconfig=" + kubeconfig, "--metrics-bind-address=0",
			"--health-probe-bind-address=127.0.0.1:" + strconv.Itoa(probe)}, extra...)
	}
	apiserverFlags := func(port int, extra ...string) []string {
		return append([]string{"apiserver", "--bind-address=127.0.0.1", "--secure-port=" + strconv.Itoa(port),
			"--etcd-servers=" + controlPlane.EtcdURL(), "--etcd-prefix=/convoy-startup-" + testenv.RandomSuffix(),
			"--kubeconfig=" + kubeconfig, "--authentication-kubeconfig=" + kubeconfig, "--authorization-kubeconfig=" + kubeconfig}, extra...)
	}
	controllerProbe, observerProbe, apiserverPort := freePort(t), freePort(t), freePort(t)
	controller := startConvoy(t, append([]string{"controller", "--chart-cache-dir=" + filepath.Join(t.TempDir(), "charts")},
		hostFlags(controllerProbe)...)...)
	observer := startConvoy(t, append([]string{"observer"}, hostFlags(observerProbe)...)...)
	apiserver := startConvoy(t, apiserverFlags(apiserverPort)...)
	shortObserver := startConvoy(t, append([]string{"observer", "--startup-timeout=3s"}, hostFlags(0)...)...)
	shortAPIServer := startConvoy(t, apiserverFlags(freePort(t), "--startup-timeout=3s")...)

	// The bounded ones give up with what they waited for and what to check.
	for name, tc := range map[string]struct {
		p    *convoyProcess
		want []string
	}{
		"observer": {p: shortObserver, want: []string{
			"Error: convoy observer gave up after 3s (--startup-timeout) waiting for kube-apiserver at " + host +
				" to serve convoy.kumodo.io/v1alpha1; check that kube-apiserver answers at " + host +
				", that convoy apiserver runs and that its APIService is Available (kubectl get apiservice v1alpha1.convoy.kumodo.io): " +
				"convoy.kumodo.io/v1alpha1 is not served: ",
			"connection refused",
		}},
		"apiserver": {p: shortAPIServer, want: []string{
			"Error: convoy apiserver gave up after 3s (--startup-timeout) waiting for kube-apiserver at " + host +
				" to serve the delegated authentication configuration (ConfigMap kube-system/extension-apiserver-authentication); check that kube-apiserver at " +
				host + " answers and that convoy apiserver's identity",
			"connection refused",
		}},
	} {
		if code := tc.p.waitExit(t, time.Minute); code != 1 {
			t.Errorf("convoy %s with --startup-timeout=3s exited %d, want 1", name, code)
		}
		for _, want := range tc.want {
			if out := tc.p.out.String(); !strings.Contains(out, want) {
				t.Errorf("convoy %s's output does not say %q:\n%s", name, want, out)
			}
		}
	}
	// The others still wait, and say what for.
	for name, p := range map[string]*convoyProcess{"controller": controller, "observer": observer, "apiserver": apiserver} {
		if done, err := p.exited(); done {
			t.Fatalf("convoy %s exited (%v) while kube-apiserver was away:\n%s", name, err, p.out.String())
		}
		if out := p.out.String(); !strings.Contains(out, `"Waiting"`) || !strings.Contains(out, "connection refused") {
			t.Errorf("convoy %s does not log what it waits for:\n%s", name, out)
		}
	}

	if err := controlPlane.Restart("kube-apiserver"); err != nil {
		t.Fatal(err)
	}
	restarted = true
	insecure := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	for name, url := range map[string]string{
		"controller": fmt.Sprintf("http://127.0.0.1:%d/readyz/informers", controllerProbe),
		"observer":   fmt.Sprintf("http://127.0.0.1:%d/readyz", observerProbe),
		"apiserver":  fmt.Sprintf("https://127.0.0.1:%d/readyz", apiserverPort),
	} {
		poll(t, "convoy "+name+" ready once kube-apiserver is back", 3*time.Minute, func(ctx context.Context) (bool, string) {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
			resp, err := insecure.Do(req)
			if err != nil {
				return false, err.Error()
			}
			resp.Body.Close()
			return resp.StatusCode == http.StatusOK, resp.Status
		})
	}
	// The controller works: it takes up a new Release.
	scheme, err := hostmanager.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	c := testenv.Client(t, controlPlane.RestConfig(), scheme)
	ns := testenv.Namespace(t, t.Context(), c, "startup", nil)
	rel := &v1.Release{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "after-the-outage"},
		Spec: v1.ReleaseSpec{Chart: v1.ChartSource{Repository: "http://127.0.0.1:1", Name: "nothing"}}}
	if err := c.Create(t.Context(), rel); err != nil {
		t.Fatal(err)
	}
	poll(t, "the controller's status on a Release created after the outage", time.Minute, func(ctx context.Context) (bool, string) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(rel), rel); err != nil {
			return false, err.Error()
		}
		return len(rel.Status.Conditions) > 0, fmt.Sprintf("conditions %v", rel.Status.Conditions)
	})
	for name, p := range map[string]*convoyProcess{"controller": controller, "observer": observer, "apiserver": apiserver} {
		if done, err := p.exited(); done {
			t.Errorf("convoy %s exited (%v)", name, err)
		}
	}
}
