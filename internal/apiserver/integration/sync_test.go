package integration_test

import (
	"net/http"
	"regexp"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
)

var syncTimeFormat = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$`)

// SP-07: POST /sync writes the current time, UTC, RFC 3339 to the second, to
// sync-requested-at, returns the Release and changes nothing else.
func TestSP07_SyncWritesRequestedAt(t *testing.T) {
	ns := testNamespace(t)
	before := create(t, release(ns, "podinfo"))

	start := time.Now().UTC().Truncate(time.Second)
	got, err := postSync(admin(t), ctx(t), ns, "podinfo", "")
	if err != nil {
		t.Fatalf("POST /sync: %v", err)
	}
	end := time.Now().UTC()

	value := got.Annotations[convoyv1alpha1.AnnotationSyncRequestedAt]
	if !syncTimeFormat.MatchString(value) {
		t.Fatalf("sync-requested-at = %q, want UTC RFC 3339 to the second", value)
	}
	at, _ := time.Parse(time.RFC3339, value)
	if at.Before(start) || at.After(end) {
		t.Errorf("sync-requested-at = %s, want the server's current time (between %s and %s)", value, start, end)
	}
	if _, ok := got.Annotations[convoyv1alpha1.AnnotationSyncForceRequestedAt]; ok {
		t.Errorf("a /sync without force wrote sync-force-requested-at")
	}
	if got.Generation != before.Generation {
		t.Errorf("generation changed from %d to %d", before.Generation, got.Generation)
	}
	if stored := get(t, ns, "podinfo"); stored.Annotations[convoyv1alpha1.AnnotationSyncRequestedAt] != value {
		t.Errorf("stored sync-requested-at = %q, want %q", stored.Annotations[convoyv1alpha1.AnnotationSyncRequestedAt], value)
	}
}

// SP-18: ?force=true writes the same time to both annotations.
func TestSP18_ForceSyncWritesBothAnnotations(t *testing.T) {
	ns := testNamespace(t)
	create(t, release(ns, "podinfo"))
	got, err := postSync(admin(t), ctx(t), ns, "podinfo", "true")
	if err != nil {
		t.Fatalf("POST /sync?force=true: %v", err)
	}
	req, force := got.Annotations[convoyv1alpha1.AnnotationSyncRequestedAt], got.Annotations[convoyv1alpha1.AnnotationSyncForceRequestedAt]
	if !syncTimeFormat.MatchString(req) || req != force {
		t.Errorf("sync-requested-at = %q, sync-force-requested-at = %q, want the same UTC time", req, force)
	}
	if got.Generation != 1 {
		t.Errorf("generation = %d, want 1", got.Generation)
	}
}

// A force that is not a boolean is 400, and nothing is written.
func TestSyncForceNotBooleanIsBadRequest(t *testing.T) {
	ns := testNamespace(t)
	created := create(t, release(ns, "podinfo"))
	_, err := postSync(admin(t), ctx(t), ns, "podinfo", "yes-please")
	if statusCode(err) != http.StatusBadRequest {
		t.Fatalf("POST /sync?force=yes-please: %v (status %d), want 400", err, statusCode(err))
	}
	if got := get(t, ns, "podinfo"); got.ResourceVersion != created.ResourceVersion {
		t.Errorf("annotations = %v (resourceVersion %s, %s at create) after a rejected /sync", got.Annotations, got.ResourceVersion, created.ResourceVersion)
	}
	if _, err := postSync(admin(t), ctx(t), ns, "missing", ""); statusCode(err) != http.StatusNotFound {
		t.Errorf("POST /sync of a missing Release: %v, want 404", err)
	}
}

// No lost request (api.md): two /syncs in the same second, or one in the second of
// status.lastHandledSyncAt, still write strictly later values.
func TestSP09_SyncAlwaysLaterThanHandled(t *testing.T) {
	ns := testNamespace(t)
	create(t, release(ns, "podinfo"))

	first, err := postSync(admin(t), ctx(t), ns, "podinfo", "")
	if err != nil {
		t.Fatal(err)
	}
	second, err := postSync(admin(t), ctx(t), ns, "podinfo", "")
	if err != nil {
		t.Fatal(err)
	}
	t1 := parseSync(t, first.Annotations[convoyv1alpha1.AnnotationSyncRequestedAt])
	t2 := parseSync(t, second.Annotations[convoyv1alpha1.AnnotationSyncRequestedAt])
	if !t2.After(t1) {
		t.Errorf("second /sync wrote %s, not later than the first's %s", t2, t1)
	}

	// The controller handled a request at a time in the future (a replica whose clock
	// is ahead): the next /sync is still later.
	handled := time.Now().UTC().Truncate(time.Second).Add(time.Hour)
	second.Status.LastHandledSyncAt = &metav1.Time{Time: handled}
	update(t, second, "status")
	third, err := postSync(admin(t), ctx(t), ns, "podinfo", "")
	if err != nil {
		t.Fatal(err)
	}
	if t3 := parseSync(t, third.Annotations[convoyv1alpha1.AnnotationSyncRequestedAt]); !t3.Equal(handled.Add(time.Second)) {
		t.Errorf("/sync after lastHandledSyncAt %s wrote %s, want %s", handled, t3, handled.Add(time.Second))
	}
}

// In the current second: lastHandledSyncAt set to now, then /sync writes now + 1s at least.
func TestSP09_SyncInSecondOfLastHandled(t *testing.T) {
	ns := testNamespace(t)
	r := create(t, release(ns, "podinfo"))
	now := time.Now().UTC().Truncate(time.Second)
	r.Status.LastHandledSyncAt = &metav1.Time{Time: now}
	update(t, r, "status")
	got, err := postSync(admin(t), ctx(t), ns, "podinfo", "")
	if err != nil {
		t.Fatal(err)
	}
	if at := parseSync(t, got.Annotations[convoyv1alpha1.AnnotationSyncRequestedAt]); !at.After(now) {
		t.Errorf("/sync wrote %s, not later than lastHandledSyncAt %s", at, now)
	}
}

// SP-08, SP-26: a watch sees the /sync write.
func TestSP26_WatchSeesSync(t *testing.T) {
	ns := testNamespace(t)
	r := create(t, release(ns, "podinfo"))
	w, err := admin(t).Get().Namespace(ns).Resource("releases").
		VersionedParams(&metav1.ListOptions{Watch: true, ResourceVersion: r.ResourceVersion}, metav1.ParameterCodec).
		Watch(ctx(t))
	if err != nil {
		t.Fatalf("watching: %v", err)
	}
	defer w.Stop()
	synced, err := postSync(admin(t), ctx(t), ns, "podinfo", "")
	if err != nil {
		t.Fatal(err)
	}
	want := synced.Annotations[convoyv1alpha1.AnnotationSyncRequestedAt]
	timeout := time.After(30 * time.Second)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatal("watch closed before the /sync write")
			}
			got, isRelease := ev.Object.(*convoyv1alpha1.Release)
			if ev.Type == watch.Modified && isRelease && got.Annotations[convoyv1alpha1.AnnotationSyncRequestedAt] == want {
				return
			}
		case <-timeout:
			t.Fatal("the watch did not see the /sync write within 30s")
		}
	}
}

func parseSync(t *testing.T, value string) time.Time {
	t.Helper()
	if !syncTimeFormat.MatchString(value) {
		t.Fatalf("sync time %q is not UTC RFC 3339 to the second", value)
	}
	at, err := time.Parse(time.RFC3339, value)
	if err != nil {
		t.Fatal(err)
	}
	return at
}
