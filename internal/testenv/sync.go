package testenv

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"testing"

	"k8s.io/client-go/rest"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// PostSync sends POST releases/<name>/sync (with ?force=true when force) in the
// namespace ns as the identity of cfg, as a person or the observer does, and fails t
// unless it is answered 200.
func PostSync(t testing.TB, ctx context.Context, cfg *rest.Config, ns, name string, force bool) {
	t.Helper()
	query := ""
	if force {
		query = "?force=true"
	}
	postSync(t, ctx, cfg, ns, name, query)
}

// PostBoundSync sends POST releases/<name>/sync?render=<render>, the approval of one
// render, as PostSync sends a plain one.
func PostBoundSync(t testing.TB, ctx context.Context, cfg *rest.Config, ns, name, render string) {
	t.Helper()
	postSync(t, ctx, cfg, ns, name, "?render="+url.QueryEscape(render))
}

func postSync(t testing.TB, ctx context.Context, cfg *rest.Config, ns, name, query string) {
	t.Helper()
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	url := fmt.Sprintf("%s/apis/%s/namespaces/%s/releases/%s/sync%s", cfg.Host, v1.SchemeGroupVersion, ns, name, query)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: %s: %s", url, resp.Status, body)
	}
}
