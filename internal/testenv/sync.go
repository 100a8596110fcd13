package testenv

import (
	"context"
	"net/http"
	"net/url"
	"testing"

	"k8s.io/client-go/rest"
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
	query := url.Values{}
	if render != "" {
		query.Set("render", render)
	}
	if force {
		query.Set("force", "true")
	}
	path := "releases/" + name + "/sync"
	if len(query) > 0 {
		path += "?" + query.Encode()
	}
	if code, body := Post(t, ctx, cfg, ns, path); code != http.StatusOK {
		t.Fatalf("POST %s: %d %s: %s", path, code, http.StatusText(code), body)
	}
}
