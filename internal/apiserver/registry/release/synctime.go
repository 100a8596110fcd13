package release

import (
	"fmt"
	"maps"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/apiserver/validation"
)

// NextSyncRequest returns the time a sync request made at now writes to
// sync-requested-at: max(now, previous annotation + 1s, status.lastHandledSyncAt + 1s),
// to the second (api.md, "No lost request"). So a request in the same second as the
// one just handled, or from a replica whose clock is behind, is still later than every
// request already handled. A forced request also stays later than the previous forced
// one and than status.lastHandledForceSyncAt, since it writes the same value to both
// annotations.
func NextSyncRequest(now time.Time, r *convoyv1alpha1.Release, force bool) time.Time {
	next := now.UTC().Truncate(time.Second)
	after := func(value string) {
		if t, err := convoyv1alpha1.ParseSyncTime(value); err == nil {
			next = latest(next, t.Add(time.Second))
		}
	}
	afterTime := func(t *metav1.Time) {
		if t != nil && !t.IsZero() {
			next = latest(next, t.UTC().Truncate(time.Second).Add(time.Second))
		}
	}
	after(r.Annotations[convoyv1alpha1.AnnotationSyncRequestedAt])
	afterTime(r.Status.LastHandledSyncAt)
	if force {
		after(r.Annotations[convoyv1alpha1.AnnotationSyncForceRequestedAt])
		afterTime(r.Status.LastHandledForceSyncAt)
	}
	// Past the last RFC 3339 second the time could not be written: stay there (a
	// Release whose annotation someone set to 9999-12-31T23:59:59Z takes no later
	// /sync; the validation rejects anything later).
	if next.After(validation.LatestSyncTime) {
		next = validation.LatestSyncTime
	}
	return next
}

func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// requestSync writes sync-requested-at (and, with force, sync-force-requested-at) on r
// by the NextSyncRequest rule, and sync-requested-render: render, the full ref a bound
// /sync approved, or, for a plain request (render ""), no annotation at all — a plain
// request approves whatever render is current when it is handled. It copies the
// annotation map first: r may share it with the stored object.
func requestSync(r *convoyv1alpha1.Release, now time.Time, force bool, render string) {
	value := convoyv1alpha1.FormatSyncTime(NextSyncRequest(now, r, force))
	annotations := maps.Clone(r.Annotations)
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[convoyv1alpha1.AnnotationSyncRequestedAt] = value
	if force {
		annotations[convoyv1alpha1.AnnotationSyncForceRequestedAt] = value
	}
	if render != "" {
		annotations[convoyv1alpha1.AnnotationSyncRequestedRender] = render
	} else {
		delete(annotations, convoyv1alpha1.AnnotationSyncRequestedRender)
	}
	r.Annotations = annotations
}

// boundRender resolves the render of a bound /sync (?render=, a full ref or its
// 10-digit short form) against the Release as stored: the full ref it names when that
// is status.render.ref, the current render, or, for a pinned Release, pin.renderRef,
// the render the pin holds it at. ok is false when it names neither: the request
// approves a render convoy would not apply.
func boundRender(r *convoyv1alpha1.Release, render convoyv1alpha1.RenderRef) (full string, ok bool) {
	var candidates []string
	if r.Status.Render != nil {
		candidates = append(candidates, r.Status.Render.Ref)
	}
	if r.Pin != nil {
		candidates = append(candidates, r.Pin.RenderRef)
	}
	for _, c := range candidates {
		if render.Names(c) {
			return c, true
		}
	}
	return "", false
}

// notCurrentRender is the message of the 409 Conflict that answers a bound /sync whose
// render is neither the current nor the pinned render of the Release ns/name: it
// names the render asked for and the current one (short forms) and what to do next.
func notCurrentRender(ns, name string, r *convoyv1alpha1.Release, render convoyv1alpha1.RenderRef) string {
	asked := string(render)
	if !render.IsShort() {
		asked = render.Short()
	}
	var current []string
	if r.Status.Render != nil && r.Status.Render.Ref != "" {
		current = append(current, "the current render is "+convoyv1alpha1.RenderRef(r.Status.Render.Ref).Short())
	} else {
		current = append(current, "it has no render yet")
	}
	if r.Pin != nil && r.Pin.RenderRef != "" {
		current = append(current, "it is pinned to render "+convoyv1alpha1.RenderRef(r.Pin.RenderRef).Short())
	}
	return fmt.Sprintf("render %s is not the current render of Release %s/%s (%s): "+
		"review the current render with kubectl convoy release diff %s -n %s and approve it with kubectl convoy release sync %s -n %s",
		asked, ns, name, strings.Join(current, ", and "), name, ns, name, ns)
}
