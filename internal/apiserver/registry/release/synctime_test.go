package release

import (
	"testing"
	"time"

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
	requestSync(r, now, true)
	if r.Annotations[convoyv1alpha1.AnnotationSyncRequestedAt] != "2026-12-02T10:04:05Z" ||
		r.Annotations[convoyv1alpha1.AnnotationSyncForceRequestedAt] != "2026-12-02T10:04:05Z" || r.Annotations["keep"] != "me" {
		t.Errorf("annotations = %v", r.Annotations)
	}
	if len(shared) != 1 {
		t.Errorf("requestSync wrote into the shared (stored) map: %v", shared)
	}
	requestSync(r, now, false)
	if r.Annotations[convoyv1alpha1.AnnotationSyncRequestedAt] != "2026-12-02T10:04:06Z" ||
		r.Annotations[convoyv1alpha1.AnnotationSyncForceRequestedAt] != "2026-12-02T10:04:05Z" {
		t.Errorf("a second request in the same second: %v", r.Annotations)
	}
}
