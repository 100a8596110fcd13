package source

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/reasons"
)

func TestSelectVersion(t *testing.T) {
	offered := []string{"1.0.0", "1.1.0", "1.2.0-rc.1", "2.0.0", "not-semver", "v0.9.0"}
	cases := map[string]struct {
		want    string
		version string
		reason  string
		msgHas  string
	}{
		"empty is the latest stable":          {want: "", version: "2.0.0"},
		"exact":                               {want: "1.1.0", version: "1.1.0"},
		"exact with v prefix":                 {want: "v1.0.0", version: "1.0.0"},
		"exact pre-release":                   {want: "1.2.0-rc.1", version: "1.2.0-rc.1"},
		"range":                               {want: ">=1.0.0 <2.0.0", version: "1.1.0"},
		"tilde":                               {want: "~1.0", version: "1.0.0"},
		"caret":                               {want: "^1", version: "1.1.0"},
		"a v-prefixed offer":                  {want: "<1.0.0", version: "v0.9.0"},
		"pre-releases only when asked for":    {want: ">=1.2.0-0 <2.0.0", version: "1.2.0-rc.1"},
		"no version meets: the offers listed": {want: "^3", reason: v1alpha1.ReasonSourceNotReady, msgHas: "the repository offers 2.0.0, 1.2.0-rc.1, 1.1.0, 1.0.0, v0.9.0"},
		"exact version not offered":           {want: "1.0.1", reason: v1alpha1.ReasonSourceNotReady, msgHas: "has no version 1.0.1"},
		"not a constraint":                    {want: "latest please", reason: v1alpha1.ReasonUnsupported, msgHas: "fix spec.chart.version"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := selectVersion(offered, tc.want, "web")
			if diff := cmp.Diff(tc.reason, reasons.Of(err, "")); diff != "" {
				t.Fatalf("reason (-want +got):\n%s\nerror: %v", diff, err)
			}
			if err != nil {
				if !strings.Contains(err.Error(), tc.msgHas) {
					t.Fatalf("error %q does not say %q", err, tc.msgHas)
				}
				return
			}
			if diff := cmp.Diff(tc.version, got); diff != "" {
				t.Errorf("version (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSelectVersionNoStable(t *testing.T) {
	_, err := selectVersion([]string{"1.0.0-alpha.1"}, "", "web")
	if reasons.Of(err, "") != v1alpha1.ReasonSourceNotReady || !strings.Contains(err.Error(), "has no stable version; the repository offers 1.0.0-alpha.1") {
		t.Fatalf("got %v", err)
	}
}

func TestHTTPRepositorySelection(t *testing.T) {
	repo := newChartRepo(t).add("web", "1.0.0", "1.1.0", "1.2.0-rc.1", "2.0.0")
	r, _ := testRenderer(t)
	cases := map[string]struct {
		version string
		want    string
		reason  string
		msgHas  string
	}{
		"latest stable":  {version: "", want: "2.0.0"},
		"exact":          {version: "1.1.0", want: "1.1.0"},
		"constraint":     {version: ">=1.0.0 <2.0.0", want: "1.1.0"},
		"pre-release":    {version: "1.2.0-rc.1", want: "1.2.0-rc.1"},
		"none meets":     {version: "^3.0.0", reason: v1alpha1.ReasonSourceNotReady, msgHas: "offers 2.0.0, 1.2.0-rc.1, 1.1.0, 1.0.0"},
		"bad constraint": {version: "newest", reason: v1alpha1.ReasonUnsupported},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			res, err := r.Render(context.Background(), Request{Release: testRelease("web", repo.url(), "web", version(tc.version)), Capabilities: defaultCaps})
			if diff := cmp.Diff(tc.reason, reasons.Of(err, "")); diff != "" {
				t.Fatalf("reason (-want +got):\n%s\nerror: %v", diff, err)
			}
			if err != nil {
				if !strings.Contains(err.Error(), tc.msgHas) {
					t.Fatalf("error %q does not say %q", err, tc.msgHas)
				}
				return
			}
			if diff := cmp.Diff([]string{"web", tc.want}, []string{res.ChartName, res.ChartVersion}); diff != "" {
				t.Errorf("chart (-want +got):\n%s", diff)
			}
			if !strings.HasPrefix(res.ChartDigest, "sha256:") {
				t.Errorf("ChartDigest = %q", res.ChartDigest)
			}
		})
	}
}

func TestSourceErrors(t *testing.T) {
	cases := map[string]struct {
		setup  func(t *testing.T, repo *chartRepo) (repository, chart string)
		reason string
		msgHas string
	}{
		"scheme other than http, https, oci": {
			setup:  func(*testing.T, *chartRepo) (string, string) { return "git://example.com/charts", "web" },
			reason: v1alpha1.ReasonUnsupported, msgHas: `scheme "git"`,
		},
		"file scheme": {
			setup:  func(*testing.T, *chartRepo) (string, string) { return "file:///charts", "web" },
			reason: v1alpha1.ReasonUnsupported, msgHas: `scheme "file"`,
		},
		"connection refused": {
			setup: func(t *testing.T, _ *chartRepo) (string, string) {
				down := newChartRepo(t)
				down.Server.Close()
				return down.url(), "web"
			},
			reason: v1alpha1.ReasonSourceNotReady, msgHas: "cannot connect",
		},
		"host does not resolve": {
			setup:  func(*testing.T, *chartRepo) (string, string) { return "http://no-such-host.invalid", "web" },
			reason: v1alpha1.ReasonSourceNotReady, msgHas: "GET http://no-such-host.invalid/index.yaml",
		},
		"index answers 503": {
			setup: func(_ *testing.T, repo *chartRepo) (string, string) {
				repo.FailWith("/index.yaml", http.StatusServiceUnavailable)
				return repo.url(), "web"
			},
			reason: v1alpha1.ReasonSourceNotReady, msgHas: "503",
		},
		"index is not an index": {
			setup: func(_ *testing.T, repo *chartRepo) (string, string) {
				return repo.url() + "/charts/web-1.0.0.tgz?", "web"
			},
			reason: v1alpha1.ReasonSourceNotReady,
		},
		"chart not in the index": {
			setup:  func(_ *testing.T, repo *chartRepo) (string, string) { return repo.url(), "nope" },
			reason: v1alpha1.ReasonSourceNotReady, msgHas: `has no chart "nope"`,
		},
		"404 of a listed version": {
			setup: func(_ *testing.T, repo *chartRepo) (string, string) {
				repo.FailWith("/charts/web-1.0.0.tgz", http.StatusNotFound)
				return repo.url(), "web"
			},
			reason: v1alpha1.ReasonSourceNotReady, msgHas: "404",
		},
		"archive answers 500": {
			setup: func(_ *testing.T, repo *chartRepo) (string, string) {
				repo.FailWith("/charts/web-1.0.0.tgz", http.StatusInternalServerError)
				return repo.url(), "web"
			},
			reason: v1alpha1.ReasonSourceNotReady, msgHas: "500",
		},
		"digest mismatch": {
			setup: func(_ *testing.T, repo *chartRepo) (string, string) {
				repo.SetIndexDigest("web-1.0.0.tgz", strings.Repeat("ab", 32))
				return repo.url(), "web"
			},
			reason: v1alpha1.ReasonSourceNotReady, msgHas: "the index says sha256:abab",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			repo := newChartRepo(t).add("web", "1.0.0")
			repository, chart := tc.setup(t, repo)
			r, _ := testRenderer(t)
			_, err := r.Render(context.Background(), Request{Release: testRelease("web", repository, chart), Capabilities: defaultCaps})
			if diff := cmp.Diff(tc.reason, reasons.Of(err, "")); diff != "" {
				t.Fatalf("reason (-want +got):\n%s\nerror: %v", diff, err)
			}
			if !strings.Contains(err.Error(), tc.msgHas) {
				t.Errorf("error %q does not say %q", err, tc.msgHas)
			}
			if !strings.Contains(err.Error(), "Release team-a/web") {
				t.Errorf("error %q does not name the Release", err)
			}
		})
	}
}

func TestDigestMismatchRecovers(t *testing.T) {
	repo := newChartRepo(t).add("web", "1.0.0")
	repo.SetIndexDigest("web-1.0.0.tgz", strings.Repeat("00", 32))
	r, _ := testRenderer(t)
	rel := testRelease("web", repo.url(), "web")
	if _, err := r.Render(context.Background(), Request{Release: rel, Capabilities: defaultCaps}); reasons.Of(err, "") != v1alpha1.ReasonSourceNotReady {
		t.Fatalf("want SourceNotReady, got %v", err)
	}
	// The repository is fixed: the failed fetch dropped the cached index, so the
	// next render reads the index again, without waiting for the TTL.
	repo.SetIndexDigest("web-1.0.0.tgz", "")
	renderOK(t, r, Request{Release: rel})
	if got := repo.count("/index.yaml"); got != 2 {
		t.Errorf("index.yaml fetched %d times, want 2", got)
	}
}

func TestOCIRegistry(t *testing.T) {
	reg := newOCIRegistry(t)
	reg.push(t, "charts", "web", "1.0.0", "1.1.0", "2.0.0-beta.1", "1.1.1+build.7")
	r, _ := testRenderer(t)
	cases := map[string]struct {
		version string
		want    string
		reason  string
		msgHas  string
	}{
		"latest stable":             {version: "", want: "1.1.1+build.7"},
		"constraint":                {version: "~1.0.0", want: "1.0.0"},
		"exact pre-release":         {version: "2.0.0-beta.1", want: "2.0.0-beta.1"},
		"build metadata in the tag": {version: "1.1.1+build.7", want: "1.1.1+build.7"},
		"none meets: offers listed": {version: ">=3", reason: v1alpha1.ReasonSourceNotReady, msgHas: "offers 2.0.0-beta.1, 1.1.1+build.7, 1.1.0, 1.0.0"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rel := testRelease("web", "oci://"+reg.host+"/charts", "web", version(tc.version))
			res, err := r.Render(context.Background(), Request{Release: rel, Capabilities: defaultCaps})
			if diff := cmp.Diff(tc.reason, reasons.Of(err, "")); diff != "" {
				t.Fatalf("reason (-want +got):\n%s\nerror: %v", diff, err)
			}
			if err != nil {
				if !strings.Contains(err.Error(), tc.msgHas) {
					t.Fatalf("error %q does not say %q", err, tc.msgHas)
				}
				return
			}
			if diff := cmp.Diff(tc.want, res.ChartVersion); diff != "" {
				t.Errorf("version (-want +got):\n%s", diff)
			}
			if len(res.Objects) != 3 {
				t.Errorf("got objects %v", ids(res.Objects))
			}
		})
	}

	t.Run("missing repository", func(t *testing.T) {
		rel := testRelease("web", "oci://"+reg.host+"/charts", "nope")
		_, err := r.Render(context.Background(), Request{Release: rel, Capabilities: defaultCaps})
		if reasons.Of(err, "") != v1alpha1.ReasonSourceNotReady {
			t.Fatalf("want SourceNotReady, got %v", err)
		}
	})
	t.Run("registry down", func(t *testing.T) {
		down := newOCIRegistry(t)
		down.Server.Close()
		rel := testRelease("web", "oci://"+down.host+"/charts", "web")
		_, err := r.Render(context.Background(), Request{Release: rel, Capabilities: defaultCaps})
		if reasons.Of(err, "") != v1alpha1.ReasonSourceNotReady {
			t.Fatalf("want SourceNotReady, got %v", err)
		}
	})
}

func TestPlainHTTPHosts(t *testing.T) {
	r, err := New(Options{CacheDir: t.TempDir(), PlainHTTPHosts: []string{"registry.dev:5000", "plain.example"}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, h := range []string{"127.0.0.1:5000", "localhost", "[::1]:80", "registry.dev:5000", "plain.example:443", "ghcr.io", "registry.dev:5001"} {
		got[h] = r.plainHTTP(h)
	}
	want := map[string]bool{"127.0.0.1:5000": true, "localhost": true, "[::1]:80": true, "registry.dev:5000": true, "plain.example:443": true, "ghcr.io": false, "registry.dev:5001": false}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("plain HTTP (-want +got):\n%s", diff)
	}
}

func TestCredentials(t *testing.T) {
	const user, pass = "convoy", "s3cret"
	repo := newChartRepo(t).add("web", "1.0.0")
	inner := repo.Server.Config.Handler
	repo.Server.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if u, p, ok := req.BasicAuth(); !ok || u != user || p != pass {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		inner.ServeHTTP(w, req)
	})
	r, _ := testRenderer(t)
	rel := testRelease("web", repo.url(), "web")

	_, err := r.Render(context.Background(), Request{Release: rel, Capabilities: defaultCaps})
	if reasons.Of(err, "") != v1alpha1.ReasonSourceNotReady || !strings.Contains(err.Error(), "secretRef") {
		t.Fatalf("without credentials: want SourceNotReady naming secretRef, got %v", err)
	}
	creds := CredentialsFromSecret(map[string][]byte{"username": []byte(user), "password": []byte(pass)})
	renderOK(t, r, Request{Release: rel, Credentials: creds})

	// What the credentials fetched is not served to a request without them.
	_, err = r.Render(context.Background(), Request{Release: rel, Capabilities: defaultCaps})
	if reasons.Of(err, "") != v1alpha1.ReasonSourceNotReady {
		t.Fatalf("without credentials after a fetch with them: want SourceNotReady, got %v", err)
	}
	if CredentialsFromSecret(map[string][]byte{"other": []byte("x")}) != nil {
		t.Error("CredentialsFromSecret of a Secret without the keys is not nil")
	}
}

func TestCacheFetchesOnce(t *testing.T) {
	repo := newChartRepo(t).add("web", "1.0.0")
	r, clk := testRenderer(t)
	rel := testRelease("web", repo.url(), "web")

	renderConcurrently(t, r, rel, 100)
	for range 1000 {
		renderOK(t, r, Request{Release: rel})
	}
	got := map[string]int{"index": repo.count("/index.yaml"), "archive": repo.count("/charts/web-1.0.0.tgz")}
	if diff := cmp.Diff(map[string]int{"index": 1, "archive": 1}, got); diff != "" {
		t.Errorf("after 1,100 renders, fetches (-want +got):\n%s", diff)
	}

	// After the TTL the index is read again; the archive stays cached on disk.
	clk.Step(DefaultIndexTTL + 1)
	renderOK(t, r, Request{Release: rel})
	// A new process (a new Renderer on the same cache directory) reuses the archive.
	r2, err := newRenderer(Options{CacheDir: r.opts.CacheDir})
	if err != nil {
		t.Fatal(err)
	}
	renderOK(t, r2, Request{Release: rel})
	got = map[string]int{"index": repo.count("/index.yaml"), "archive": repo.count("/charts/web-1.0.0.tgz")}
	if diff := cmp.Diff(map[string]int{"index": 3, "archive": 1}, got); diff != "" {
		t.Errorf("after the TTL and a restart, fetches (-want +got):\n%s", diff)
	}
}

func TestOCICacheFetchesOnce(t *testing.T) {
	reg := newOCIRegistry(t)
	reg.push(t, "charts", "web", "1.0.0")
	pushBlobGets := reg.blobGets()
	r, _ := testRenderer(t)
	rel := testRelease("web", "oci://"+reg.host+"/charts", "web")
	renderConcurrently(t, r, rel, 100)
	got := map[string]int{
		"tag lists":      reg.count("GET /v2/charts/web/tags/list"),
		"blob downloads": reg.blobGets() - pushBlobGets,
	}
	// One pull: the config and the chart layer.
	if diff := cmp.Diff(map[string]int{"tag lists": 1, "blob downloads": 2}, got); diff != "" {
		t.Errorf("after 100 concurrent renders, requests (-want +got):\n%s", diff)
	}
}

func TestFetchTimeout(t *testing.T) {
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		select { // answer only when the client gives up (or the test ends)
		case <-req.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(slow.Close)
	t.Cleanup(func() { close(release) })
	r, err := newRenderer(Options{CacheDir: t.TempDir(), HTTPClient: &http.Client{Timeout: 200 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Render(context.Background(), Request{Release: testRelease("web", slow.URL, "web"), Capabilities: defaultCaps})
	if reasons.Of(err, "") != v1alpha1.ReasonSourceNotReady || !strings.Contains(err.Error(), "timed out") {
		t.Fatalf("want SourceNotReady saying it timed out, got %v", err)
	}
}

func TestCancelledContext(t *testing.T) {
	repo := newChartRepo(t).add("web", "1.0.0")
	r, _ := testRenderer(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := r.Render(ctx, Request{Release: testRelease("web", repo.url(), "web"), Capabilities: defaultCaps})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("want context.Canceled, got %v", err)
	}
}

// renderConcurrently renders rel n times at once with r, and fails t on any error.
func renderConcurrently(t *testing.T, r *renderer, rel *v1alpha1.Release, n int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Go(func() {
			if _, err := r.Render(context.Background(), Request{Release: rel, Capabilities: defaultCaps}); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}
