// Package testenv is what the integration tests of convoy's packages share: a TestMain
// that runs them against a local control plane (or only the unit tests with -short),
// polling helpers with a deadline, a namespace per test and an admin client, and the
// reads and waits of Releases and ReleaseSets, managers and chart repositories they
// repeat. Only tests, the test harnesses (test/, internal/apiserver/apiservertest,
// internal/testenv/convoytest) and the benchmarks import it.
package testenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"kumodo.io/convoy/internal/localcluster"
)

// Main is a package's TestMain. With -short it runs only the tests (the integration
// tests skip themselves). Otherwise it runs setup, which starts what the tests need
// (control planes, convoy's API server, a chart repository) through s, then the tests,
// then stops everything setup started, newest first. It exits with the tests' code, or
// 1 when setup fails.
func Main(m *testing.M, setup func(s *Setup) error) {
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run())
	}
	code, err := run(m, setup)
	if err != nil {
		fmt.Fprintf(os.Stderr, "integration setup: %v\n", err)
		os.Exit(1)
	}
	os.Exit(code)
}

func run(m *testing.M, setup func(s *Setup) error) (int, error) {
	ctx, cancel := context.WithCancel(context.Background())
	s := &Setup{ctx: ctx}
	defer func() {
		for i := len(s.stops) - 1; i >= 0; i-- {
			s.stops[i]()
		}
		cancel()
	}()
	if err := setup(s); err != nil {
		return 0, err
	}
	return m.Run(), nil
}

// Setup is what Main's setup function starts things with.
type Setup struct {
	ctx   context.Context
	stops []func()
}

// Context lasts until the tests are done.
func (s *Setup) Context() context.Context { return s.ctx }

// Cleanup registers stop to run after the tests, before what was registered earlier.
func (s *Setup) Cleanup(stop func()) { s.stops = append(s.stops, stop) }

// Cluster starts a local control plane with opts, stopped after the tests; what names
// it in errors ("the host control plane").
func (s *Setup) Cluster(what string, opts localcluster.Options) (*localcluster.Cluster, error) {
	c, err := localcluster.Start(s.ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", what, err)
	}
	s.Cleanup(func() {
		if err := c.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "stop %s: %v\n", what, err)
		}
	})
	return c, nil
}

// Serve serves h on a loopback port (a chart repository) until the tests are done and
// returns its URL.
func (s *Setup) Serve(h http.Handler) string {
	srv := httptest.NewServer(h)
	s.Cleanup(srv.Close)
	return srv.URL
}

// QuietLogs sends klog (the in-process API server, client-go) nowhere and
// controller-runtime's log nowhere too, unless CONVOY_TEST_LOG is set: then the
// controllers' log goes to stderr at verbosity 1. The test output stays the tests'.
func QuietLogs() {
	klog.LogToStderr(false)
	klog.SetOutput(io.Discard)
	logger := logr.Discard()
	if os.Getenv("CONVOY_TEST_LOG") != "" {
		logger = funcr.New(func(prefix, args string) { fmt.Fprintln(os.Stderr, prefix, args) }, funcr.Options{Verbosity: 1})
	}
	ctrllog.SetLogger(logger)
}

// Integration skips t with -short: it needs a local control plane.
func Integration(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: needs the local control plane (run without -short)")
	}
}

// Eventually polls cond every 100 ms until it holds, for at most timeout (or until ctx
// ends); then it fails t with what cond said last.
func Eventually(t testing.TB, ctx context.Context, what string, timeout time.Duration, cond func() (bool, string)) {
	t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		ok, msg := cond()
		last = msg
		return ok, nil
	})
	if err != nil {
		t.Fatalf("waiting for %s: %v; last: %s", what, err, last)
	}
}

// Consistently checks that cond holds for the whole of d, polling every 100 ms; it
// fails t as soon as it does not. It proves that something does not happen.
func Consistently(t testing.TB, ctx context.Context, what string, d time.Duration, cond func() (bool, string)) {
	t.Helper()
	var broke string
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, d, true, func(context.Context) (bool, error) {
		ok, msg := cond()
		if !ok {
			broke = msg
			return false, errors.New(msg)
		}
		return false, nil
	})
	if broke != "" {
		t.Fatalf("%s: %s", what, broke)
	}
	if err != nil && !wait.Interrupted(err) {
		t.Fatalf("%s: %v", what, err)
	}
}

// RandomSuffix is 8 random hex digits, for names that must not repeat across runs.
func RandomSuffix() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// DNSName makes s (a test name) fit into a Kubernetes name: lowercase, [a-z0-9-], at
// most 40 characters.
func DNSName(s string) string {
	s = strings.ToLower(s)
	s = strings.Map(func(r rune) rune {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			return r
		}
		return '-'
	}, s)
	if len(s) > 40 {
		s = s[:40]
	}
	return strings.Trim(s, "-")
}

// Namespace creates a namespace for t named after prefix and the test, with labels,
// and returns its name. It is left to the control plane's end.
func Namespace(t testing.TB, ctx context.Context, c client.Client, prefix string, labels map[string]string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-" + DNSName(t.Name()) + "-", Labels: labels}}
	if err := c.Create(ctx, ns); err != nil {
		t.Fatalf("create the test's namespace: %v", err)
	}
	return ns.Name
}

// Client is a client of cfg with scheme and a dynamic REST mapper, so that kinds
// installed during the test (CRDs) are found.
func Client(t testing.TB, cfg *rest.Config, scheme *runtime.Scheme) client.Client {
	t.Helper()
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mapper, err := apiutil.NewDynamicRESTMapper(cfg, httpClient)
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{HTTPClient: httpClient, Mapper: mapper, Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
