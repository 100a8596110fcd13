package release

import (
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
)

func TestNextSyncRequest(t *testing.T) {
	now := time.Date(2026, 12, 2, 10, 4, 5, 700_000_000, time.UTC)
	at := func(s string) *metav1.Time {
		v, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return &metav1.Time{Time: v}
	}
	cases := map[string]struct {
		requested, forceRequested string
		handled, forceHandled     *metav1.Time
		force                     bool
		want                      string
	}{
		"nothing before: now, to the second":             {want: "2026-12-02T10:04:05Z"},
		"previous request earlier: now":                  {requested: "2026-12-02T10:04:01Z", want: "2026-12-02T10:04:05Z"},
		"previous request in the same second: one later": {requested: "2026-12-02T10:04:05Z", want: "2026-12-02T10:04:06Z"},
		"previous request ahead (clock behind)":          {requested: "2026-12-02T10:09:00Z", want: "2026-12-02T10:09:01Z"},
		"previous request with fraction and offset":      {requested: "2026-12-02T11:04:05.9+01:00", want: "2026-12-02T10:04:06Z"},
		"handled in the same second: one later":          {handled: at("2026-12-02T10:04:05Z"), want: "2026-12-02T10:04:06Z"},
		"handled ahead: one after it":                    {handled: at("2026-12-02T11:00:00Z"), want: "2026-12-02T11:00:01Z"},
		"unparseable previous request is ignored":        {requested: "yesterday", want: "2026-12-02T10:04:05Z"},
		"force handled ahead counts only with force":     {forceHandled: at("2026-12-02T11:00:00Z"), want: "2026-12-02T10:04:05Z"},
		"force: after the last handled force":            {forceHandled: at("2026-12-02T11:00:00Z"), force: true, want: "2026-12-02T11:00:01Z"},
		"force: after the previous force request":        {forceRequested: "2026-12-02T10:05:00Z", force: true, want: "2026-12-02T10:05:01Z"},
		"the latest of every bound wins":                 {requested: "2026-12-02T10:04:07Z", handled: at("2026-12-02T10:04:06Z"), want: "2026-12-02T10:04:08Z"},
		"never past the last RFC 3339 second":            {requested: "9999-12-31T23:59:59Z", want: "9999-12-31T23:59:59Z"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := &convoyv1alpha1.Release{}
			r.Annotations = map[string]string{}
			if tc.requested != "" {
				r.Annotations[convoyv1alpha1.AnnotationSyncRequestedAt] = tc.requested
			}
			if tc.forceRequested != "" {
				r.Annotations[convoyv1alpha1.AnnotationSyncForceRequestedAt] = tc.forceRequested
			}
			r.Status.LastHandledSyncAt, r.Status.LastHandledForceSyncAt = tc.handled, tc.forceHandled
			got := convoyv1alpha1.FormatSyncTime(NextSyncRequest(now, r, tc.force))
			if got != tc.want {
				t.Errorf("NextSyncRequest = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestRequestSyncWritesBothWithForceAndCopiesAnnotations(t *testing.T) {
	now := time.Date(2026, 12, 2, 10, 4, 5, 0, time.UTC)
	shared := map[string]string{"keep": "me"}
	r := &convoyv1alpha1.Release{}
	r.Annotations = shared
	requestSync(r, now, true, "")
	if r.Annotations[convoyv1alpha1.AnnotationSyncRequestedAt] != "2026-12-02T10:04:05Z" ||
		r.Annotations[convoyv1alpha1.AnnotationSyncForceRequestedAt] != "2026-12-02T10:04:05Z" || r.Annotations["keep"] != "me" {
		t.Errorf("annotations = %v", r.Annotations)
	}
	if len(shared) != 1 {
		t.Errorf("requestSync wrote into the shared (stored) map: %v", shared)
	}
	requestSync(r, now, false, "")
	if r.Annotations[convoyv1alpha1.AnnotationSyncRequestedAt] != "2026-12-02T10:04:06Z" ||
		r.Annotations[convoyv1alpha1.AnnotationSyncForceRequestedAt] != "2026-12-02T10:04:05Z" {
		t.Errorf("a second request in the same second: %v", r.Annotations)
	}
}

func TestRequestSyncWritesOrRemovesTheBoundRender(t *testing.T) {
	now := time.Date(2026, 12, 2, 10, 4, 5, 0, time.UTC)
	full := "sha256:" + strings.Repeat("ab", 32)
	cases := map[string]struct {
		before map[string]string
		force  bool
		render string
		want   map[string]string
	}{
		"a bound request writes the render": {
			render: full,
			want: map[string]string{convoyv1alpha1.AnnotationSyncRequestedAt: "2026-12-02T10:04:05Z",
				convoyv1alpha1.AnnotationSyncRequestedRender: full},
		},
		"a bound forced request writes all three": {
			force: true, render: full,
			want: map[string]string{convoyv1alpha1.AnnotationSyncRequestedAt: "2026-12-02T10:04:05Z",
				convoyv1alpha1.AnnotationSyncForceRequestedAt: "2026-12-02T10:04:05Z",
				convoyv1alpha1.AnnotationSyncRequestedRender:  full},
		},
		"a plain request removes the render of the previous one": {
			before: map[string]string{convoyv1alpha1.AnnotationSyncRequestedAt: "2026-12-02T10:00:00Z",
				convoyv1alpha1.AnnotationSyncRequestedRender: full, "keep": "me"},
			want: map[string]string{convoyv1alpha1.AnnotationSyncRequestedAt: "2026-12-02T10:04:05Z", "keep": "me"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := &convoyv1alpha1.Release{}
			r.Annotations = tc.before
			stored := maps.Clone(tc.before)
			requestSync(r, now, tc.force, tc.render)
			if diff := cmp.Diff(tc.want, r.Annotations); diff != "" {
				t.Errorf("annotations (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(stored, tc.before); diff != "" {
				t.Errorf("requestSync wrote into the stored map (-before +after):\n%s", diff)
			}
		})
	}
}

func TestBoundRender(t *testing.T) {
	current := "sha256:0123456789" + strings.Repeat("a", 54)
	pinned := "sha256:abcdef0123" + strings.Repeat("b", 54)
	other := "sha256:9999999999" + strings.Repeat("c", 54)
	release := func(render, pin string) *convoyv1alpha1.Release {
		r := &convoyv1alpha1.Release{}
		if render != "" {
			r.Status.Render = &convoyv1alpha1.RenderStatus{Ref: render}
		}
		if pin != "" {
			r.Pin = &convoyv1alpha1.Pin{RenderRef: pin}
		}
		return r
	}
	cases := map[string]struct {
		release *convoyv1alpha1.Release
		render  string
		want    string // the full ref; "" when refused
	}{
		"the current render, full":               {release: release(current, ""), render: current, want: current},
		"the current render, short":              {release: release(current, ""), render: "0123456789", want: current},
		"another render":                         {release: release(current, ""), render: other},
		"another render, short":                  {release: release(current, ""), render: "9999999999"},
		"no render yet":                          {release: release("", ""), render: current},
		"the pinned render of a pinned Release":  {release: release(current, pinned), render: pinned, want: pinned},
		"the pinned render, short":               {release: release(current, pinned), render: "abcdef0123", want: pinned},
		"the current render of a pinned Release": {release: release(current, pinned), render: "0123456789", want: current},
		"pinned before the first render":         {release: release("", pinned), render: pinned, want: pinned},
		"neither current nor pinned":             {release: release(current, pinned), render: other},
		"a prefix longer than the short form":    {release: release(current, ""), render: "0123456789a"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, ok := boundRender(tc.release, convoyv1alpha1.RenderRef(tc.render))
			if got != tc.want || ok != (tc.want != "") {
				t.Errorf("boundRender(%s) = %q, %v; want %q", tc.render, got, ok, tc.want)
			}
		})
	}
}

func TestNotCurrentRenderNamesTheCurrentRenderAndWhatToDo(t *testing.T) {
	current := "sha256:abcdef0123" + strings.Repeat("a", 54)
	pinned := "sha256:4444444444" + strings.Repeat("b", 54)
	asked := convoyv1alpha1.RenderRef("sha256:0123456789" + strings.Repeat("c", 54))
	const next = ": review the current render with kubectl convoy release diff web -n team-a and approve it with kubectl convoy release sync web -n team-a"
	cases := map[string]struct {
		render, pin string
		asked       convoyv1alpha1.RenderRef
		want        string
	}{
		"current render": {render: current, asked: asked,
			want: "render 0123456789 is not the current render of Release team-a/web (the current render is abcdef0123)" + next},
		"asked by the short form": {render: current, asked: "0123456789",
			want: "render 0123456789 is not the current render of Release team-a/web (the current render is abcdef0123)" + next},
		"no render yet": {asked: asked,
			want: "render 0123456789 is not the current render of Release team-a/web (it has no render yet)" + next},
		"pinned": {render: current, pin: pinned, asked: asked,
			want: "render 0123456789 is not the current render of Release team-a/web (the current render is abcdef0123, and it is pinned to render 4444444444)" + next},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := &convoyv1alpha1.Release{}
			if tc.render != "" {
				r.Status.Render = &convoyv1alpha1.RenderStatus{Ref: tc.render}
			}
			if tc.pin != "" {
				r.Pin = &convoyv1alpha1.Pin{RenderRef: tc.pin}
			}
			if diff := cmp.Diff(tc.want, notCurrentRender("team-a", "web", r, tc.asked)); diff != "" {
				t.Errorf("message (-want +got):\n%s", diff)
			}
		})
	}
}
