package release

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/validation/field"
	clocktesting "k8s.io/utils/clock/testing"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/apiserver/validation"
)

// fuzzDecoder decodes and defaults as the API server does (v1alpha1 is also its
// internal version); it is built here because the server's package imports this one.
var fuzzDecoder = func() runtime.Decoder {
	s := runtime.NewScheme()
	if err := convoyv1alpha1.AddToScheme(s); err != nil {
		panic(err)
	}
	return serializer.NewCodecFactory(s).UniversalDecoder(convoyv1alpha1.SchemeGroupVersion)
}()

func decodeRelease(data []byte) (*convoyv1alpha1.Release, bool) {
	obj, err := runtime.Decode(fuzzDecoder, data)
	if err != nil {
		return nil, false
	}
	r, ok := obj.(*convoyv1alpha1.Release)
	return r, ok
}

const fuzzStored = `{"apiVersion":"convoy.kumodo.io/v1alpha1","kind":"Release",
 "metadata":{"name":"podinfo","namespace":"team-a","generation":3,"labels":{"l":"1"},
  "annotations":{"a":"1","convoy.kumodo.io/sync-requested-at":"2026-12-02T10:04:05Z"}},
 "spec":{"chart":{"repository":"https://c","name":"podinfo"},"values":{"a":1}},
 "mutations":[{"patch":"x: y"}],"lifecycle":{"hooks":[]},"pin":{"renderRef":"sha256:4f1c000000000000000000000000000000000000000000000000000000000000","pinnedAt":"2026-12-02T10:00:00Z"},
 "status":{"observedGeneration":3,"lastSuccessful":{"renderRef":"sha256:4f1c000000000000000000000000000000000000000000000000000000000000"},"lastHandledSyncAt":"2026-12-02T10:04:05Z",
  "conditions":[{"type":"Ready","status":"True","reason":"Applied","message":"m","lastTransitionTime":"2026-12-02T10:00:00Z"}]}}`

// fuzzRequests are bodies of writes through the main resource and the subresources.
var fuzzRequests = []string{
	`{"apiVersion":"convoy.kumodo.io/v1alpha1","kind":"Release","metadata":{"name":"podinfo","namespace":"team-a"},"spec":{"chart":{"repository":"https://c","name":"podinfo"},"clusterWave":2}}`,
	`{"apiVersion":"convoy.kumodo.io/v1alpha1","kind":"Release","metadata":{"name":"podinfo"},"pin":{"renderRef":"sha256:9a2b000000000000000000000000000000000000000000000000000000000000","reason":"r"}}`,
	`{"apiVersion":"convoy.kumodo.io/v1alpha1","kind":"Release","metadata":{"name":"podinfo"},"pin":{"reason":"no ref"}}`,
	`{"apiVersion":"convoy.kumodo.io/v1alpha1","kind":"Release","metadata":{"name":"podinfo"},"pin":{"renderRef":"md5:zz"}}`,
	`{"apiVersion":"convoy.kumodo.io/v1alpha1","kind":"Release","metadata":{"name":"podinfo"},"mutations":[{"target":{"kind":"Deployment"},"jsonPatch":[{"op":"replace","path":"/spec/replicas","value":3}]}]}`,
	`{"apiVersion":"convoy.kumodo.io/v1alpha1","kind":"Release","metadata":{"name":"podinfo"},"lifecycle":{"hooks":[{"name":"m","phase":"PostApply","job":{"template":{"spec":{"containers":[{"name":"c"}]}}}}]}}`,
	`{"apiVersion":"convoy.kumodo.io/v1alpha1","kind":"Release","metadata":{"name":"podinfo","annotations":{"convoy.kumodo.io/sync-requested-at":"9999-12-31T23:59:59Z"}},"status":{"conditions":[{"type":"x y","status":"Maybe"}]}}`,
}

// writeStrategy is what a write through the main resource or a subresource runs.
type writeStrategy interface {
	PrepareForUpdate(context.Context, runtime.Object, runtime.Object)
	ValidateUpdate(context.Context, runtime.Object, runtime.Object) field.ErrorList
}

// fuzzStrategies are the endpoints a write can go through, by the fuzzer's choice.
var fuzzStrategies = func() []struct {
	name string
	s    writeStrategy
} {
	base := newStrategy(nil)
	c := clocktesting.NewFakePassiveClock(time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC))
	return []struct {
		name string
		s    writeStrategy
	}{
		{"", base},
		{convoyv1alpha1.SubresourceStatus, statusStrategy{base}},
		{convoyv1alpha1.SubresourcePin, newFieldStrategy(base, c, convoyv1alpha1.SubresourcePin, takePin)},
		{convoyv1alpha1.SubresourceMutations, newFieldStrategy(base, c, convoyv1alpha1.SubresourceMutations, takeMutations)},
		{convoyv1alpha1.SubresourceLifecycle, newFieldStrategy(base, c, convoyv1alpha1.SubresourceLifecycle, takeLifecycle)},
	}
}()

// A write of any body through the main resource or a subresource (/status, /pin,
// /mutations, /lifecycle) on a valid stored Release is accepted or rejected with
// errors that each name a field path (422); nothing panics; an accepted write
// changes only what the resource owns (a subresource never the generation nor the
// spec; the main resource never status or pin); and a /sync on the result is
// accepted too.
func FuzzReleaseWrites(f *testing.F) {
	for i, req := range fuzzRequests {
		f.Add([]byte(fuzzStored), []byte(req), uint8(i))
	}
	f.Fuzz(func(t *testing.T, storedBody, body []byte, which uint8) {
		old, ok := decodeRelease(storedBody)
		if !ok || len(validation.Release(old, validation.ReleaseOptions{})) > 0 {
			return // only valid objects are stored
		}
		req, ok := decodeRelease(body)
		if !ok {
			return // 400
		}
		st := fuzzStrategies[int(which)%len(fuzzStrategies)]
		// What the generic store does before the strategy: the URL names the object,
		// and the generation is the stored one.
		obj := req.DeepCopy()
		obj.Namespace, obj.Name, obj.UID = old.Namespace, old.Name, old.UID
		obj.CreationTimestamp, obj.Generation = old.CreationTimestamp, old.Generation
		st.s.PrepareForUpdate(context.Background(), obj, old)
		errs := st.s.ValidateUpdate(context.Background(), obj, old)
		checkFieldErrors(t, errs)
		if len(errs) > 0 {
			return
		}
		unchanged := func(what string, a, b any) {
			t.Helper()
			if !equality.Semantic.DeepEqual(a, b) {
				t.Fatalf("a write through %q changed %s", st.name, what)
			}
		}
		if st.name == "" {
			unchanged("status", obj.Status, old.Status)
			unchanged("pin", obj.Pin, old.Pin)
		} else {
			unchanged("the generation", obj.Generation, old.Generation)
			unchanged("spec", obj.Spec, old.Spec)
			if st.name != convoyv1alpha1.SubresourceStatus {
				unchanged("status", obj.Status, old.Status)
			}
		}
		if _, err := json.Marshal(obj); err != nil {
			t.Fatalf("an accepted write does not encode: %v", err)
		}
		// The stored result must take a /sync, bound to a render or not (which the
		// storage validates too).
		synced := obj.DeepCopy()
		requestSync(synced, time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC), true, "sha256:"+strings.Repeat("0a", 32))
		if errs := newStrategy(nil).ValidateUpdate(context.Background(), synced, obj); len(errs) > 0 {
			t.Fatalf("a bound /sync of an accepted Release is rejected: %v", errs)
		}
		requestSync(synced, time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC), true, "")
		if errs := newStrategy(nil).ValidateUpdate(context.Background(), synced, obj); len(errs) > 0 {
			t.Fatalf("a /sync of an accepted Release is rejected: %v", errs)
		}
	})
}

// Whatever a sync annotation and the handled times hold, ParseSyncTime does not
// panic; and when validation accepts the annotations, every later /sync (forced or
// not) writes annotations that validation accepts again, later than the ones before
// and than the handled times (the "no lost request" rule of api.md) unless they hold
// the last second RFC 3339 can write. testdata/fuzz/FuzzSyncRequest/year10000 was
// a /sync rejected for ever: an accepted annotation in the year 10000 in UTC.
func FuzzSyncRequest(f *testing.F) {
	for _, v := range []string{"2026-12-02T10:04:05Z", "2026-12-02T10:04:05.999+01:00", "2026-12-02t10:04:05z",
		"", "9999-12-31T23:59:58Z", "0000-01-01T00:00:00Z", "2026-13-02T10:04:05Z", "yesterday"} {
		f.Add(v, v, int64(1796205845), true)
	}
	f.Fuzz(func(t *testing.T, requested, forced string, nowUnix int64, force bool) {
		_, _ = convoyv1alpha1.ParseSyncTime(requested)
		r := &convoyv1alpha1.Release{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{
			convoyv1alpha1.AnnotationSyncRequestedAt:      requested,
			convoyv1alpha1.AnnotationSyncForceRequestedAt: forced,
		}}}
		if errs := validation.SyncAnnotations(r.Annotations); len(errs) > 0 {
			checkFieldErrors(t, errs)
			return
		}
		// The controller writes the handled times from the annotations it handled.
		handled, _ := convoyv1alpha1.ParseSyncTime(requested)
		handledForce, _ := convoyv1alpha1.ParseSyncTime(forced)
		r.Status.LastHandledSyncAt = &metav1.Time{Time: handled}
		r.Status.LastHandledForceSyncAt = &metav1.Time{Time: handledForce}
		// A clock between 1970 and 9000.
		const years7000 = 7000 * 366 * 24 * 3600
		now := time.Unix(int64(uint64(nowUnix)%years7000), 0)
		requestSync(r, now, force, "")
		if errs := validation.SyncAnnotations(r.Annotations); len(errs) > 0 {
			t.Fatalf("a /sync on an accepted Release (%q, %q) writes annotations that are rejected: %v", requested, forced, errs)
		}
		next, err := convoyv1alpha1.ParseSyncTime(r.Annotations[convoyv1alpha1.AnnotationSyncRequestedAt])
		if err != nil {
			t.Fatal(err)
		}
		if next.Equal(validation.LatestSyncTime) {
			return // the last second there is: nothing can be later
		}
		if !next.After(handled) {
			t.Fatalf("a /sync after %q writes %s, not later", requested, next.Format(time.RFC3339))
		}
		if force && !next.After(handledForce) {
			t.Fatalf("a forced /sync after %q writes %s, not later", forced, next.Format(time.RFC3339))
		}
	})
}

// checkFieldErrors fails t unless every error names a field path and a type.
func checkFieldErrors(t *testing.T, errs field.ErrorList) {
	t.Helper()
	for _, e := range errs {
		if e.Field == "" || e.Type == "" || e.Error() == "" {
			t.Fatalf("a validation error without a field path or type: %#v", e)
		}
	}
}
