package ui

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// syncBackend records the /sync requests; current is the Release's render: a request
// bound to another one is refused as the API server refuses it (409).
type syncBackend struct {
	Backend
	current string
	got     []v1.SyncOptions
}

func (b *syncBackend) Sync(_ context.Context, ns, name string, opts v1.SyncOptions) (*v1.Release, error) {
	b.got = append(b.got, opts)
	if opts.Render != "" && !v1.RenderRef(opts.Render).Names(b.current) {
		return nil, apierrors.NewConflict(schema.GroupResource{Group: v1.GroupName, Resource: "releases/sync"}, name,
			errors.New("render "+v1.RenderRef(opts.Render).Short()+" is not the current render "+v1.RenderRef(b.current).Short()))
	}
	rel := &v1.Release{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: map[string]string{
		v1.AnnotationSyncRequestedAt: "2026-12-02T10:04:05Z",
	}}}
	if opts.Render != "" {
		rel.Annotations[v1.AnnotationSyncRequestedRender] = b.current
	}
	return rel, nil
}

// The Sync button approves the render whose diff the page shows: the endpoint passes
// ?render= (and ?force=) on to POST releases/NAME/sync, answers with the render the
// server bound the request to, and maps the server's 409 (the render changed) to a
// 409 that tells the page to draw the new diff and ask again. A malformed render is
// refused before any request.
func TestSyncForwardsTheRenderAndMapsTheConflict(t *testing.T) {
	const (
		current = "sha256:9a2b0c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b"
		older   = "sha256:4f1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c"
	)
	cases := map[string]struct {
		query    string
		code     int
		sent     []v1.SyncOptions
		body     map[string]any
		errorHas bool
	}{
		"the render of the diff shown": {
			query: "?render=" + current, code: http.StatusOK,
			sent: []v1.SyncOptions{{Render: current}},
			body: map[string]any{"requestedAt": "2026-12-02T10:04:05Z", "forceRequestedAt": "", "render": current},
		},
		"its short form, forced": {
			query: "?render=9a2b0c1d2e&force=true", code: http.StatusOK,
			sent: []v1.SyncOptions{{Force: true, Render: "9a2b0c1d2e"}},
			body: map[string]any{"requestedAt": "2026-12-02T10:04:05Z", "forceRequestedAt": "", "render": current},
		},
		"no render: the plain /sync": {
			query: "", code: http.StatusOK,
			sent: []v1.SyncOptions{{}},
			body: map[string]any{"requestedAt": "2026-12-02T10:04:05Z", "forceRequestedAt": "", "render": ""},
		},
		"a render that is no longer current": {
			query: "?render=" + older, code: http.StatusConflict,
			sent:     []v1.SyncOptions{{Render: older}},
			body:     map[string]any{"renderChanged": true},
			errorHas: true,
		},
		"a malformed render": {
			query: "?render=4f1c", code: http.StatusBadRequest,
			body:     map[string]any{},
			errorHas: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			backend := &syncBackend{current: current}
			allowed := accessKey{namespace: "team-a", resource: v1.ResourceReleases, subresource: v1.SubresourceSync, verb: "create"}
			s := &Server{opts: Options{Backend: backend}, access: &accessCache{ttl: time.Hour, entries: map[accessKey]accessEntry{
				allowed: {allowed: true, at: time.Now()},
			}}}
			r := httptest.NewRequest(http.MethodPost, "/api/releases/team-a/web/sync"+tc.query, nil)
			r.SetPathValue("ns", "team-a")
			r.SetPathValue("name", "web")
			w := httptest.NewRecorder()
			s.sync(w, r)
			if w.Code != tc.code {
				t.Fatalf("status %d, want %d: %s", w.Code, tc.code, w.Body.String())
			}
			if diff := cmp.Diff(tc.sent, backend.got); diff != "" {
				t.Errorf("/sync requests (-want +got):\n%s", diff)
			}
			var body map[string]any
			if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
				t.Fatalf("body %q: %v", w.Body.String(), err)
			}
			if msg, _ := body["error"].(string); (msg != "") != tc.errorHas {
				t.Errorf("error %q, want one: %v", msg, tc.errorHas)
			}
			delete(body, "error")
			if diff := cmp.Diff(tc.body, body); diff != "" {
				t.Errorf("body (-want +got):\n%s", diff)
			}
		})
	}
}
