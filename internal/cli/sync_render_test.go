package cli

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// What a person approves is what convoy applies: `release sync NAME` approves the
// render the Release has now (status.render.ref, what `release diff` shows), and
// says which. The server writes the full ref to sync-requested-render.
func TestReleaseSyncBindsToTheCurrentRender(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	createRenderedRelease(t, ns, "podinfo")
	res := plugin(t, nil, "release", "sync", "podinfo", "-n", ns)
	if res.code != ExitOK {
		t.Fatalf("exit %d, stderr %s", res.code, res.stderr)
	}
	a := getRelease(t, ns, "podinfo").Annotations
	if a[v1.AnnotationSyncRequestedRender] != refB {
		t.Errorf("%s = %q, want the current render %s", v1.AnnotationSyncRequestedRender, a[v1.AnnotationSyncRequestedRender], refB)
	}
	if want := "release.convoy.kumodo.io/podinfo sync of render 9a2b0c1d2e requested at " + a[v1.AnnotationSyncRequestedAt] + "\n"; res.stdout != want {
		t.Errorf("stdout = %q, want %q", res.stdout, want)
	}
}

// --render names the render to approve, in full or in its 10-digit short form; the
// server writes the full ref either way. A malformed ref is a usage error (exit 2)
// found before any request, and so are --render with --any-render.
func TestReleaseSyncRenderFlag(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	createRenderedRelease(t, ns, "podinfo")
	for name, ref := range map[string]string{"short": "9a2b0c1d2e", "full": refB} {
		t.Run(name, func(t *testing.T) {
			before := getRelease(t, ns, "podinfo").Annotations[v1.AnnotationSyncRequestedAt]
			res := plugin(t, nil, "release", "sync", "podinfo", "--render", ref, "--force", "-n", ns)
			if res.code != ExitOK {
				t.Fatalf("exit %d, stderr %s", res.code, res.stderr)
			}
			a := getRelease(t, ns, "podinfo").Annotations
			if a[v1.AnnotationSyncRequestedRender] != refB {
				t.Errorf("%s = %q, want the full ref %s", v1.AnnotationSyncRequestedRender, a[v1.AnnotationSyncRequestedRender], refB)
			}
			if a[v1.AnnotationSyncRequestedAt] == before {
				t.Errorf("%s not written anew: %s", v1.AnnotationSyncRequestedAt, before)
			}
			if want := "forced sync of render 9a2b0c1d2e requested at " + a[v1.AnnotationSyncRequestedAt]; !strings.Contains(res.stdout, want) {
				t.Errorf("stdout = %q, want %q", res.stdout, want)
			}
		})
	}
	written := getRelease(t, ns, "podinfo").Annotations[v1.AnnotationSyncRequestedAt]
	for _, args := range [][]string{
		{"--render", "4f1c"},
		{"--render", "sha256:9A2B"},
		{"--render", refB, "--any-render"},
	} {
		res := plugin(t, nil, append([]string{"release", "sync", "podinfo", "-n", ns}, args...)...)
		if res.code != ExitUsage {
			t.Errorf("%v: exit %d, want 2; stderr %s", args, res.code, res.stderr)
		}
	}
	if a := getRelease(t, ns, "podinfo").Annotations[v1.AnnotationSyncRequestedAt]; a != written {
		t.Errorf("a usage error sent a /sync: %s moved from %s to %s", v1.AnnotationSyncRequestedAt, written, a)
	}
}

// --any-render sends the plain /sync, which approves any render: no
// sync-requested-render (a bound request before it is replaced), the line of the
// plain request, and it needs no render yet.
func TestReleaseSyncAnyRender(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	createRenderedRelease(t, ns, "podinfo")
	if res := plugin(t, nil, "release", "sync", "podinfo", "-n", ns); res.code != ExitOK {
		t.Fatalf("bound sync: exit %d, stderr %s", res.code, res.stderr)
	}
	res := plugin(t, nil, "release", "sync", "podinfo", "--any-render", "-n", ns)
	if res.code != ExitOK {
		t.Fatalf("exit %d, stderr %s", res.code, res.stderr)
	}
	a := getRelease(t, ns, "podinfo").Annotations
	if r, ok := a[v1.AnnotationSyncRequestedRender]; ok {
		t.Errorf("--any-render left %s=%s", v1.AnnotationSyncRequestedRender, r)
	}
	if want := "release.convoy.kumodo.io/podinfo sync requested at " + a[v1.AnnotationSyncRequestedAt] + "\n"; res.stdout != want {
		t.Errorf("stdout = %q, want %q", res.stdout, want)
	}

	createRelease(t, ns, "fresh")
	if res := plugin(t, nil, "release", "sync", "fresh", "--any-render", "-n", ns); res.code != ExitOK {
		t.Errorf("--any-render of a Release not rendered yet: exit %d, stderr %s", res.code, res.stderr)
	}
}

// A Release the controller has not rendered yet has no render to approve: the
// plain `release sync` says so and what to do, and sends nothing.
func TestReleaseSyncBeforeTheFirstRender(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	createRelease(t, ns, "podinfo")
	res := plugin(t, nil, "release", "sync", "podinfo", "-n", ns)
	if res.code != ExitFailure {
		t.Errorf("exit %d, want 1", res.code)
	}
	for _, want := range []string{"has not rendered it", "--any-render"} {
		if !strings.Contains(res.stderr, want) {
			t.Errorf("stderr %q lacks %q", res.stderr, want)
		}
	}
	if a := getRelease(t, ns, "podinfo").Annotations[v1.AnnotationSyncRequestedAt]; a != "" {
		t.Errorf("a /sync was sent: %s=%s", v1.AnnotationSyncRequestedAt, a)
	}
}

// A render that is not the current one is refused (409): the plugin says the render
// changed, names the current one and what to do, exits 1, and nothing is written.
func TestReleaseSyncConflict(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	createRenderedRelease(t, ns, "podinfo")
	res := plugin(t, nil, "release", "sync", "podinfo", "--render", refA, "-n", ns)
	if res.code != ExitFailure {
		t.Errorf("exit %d, want 1; stdout %q", res.code, res.stdout)
	}
	for _, want := range []string{
		"the sync approved render 4f1c2d3e4f, the current render is 9a2b0c1d2e",
		"nothing was requested",
		"kubectl convoy release diff podinfo",
	} {
		if !strings.Contains(res.stderr, want) {
			t.Errorf("stderr %q lacks %q", res.stderr, want)
		}
	}
	if res.stdout != "" {
		t.Errorf("stdout %q, want nothing", res.stdout)
	}
	if a := getRelease(t, ns, "podinfo").Annotations; a[v1.AnnotationSyncRequestedAt] != "" || a[v1.AnnotationSyncRequestedRender] != "" {
		t.Errorf("a refused /sync wrote %v", a)
	}
}

// --wait follows the render it approved: handled once that render (or the pinned
// one) is applied with the request handled; failed when the render changed while the
// request was pending (the controller waits for a new approval: Applied=False,
// WaitingForSync).
func TestReleaseSyncWaitFailsWhenTheRenderChanges(t *testing.T) {
	requested := now.Add(-2 * time.Second).Truncate(time.Second)
	value := v1.FormatSyncTime(requested)
	before := metav1.NewTime(requested.Add(-time.Minute))
	same := metav1.NewTime(requested)
	// A status unlike every case's: each case is a status written after the request.
	baseline := statusFingerprint(testRelease("team-a", "podinfo", applied(v1.ReasonWaitingForSync, "baseline")))
	changed := "sync " + value + " not applied: it approved render 9a2b0c1d2e, but the current render is 4f1c2d3e4f; " +
		"review it with `kubectl convoy release diff podinfo` and sync again"
	tests := map[string]struct {
		render string
		r      *v1.Release
		want   Outcome
		msg    string
	}{
		"the approved render is current, the request pending": {
			render: refB,
			r:      testRelease("team-a", "podinfo", rendered(refB, "6.7.1"), applied(v1.ReasonWaitingForSync, "waits"), syncRequested(value, &before)),
			want:   Waiting,
		},
		"the approved render applied, the request handled": {
			render: refB,
			r: testRelease("team-a", "podinfo", rendered(refB, "6.7.1"), applied(v1.ReasonApplied, "ok"), lastSuccessful(refB, "6.7.1"),
				syncRequested(value, &same)),
			want: Handled, msg: "sync " + value + " handled: render 9a2b0c1d2e applied",
		},
		"the render changed while the request was pending": {
			render: refB,
			r:      testRelease("team-a", "podinfo", rendered(refA, "6.7.2"), applied(v1.ReasonWaitingForSync, "approve it"), syncRequested(value, &before)),
			want:   Failed, msg: changed,
		},
		"the render changed, the request named by the short form": {
			render: "9a2b0c1d2e",
			r:      testRelease("team-a", "podinfo", rendered(refA, "6.7.2"), applied(v1.ReasonWaitingForSync, "approve it"), syncRequested(value, &before)),
			want:   Failed, msg: changed,
		},
		"automatic mode applied another render": {
			render: refB,
			r:      testRelease("team-a", "podinfo", automatic(), rendered(refA, "6.7.2"), applied(v1.ReasonApplied, "ok"), lastSuccessful(refA, "6.7.2")),
			want:   Failed, msg: changed,
		},
		"the render changed, but the approved render is the pinned one": {
			render: refB,
			r: testRelease("team-a", "podinfo", rendered(refA, "6.7.2"), pinned(refB, "hold"), applied(v1.ReasonWaitingForSync, "waits"),
				syncRequested(value, &before)),
			want: Waiting,
		},
		"pinned: the current render approved, the pinned one applied": {
			render: refB,
			r: testRelease("team-a", "podinfo", rendered(refB, "6.7.1"), pinned(refA, "hold"), applied(v1.ReasonApplied, "ok"),
				lastSuccessful(refA, "6.7.0"), syncRequested(value, &same)),
			want: Handled,
		},
		"a plain request follows any render": {
			r:    testRelease("team-a", "podinfo", rendered(refA, "6.7.2"), applied(v1.ReasonWaitingForSync, "waits"), syncRequested(value, &before)),
			want: Waiting,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			w := SyncWait{At: requested, Render: tc.render, Baseline: baseline}
			got, msg := w.Judge(tc.r, now)
			if got != tc.want {
				t.Fatalf("Judge = %v (%s), want %v", got, msg, tc.want)
			}
			if tc.msg != "" && msg != tc.msg {
				t.Errorf("message = %q, want %q", msg, tc.msg)
			}
		})
	}
}

// The line a /sync prints names the render it approved.
func TestSyncWhat(t *testing.T) {
	for _, tc := range []struct {
		force  bool
		render string
		want   string
	}{
		{false, refB, "sync of render 9a2b0c1d2e"},
		{true, refB, "forced sync of render 9a2b0c1d2e"},
		{false, "9a2b0c1d2e", "sync of render 9a2b0c1d2e"},
		{false, "", "sync"},
		{true, "", "forced sync"},
	} {
		if got := syncWhat(tc.force, tc.render); got != tc.want {
			t.Errorf("syncWhat(%v, %q) = %q, want %q", tc.force, tc.render, got, tc.want)
		}
	}
}
