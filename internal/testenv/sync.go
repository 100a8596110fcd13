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
	PostBoundSync(t, ctx, cfg, ns, name, "", force)
}

// PostBoundSync is PostSync bound to render (?render=, a full or a short render ref;
// none when empty): it approves that render only, and fails t unless it is answered
// 200 (a render that is not the current one is answered 409).
func PostBoundSync(t testing.TB, ctx context.Context, cfg *rest.Config, ns, name, render string, force bool) {
	t.Helper()
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	query := url.Values{}
	if render != "" {
		query.Set("render", render)
	}
	if force {
		query.Set("force", "true")
	}
	u := fmt.Sprintf("%s/apis/%s/namespaces/%s/releases/%s/sync", cfg.Host, v1.SchemeGroupVersion, ns, name)
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", u, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: %s: %s", u, resp.Status, body)
	}
}
