package integration_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
)

// refC is a render that is neither refA nor refB (subresources_test.go).
const refC = "sha256:c0ffee0000000000000000000000000000000000000000000000000000000000"

// rendered creates the Release r and writes ref to its status.render.ref through
// /status, as the controller does after a render (it does not run here).
func rendered(t *testing.T, r *convoyv1alpha1.Release, ref string) *convoyv1alpha1.Release {
	t.Helper()
	created := create(t, r)
	created.Status.Render = &convoyv1alpha1.RenderStatus{Ref: ref}
	return update(t, created, "status")
}

// requireBound checks the sync request annotations a bound /sync wrote: a UTC
// sync-requested-at and sync-requested-render = render.
func requireBound(t *testing.T, r *convoyv1alpha1.Release, render string) {
	t.Helper()
	if got := r.Annotations[convoyv1alpha1.AnnotationSyncRequestedRender]; got != render {
		t.Errorf("sync-requested-render = %q, want %q", got, render)
	}
	if at := r.Annotations[convoyv1alpha1.AnnotationSyncRequestedAt]; !syncTimeFormat.MatchString(at) {
		t.Errorf("sync-requested-at = %q, want a UTC time", at)
	}
}

// A /sync bound to the current render, by its full ref or its short form, writes
// sync-requested-at and sync-requested-render = the full ref; with force=true also
// sync-force-requested-at.
func TestSyncBoundToTheCurrentRender(t *testing.T) {
	ns := testNamespace(t)
	rendered(t, release(ns, "podinfo"), refA)

	full, err := postBoundSync(admin(t), ctx(t), ns, "podinfo", refA, "")
	if err != nil {
		t.Fatalf("POST /sync?render=%s: %v", refA, err)
	}
	requireBound(t, full, refA)
	if _, ok := full.Annotations[convoyv1alpha1.AnnotationSyncForceRequestedAt]; ok {
		t.Errorf("a bound /sync without force wrote sync-force-requested-at")
	}

	short := convoyv1alpha1.RenderRef(refA).Short()
	byShort, err := postBoundSync(admin(t), ctx(t), ns, "podinfo", short, "")
	if err != nil {
		t.Fatalf("POST /sync?render=%s: %v", short, err)
	}
	requireBound(t, byShort, refA)
	if first, second := parseSync(t, full.Annotations[convoyv1alpha1.AnnotationSyncRequestedAt]),
		parseSync(t, byShort.Annotations[convoyv1alpha1.AnnotationSyncRequestedAt]); !second.After(first) {
		t.Errorf("the second bound /sync wrote %s, not later than the first's %s", second, first)
	}

	forced, err := postBoundSync(admin(t), ctx(t), ns, "podinfo", short, "true")
	if err != nil {
		t.Fatalf("POST /sync?render=%s&force=true: %v", short, err)
	}
	requireBound(t, forced, refA)
	if at, force := forced.Annotations[convoyv1alpha1.AnnotationSyncRequestedAt],
		forced.Annotations[convoyv1alpha1.AnnotationSyncForceRequestedAt]; at != force {
		t.Errorf("sync-requested-at = %q, sync-force-requested-at = %q, want the same time", at, force)
	}
	if forced.Generation != 1 {
		t.Errorf("generation = %d, want 1", forced.Generation)
	}
	if stored := get(t, ns, "podinfo"); stored.Annotations[convoyv1alpha1.AnnotationSyncRequestedRender] != refA {
		t.Errorf("stored sync-requested-render = %q, want %q", stored.Annotations[convoyv1alpha1.AnnotationSyncRequestedRender], refA)
	}
}

// A /sync bound to a render that is not the current one is 409 Conflict naming the
// current render and what to do, and writes nothing: not before the first render,
// not with force, not over an earlier bound request.
func TestSyncBoundToAnotherRenderIsAConflict(t *testing.T) {
	ns := testNamespace(t)
	create(t, release(ns, "unrendered"))
	rendered(t, release(ns, "podinfo"), refA)

	cases := []struct {
		name, release, render, force string
		message                      []string
	}{
		{name: "another render", release: "podinfo", render: refB, message: []string{
			"render 9a2b0c1d2e is not the current render of Release " + ns + "/podinfo",
			"the current render is 4f1c000000",
			"kubectl convoy release diff podinfo -n " + ns, "kubectl convoy release sync podinfo -n " + ns}},
		{name: "another render, short, forced", release: "podinfo", render: "9a2b0c1d2e", force: "true",
			message: []string{"render 9a2b0c1d2e is not", "the current render is 4f1c000000"}},
		{name: "no render yet", release: "unrendered", render: refA,
			message: []string{"render 4f1c000000 is not the current render of Release " + ns + "/unrendered", "no render yet"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := get(t, ns, tc.release)
			_, err := postBoundSync(admin(t), ctx(t), ns, tc.release, tc.render, tc.force)
			if statusCode(err) != http.StatusConflict {
				t.Fatalf("POST /sync?render=%s: %v (status %d), want 409", tc.render, err, statusCode(err))
			}
			for _, m := range tc.message {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("message %q does not say %q", err, m)
				}
			}
			if after := get(t, ns, tc.release); after.ResourceVersion != before.ResourceVersion {
				t.Errorf("a refused /sync wrote the Release (resourceVersion %s → %s): annotations %v",
					before.ResourceVersion, after.ResourceVersion, after.Annotations)
			}
		})
	}

	// An accepted bound request stays as it is when a later one is refused.
	accepted, err := postBoundSync(admin(t), ctx(t), ns, "podinfo", refA, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := postBoundSync(admin(t), ctx(t), ns, "podinfo", refC, ""); statusCode(err) != http.StatusConflict {
		t.Fatalf("POST /sync?render=%s: %v, want 409", refC, err)
	}
	if got := get(t, ns, "podinfo"); got.ResourceVersion != accepted.ResourceVersion {
		t.Errorf("a refused /sync changed the accepted request: %v → %v", accepted.Annotations, got.Annotations)
	}
}

// A plain /sync approves any render, and so do the writes of /pin, /mutations and
// /lifecycle: each removes the render an earlier /sync was bound to.
func TestPlainSyncRemovesTheBoundRender(t *testing.T) {
	ns := testNamespace(t)
	r := create(t, release(ns, "podinfo"))
	r.Status.Render = &convoyv1alpha1.RenderStatus{Ref: refA}
	r.Status.LastSuccessful = &convoyv1alpha1.LastSuccessful{RenderRef: refA}
	update(t, r, "status")

	writes := map[string]func() (*convoyv1alpha1.Release, error){
		"plain /sync": func() (*convoyv1alpha1.Release, error) { return postSync(admin(t), ctx(t), ns, "podinfo", "") },
		"plain forced /sync": func() (*convoyv1alpha1.Release, error) {
			return postSync(admin(t), ctx(t), ns, "podinfo", "true")
		},
		"/pin": func() (*convoyv1alpha1.Release, error) {
			return mergePatch(admin(t), ctx(t), ns, "podinfo", "pin", map[string]interface{}{"pin": map[string]string{"reason": "freeze"}})
		},
		"/mutations": func() (*convoyv1alpha1.Release, error) {
			return mergePatch(admin(t), ctx(t), ns, "podinfo", "mutations", map[string]interface{}{
				"mutations": []map[string]string{{"patch": "metadata: {labels: {team: a}}"}}})
		},
		"/lifecycle": func() (*convoyv1alpha1.Release, error) {
			return mergePatch(admin(t), ctx(t), ns, "podinfo", "lifecycle", map[string]interface{}{
				"lifecycle": map[string]interface{}{"hooks": []convoyv1alpha1.Hook{hook("migrate")}}})
		},
	}
	for name, write := range writes {
		t.Run(name, func(t *testing.T) {
			bound, err := postBoundSync(admin(t), ctx(t), ns, "podinfo", refA, "")
			if err != nil {
				t.Fatal(err)
			}
			requireBound(t, bound, refA)
			got, err := write()
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if v, ok := got.Annotations[convoyv1alpha1.AnnotationSyncRequestedRender]; ok {
				t.Errorf("%s kept sync-requested-render %q", name, v)
			}
			at := parseSync(t, got.Annotations[convoyv1alpha1.AnnotationSyncRequestedAt])
			if !at.After(parseSync(t, bound.Annotations[convoyv1alpha1.AnnotationSyncRequestedAt])) {
				t.Errorf("%s wrote sync-requested-at %s, not later than the bound request's", name, at)
			}
		})
	}
}

// A pinned Release applies its pin: a /sync bound to pin.renderRef is accepted, as is
// one bound to the current render; any other is 409 naming both.
func TestSyncBoundToThePinnedRender(t *testing.T) {
	ns := testNamespace(t)
	r := create(t, release(ns, "podinfo"))
	r.Status.Render = &convoyv1alpha1.RenderStatus{Ref: refA}
	r.Status.LastSuccessful = &convoyv1alpha1.LastSuccessful{RenderRef: refB}
	update(t, r, "status")
	if _, err := mergePatch(admin(t), ctx(t), ns, "podinfo", "pin", map[string]interface{}{
		"pin": map[string]string{"reason": "incident"}}); err != nil {
		t.Fatalf("pinning: %v", err)
	}

	for _, render := range []string{refB, convoyv1alpha1.RenderRef(refB).Short()} {
		got, err := postBoundSync(admin(t), ctx(t), ns, "podinfo", render, "")
		if err != nil {
			t.Fatalf("POST /sync?render=%s of the pinned render: %v", render, err)
		}
		requireBound(t, got, refB)
	}
	got, err := postBoundSync(admin(t), ctx(t), ns, "podinfo", refA, "")
	if err != nil {
		t.Fatalf("POST /sync?render=%s of the current render of a pinned Release: %v", refA, err)
	}
	requireBound(t, got, refA)

	_, err = postBoundSync(admin(t), ctx(t), ns, "podinfo", refC, "")
	if statusCode(err) != http.StatusConflict {
		t.Fatalf("POST /sync?render=%s: %v, want 409", refC, err)
	}
	for _, m := range []string{"the current render is 4f1c000000", "pinned to render 9a2b0c1d2e"} {
		if !strings.Contains(err.Error(), m) {
			t.Errorf("message %q does not say %q", err, m)
		}
	}

	// Unpinned, the render of the pin is no longer one convoy would apply.
	if _, err := mergePatch(admin(t), ctx(t), ns, "podinfo", "pin", map[string]interface{}{"pin": nil}); err != nil {
		t.Fatalf("unpinning: %v", err)
	}
	if _, err := postBoundSync(admin(t), ctx(t), ns, "podinfo", refB, ""); statusCode(err) != http.StatusConflict {
		t.Errorf("POST /sync?render=%s after unpinning: %v, want 409", refB, err)
	}
}

// A render that is not a render ref, full or short, is 400, and nothing is written.
func TestSyncRenderNotARef(t *testing.T) {
	ns := testNamespace(t)
	r := rendered(t, release(ns, "podinfo"), refA)
	for _, render := range []string{"sha256:4f1c", "4F1C000000", "4f1c00000", "HEAD", "md5:4f1c000000"} {
		_, err := postBoundSync(admin(t), ctx(t), ns, "podinfo", render, "")
		if statusCode(err) != http.StatusBadRequest {
			t.Errorf("POST /sync?render=%s: %v (status %d), want 400", render, err, statusCode(err))
		}
	}
	if got := get(t, ns, "podinfo"); got.ResourceVersion != r.ResourceVersion {
		t.Errorf("a rejected /sync wrote the Release: annotations %v", got.Annotations)
	}
}

// sync-requested-render written through the main resource must be a full render ref:
// anything else is 422 naming the annotation.
func TestSyncRequestedRenderAnnotationValidated(t *testing.T) {
	ns := testNamespace(t)
	const path = "metadata.annotations[convoy.kumodo.io/sync-requested-render]"
	err := admin(t).Post().Namespace(ns).Resource("releases").Body(release(ns, "short", func(r *convoyv1alpha1.Release) {
		r.Annotations = map[string]string{convoyv1alpha1.AnnotationSyncRequestedRender: "4f1c000000"}
	})).Do(ctx(t)).Error()
	requireInvalid(t, err, path)

	r := create(t, release(ns, "podinfo"))
	for _, value := range []string{"4f1c000000", "sha256:4F1C" + strings.Repeat("0", 60), "", "sha256:4f1c"} {
		_, err := mergePatch(admin(t), ctx(t), ns, "podinfo", "", map[string]interface{}{
			"metadata": map[string]interface{}{"annotations": map[string]string{convoyv1alpha1.AnnotationSyncRequestedRender: value}}})
		requireInvalid(t, err, path)
	}
	if got := get(t, ns, "podinfo"); got.ResourceVersion != r.ResourceVersion {
		t.Errorf("the Release changed after rejected writes: annotations %v", got.Annotations)
	}
	got, err := mergePatch(admin(t), ctx(t), ns, "podinfo", "", map[string]interface{}{
		"metadata": map[string]interface{}{"annotations": map[string]string{convoyv1alpha1.AnnotationSyncRequestedRender: refA}}})
	if err != nil || got.Annotations[convoyv1alpha1.AnnotationSyncRequestedRender] != refA {
		t.Errorf("writing a full ref: %v, annotations %v", err, got.Annotations)
	}
}

// A switch from automatic to manual drops the sync requests made before it — each
// sync annotation the update leaves at its stored value — so that manual mode applies
// nothing until a /sync made after the switch. A value the same update changes, and
// every update that is no such switch, keep them. Through PUT, merge patch and
// server-side apply alike.
func TestSwitchToManualDropsOlderRequests(t *testing.T) {
	ns := testNamespace(t)
	const hourAgo = "2026-01-02T03:04:05Z" // a request made before the switch
	requests := map[string]string{
		convoyv1alpha1.AnnotationSyncRequestedAt:      hourAgo,
		convoyv1alpha1.AnnotationSyncForceRequestedAt: hourAgo,
		convoyv1alpha1.AnnotationSyncRequestedRender:  refA,
	}
	withRequests := func(automatic *bool) func(*convoyv1alpha1.Release) {
		return func(r *convoyv1alpha1.Release) {
			r.Spec.SyncPolicy.Automatic = automatic
			r.Annotations = map[string]string{"team": "a"}
			for k, v := range requests {
				r.Annotations[k] = v
			}
		}
	}
	requireDropped := func(t *testing.T, r *convoyv1alpha1.Release) {
		t.Helper()
		for k := range requests {
			if v, ok := r.Annotations[k]; ok {
				t.Errorf("%s = %q kept across the switch to manual", k, v)
			}
		}
		if r.Annotations["team"] != "a" {
			t.Errorf("annotations %v: another annotation was dropped", r.Annotations)
		}
	}
	requireKept := func(t *testing.T, r *convoyv1alpha1.Release) {
		t.Helper()
		for k, v := range requests {
			if r.Annotations[k] != v {
				t.Errorf("%s = %q, want %q kept", k, r.Annotations[k], v)
			}
		}
	}

	t.Run("PUT automatic to manual, then a /sync", func(t *testing.T) {
		r := rendered(t, release(ns, "put", withRequests(ptr.To(true))), refA)
		r.Spec.SyncPolicy.Automatic = ptr.To(false)
		switched := update(t, r, "")
		requireDropped(t, switched)
		if switched.Generation != 2 {
			t.Errorf("generation = %d, want 2", switched.Generation)
		}
		synced, err := postBoundSync(admin(t), ctx(t), ns, "put", refA, "")
		if err != nil {
			t.Fatalf("/sync after the switch: %v", err)
		}
		requireBound(t, synced, refA)
		if at := parseSync(t, synced.Annotations[convoyv1alpha1.AnnotationSyncRequestedAt]); !at.After(parseSync(t, hourAgo)) {
			t.Errorf("/sync after the switch wrote %s, not later than the dropped %s", at, hourAgo)
		}
	})

	t.Run("automatic to unset, requests a /sync made in automatic mode", func(t *testing.T) {
		rendered(t, release(ns, "unset", func(r *convoyv1alpha1.Release) { r.Spec.SyncPolicy.Automatic = ptr.To(true) }), refA)
		synced, err := postBoundSync(admin(t), ctx(t), ns, "unset", refA, "true")
		if err != nil {
			t.Fatal(err)
		}
		synced.Spec.SyncPolicy.Automatic = nil
		switched := update(t, synced, "")
		for _, k := range []string{convoyv1alpha1.AnnotationSyncRequestedAt, convoyv1alpha1.AnnotationSyncForceRequestedAt,
			convoyv1alpha1.AnnotationSyncRequestedRender} {
			if v, ok := switched.Annotations[k]; ok {
				t.Errorf("%s = %q, the /sync of automatic mode kept across the switch", k, v)
			}
		}
	})

	t.Run("a request written with the switch is kept", func(t *testing.T) {
		create(t, release(ns, "with", withRequests(ptr.To(true))))
		now := time.Now().UTC().Truncate(time.Second).Format(time.RFC3339)
		got, err := mergePatch(admin(t), ctx(t), ns, "with", "", map[string]interface{}{
			"metadata": map[string]interface{}{"annotations": map[string]string{convoyv1alpha1.AnnotationSyncRequestedAt: now}},
			"spec":     map[string]interface{}{"syncPolicy": map[string]interface{}{"automatic": false}}})
		if err != nil {
			t.Fatal(err)
		}
		if at := got.Annotations[convoyv1alpha1.AnnotationSyncRequestedAt]; at != now {
			t.Errorf("sync-requested-at = %q, want %q written with the switch", at, now)
		}
		for _, k := range []string{convoyv1alpha1.AnnotationSyncForceRequestedAt, convoyv1alpha1.AnnotationSyncRequestedRender} {
			if v, ok := got.Annotations[k]; ok {
				t.Errorf("%s = %q, unchanged by the switch, kept", k, v)
			}
		}
	})

	t.Run("manual to manual keeps them", func(t *testing.T) {
		r := create(t, release(ns, "manual", withRequests(ptr.To(false))))
		r.Spec.Chart.Version = "6.7.2"
		requireKept(t, update(t, r, ""))
	})

	t.Run("manual to automatic keeps them", func(t *testing.T) {
		create(t, release(ns, "toauto", withRequests(nil)))
		got, err := mergePatch(admin(t), ctx(t), ns, "toauto", "", map[string]interface{}{
			"spec": map[string]interface{}{"syncPolicy": map[string]interface{}{"automatic": true}}})
		if err != nil {
			t.Fatal(err)
		}
		requireKept(t, got)
	})

	t.Run("automatic, an update that keeps automatic keeps them", func(t *testing.T) {
		r := create(t, release(ns, "auto", withRequests(ptr.To(true))))
		r.Spec.Chart.Version = "6.7.2"
		requireKept(t, update(t, r, ""))
	})

	t.Run("server-side apply", func(t *testing.T) {
		manifest := func(automatic string) []byte {
			return []byte(`{"apiVersion":"convoy.kumodo.io/v1alpha1","kind":"Release","metadata":{"name":"applied","namespace":"` + ns + `"},
"spec":{"chart":{"repository":"https://charts.example.com","name":"podinfo"},"syncPolicy":{"automatic":` + automatic + `}}}`)
		}
		apply := func(body []byte) *convoyv1alpha1.Release {
			t.Helper()
			got := &convoyv1alpha1.Release{}
			if err := admin(t).Patch(types.ApplyPatchType).Namespace(ns).Resource("releases").Name("applied").
				Param("fieldManager", "alice").Body(body).Do(ctx(t)).Into(got); err != nil {
				t.Fatalf("server-side apply: %v", err)
			}
			return got
		}
		apply(manifest("true"))
		r := get(t, ns, "applied")
		r.Status.Render = &convoyv1alpha1.RenderStatus{Ref: refA}
		update(t, r, "status")
		if _, err := postBoundSync(admin(t), ctx(t), ns, "applied", refA, "true"); err != nil {
			t.Fatal(err)
		}
		switched := apply(manifest("false"))
		for _, k := range []string{convoyv1alpha1.AnnotationSyncRequestedAt, convoyv1alpha1.AnnotationSyncForceRequestedAt,
			convoyv1alpha1.AnnotationSyncRequestedRender} {
			if v, ok := switched.Annotations[k]; ok {
				t.Errorf("%s = %q kept across the switch to manual by server-side apply", k, v)
			}
		}
		// The same manifest again is no switch; a /sync after it is pending again.
		synced, err := postBoundSync(admin(t), ctx(t), ns, "applied", refA, "")
		if err != nil {
			t.Fatal(err)
		}
		if again := apply(manifest("false")); again.Annotations[convoyv1alpha1.AnnotationSyncRequestedAt] !=
			synced.Annotations[convoyv1alpha1.AnnotationSyncRequestedAt] {
			t.Errorf("a re-apply in manual mode dropped the /sync made after the switch: %v", again.Annotations)
		}
	})
}
