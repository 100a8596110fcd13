package apply

import (
	"net/http"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// requestCounter counts the requests that pass through a client, by kind.
type requestCounter struct {
	mu     sync.Mutex
	counts map[string]int // "read", "dry-run", "write"
}

func (c *requestCounter) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
		kind := "write"
		switch {
		case r.Method == http.MethodGet:
			kind = "read"
		case r.URL.Query().Get("dryRun") == "All":
			kind = "dry-run"
		}
		c.mu.Lock()
		c.counts[kind]++
		c.mu.Unlock()
		return rt.RoundTrip(r)
	})
}

func (c *requestCounter) take() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.counts
	c.counts = map[string]int{}
	return out
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// The performance goal of issue 4: at most 12 API requests for the first
// apply of a 4-object Release, and no write when nothing changed.
func TestRequestsPerApply(t *testing.T) {
	e := integration(t)
	counter := &requestCounter{counts: map[string]int{}}
	cfg := cluster.RestConfig()
	cfg.WrapTransport = counter.wrap
	c := newClient(t, cfg)
	applier := New(c, Options{})
	// A long-lived target client has discovered these kinds already.
	for _, gk := range []schema.GroupKind{{Kind: "ServiceAccount"}, {Kind: "ConfigMap"}, {Kind: "Service"}, {Group: "apps", Kind: "Deployment"}} {
		if _, err := c.RESTMapper().RESTMapping(gk); err != nil {
			t.Fatal(err)
		}
	}
	deployment := obj("apps/v1", "Deployment", e.ns, "web")
	deployment.Object["spec"] = map[string]any{
		"replicas": int64(0),
		"selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
		"template": map[string]any{
			"metadata": map[string]any{"labels": map[string]any{"app": "web"}},
			"spec":     map[string]any{"containers": []any{map[string]any{"name": "web", "image": "example.com/web:1"}}},
		},
	}
	service := obj("v1", "Service", e.ns, "web")
	service.Object["spec"] = map[string]any{"ports": []any{map[string]any{"port": int64(80)}}, "selector": map[string]any{"app": "web"}}
	render := []Object{
		{Object: obj("v1", "ServiceAccount", e.ns, "web")},
		{Object: configMap(e.ns, "web", map[string]string{"k": "v"})},
		{Object: service},
		{Object: deployment},
	}
	applyOnce := func() {
		plan, err := applier.DryRun(e.ctx, render)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := applier.ApplyWave(e.ctx, plan, 0); err != nil {
			t.Fatal(err)
		}
	}
	counter.take()

	applyOnce()
	if diff := cmp.Diff(map[string]int{"read": 4, "dry-run": 4, "write": 4}, counter.take()); diff != "" {
		t.Errorf("requests of the first apply (-want +got):\n%s", diff)
	}
	applyOnce()
	if diff := cmp.Diff(map[string]int{"read": 4, "dry-run": 4}, counter.take()); diff != "" {
		t.Errorf("requests of an unchanged apply (-want +got):\n%s", diff)
	}
}
