// Package secrets_test proves that the Secrets convoy handles never leak: one
// local control plane, convoy's API server, a chart repository behind
// basic auth, and `convoy controller` and `convoy observer` run as processes at the
// highest verbosity they accept (-v 7). A Release reads values from a Secret, fetches
// its chart with credentials from a Secret, and renders Secrets; another targets a
// remote Cluster whose kubeconfig is in a Secret. Every marker of those Secrets is
// then looked for in the processes' logs, the Events, the conditions, /metrics, the
// Renders read as a convoy-view user and `kubectl convoy release diff/render` run by
// that user.
//
// With -short nothing runs.
package secrets_test

import (
	"context"
	"crypto/subtle"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"kumodo.io/convoy/internal/apiserver/apiservertest"
	"kumodo.io/convoy/internal/dev"
	"kumodo.io/convoy/internal/localcluster"
	"kumodo.io/convoy/internal/render/chartrepo"
	"kumodo.io/convoy/internal/testenv"
)

// The chart repository's credentials; the password is a marker.
const (
	repoUser     = "convoy-reader"
	repoPassword = "convoy-marker-repo-password-9c1b0a77"
	// chartMarker is the literal the chart renders into a Secret.
	chartMarker = "convoy-chart-literal-secret-5d41402abc4b2a76"
)

// The processes' names (their users and log files).
const (
	controllerUser = "convoy-secrets-controller"
	observerUser   = "convoy-secrets-observer"
)

var (
	// host is the local control plane; nil with -short.
	host *localcluster.Cluster
	// charts is the URL of the chart repository (basic auth).
	charts string
	// metrics are the /metrics URLs of the controller and the observer.
	metrics = map[string]string{}
	// apiserverLog is the log of convoy apiserver (in this process) at -v 7.
	apiserverLog = &lockedBuffer{}
)

// lockedBuffer is a bytes.Buffer that many goroutines may write to.
type lockedBuffer = testenv.SyncBuffer

func TestMain(m *testing.M) {
	testenv.QuietLogs()
	// convoy apiserver runs in this process: its log (klog) goes to apiserverLog, at
	// the highest verbosity convoy accepts.
	klogFlags := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(klogFlags)
	if err := klogFlags.Set("v", "7"); err != nil {
		panic(err)
	}
	klog.SetOutput(apiserverLog)
	testenv.Main(m, func(s *testenv.Setup) (err error) {
		if host, err = s.Cluster("the local control plane", localcluster.Options{}); err != nil {
			return err
		}
		if err := apiservertest.StartIn(s, host, "secrets"); err != nil {
			return err
		}
		if charts, err = serveCharts(s); err != nil {
			return err
		}
		bin, err := buildConvoy(s)
		if err != nil {
			return err
		}
		return startProcesses(s, bin)
	})
}

// serveCharts serves testdata/charts behind basic auth (repoUser, repoPassword).
func serveCharts(s *testenv.Setup) (string, error) {
	repo, err := chartrepo.Build("testdata/charts")
	if err != nil {
		return "", err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, p, ok := r.BasicAuth()
		if !ok || u != repoUser || subtle.ConstantTimeCompare([]byte(p), []byte(repoPassword)) != 1 {
			w.Header().Set("WWW-Authenticate", `Basic realm="charts"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		repo.ServeHTTP(w, r)
	})}
	go func() { _ = srv.Serve(ln) }()
	s.Cleanup(func() { _ = srv.Close() })
	return "http://" + ln.Addr().String(), nil
}

// buildConvoy compiles cmd/convoy, as users run it.
func buildConvoy(s *testenv.Setup) (string, error) {
	dir, err := os.MkdirTemp("", "convoy-secrets-bin-")
	if err != nil {
		return "", err
	}
	s.Cleanup(func() { _ = os.RemoveAll(dir) })
	return localcluster.BuildConvoy(s.Context(), dir)
}

// startProcesses runs convoy controller and convoy observer at -v 7 with the rights
// convoy dev gives them, each with /metrics on a free port.
func startProcesses(s *testenv.Setup, bin string) error {
	dir, err := os.MkdirTemp("", "convoy-secrets-charts-")
	if err != nil {
		return err
	}
	s.Cleanup(func() { _ = os.RemoveAll(dir) })
	for _, p := range []struct {
		user, subcommand, ready string
		grant                   func(context.Context, *rest.Config, string) error
		extra                   []string
	}{
		{controllerUser, "controller", "/readyz/informers", dev.GrantController, []string{"--chart-cache-dir=" + dir}},
		{observerUser, "observer", "/readyz", dev.GrantObserver, nil},
	} {
		if err := p.grant(s.Context(), host.RestConfig(), p.user); err != nil {
			return err
		}
		kubeconfig, err := host.UserKubeconfig(p.user)
		if err != nil {
			return err
		}
		ports, err := freePorts(2)
		if err != nil {
			return err
		}
		metrics[p.subcommand] = "http://127.0.0.1:" + strconv.Itoa(ports[0]) + "/metrics"
		readyz := "http://127.0.0.1:" + strconv.Itoa(ports[1]) + p.ready
		args := append([]string{p.subcommand, "-v=7", "--kubeconfig=" + kubeconfig,
			"--metrics-bind-address=127.0.0.1:" + strconv.Itoa(ports[0]),
			"--health-probe-bind-address=127.0.0.1:" + strconv.Itoa(ports[1])}, p.extra...)
		ctx, cancel := context.WithTimeout(s.Context(), 2*time.Minute)
		err = host.Run(ctx, localcluster.Process{Name: p.user, Path: bin, Args: args, Ready: func(ctx context.Context) bool {
			return httpOK(ctx, readyz)
		}})
		cancel()
		if err != nil {
			return fmt.Errorf("start convoy %s: %w", p.subcommand, err)
		}
	}
	return nil
}

func freePorts(n int) ([]int, error) {
	var out []int
	var lns []net.Listener
	defer func() {
		for _, l := range lns {
			_ = l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		lns = append(lns, l)
		out = append(out, l.Addr().(*net.TCPAddr).Port)
	}
	return out, nil
}

func httpOK(ctx context.Context, url string) bool {
	body, err := get(ctx, url)
	return err == nil && body != ""
}

// get returns the body of a GET of url, an error unless 200.
func get(ctx context.Context, url string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", errors.New(resp.Status)
	}
	if len(b) == 0 {
		b = []byte("ok")
	}
	return string(b), nil
}
