package releaseset

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// TestScheduleDue: a refresh makes a set resolve at its next reconcile and keeps the
// source it resolved last (a failed resolution goes on with it); a set never
// resolved stays unknown.
func TestScheduleDue(t *testing.T) {
	s := &sourceSchedule{}
	now := time.Date(2026, 12, 8, 0, 0, 0, 0, time.UTC)
	src := &v1.ReleaseSetSource{Commit: "abc"}
	s.record("a", "key", src, nil, now, time.Hour)
	s.due("a")
	s.due("never")
	e := s.get("a")
	if e == nil || now.Before(e.next) || e.good == nil || e.good.Commit != "abc" || e.key != "key" {
		t.Errorf("after due: %+v, want due now with the source abc kept", e)
	}
	if got := s.get(types.UID("never")); got != nil {
		t.Errorf("due made an entry for a set never resolved: %+v", got)
	}
}
