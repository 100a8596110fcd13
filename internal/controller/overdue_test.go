package controller

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/policy"
)

// twoWaves makes the test chart's render two sync waves: its ConfigMap in wave 0, its
// Secret in wave 1.
func twoWaves() releaseOption {
	return func(r *v1.Release) {
		values(`{"secret":"s3cr3t"}`)(r)
		mutation("Secret", `{"metadata":{"annotations":{"convoy.kumodo.io/sync-wave":"1"}}}`)(r)
	}
}

// Decision 0151 (an outside kill-and-restart run left the observer dead, and synced manual
// Releases held at a sync wave for good without a word): a Release that waits on the
// observer's assessment says so when the assessment is overdue. With no observer
// running, the Release held at wave 0 reports, after the bound and with no other
// event than its own requeue, since when the assessment is overdue, in its Applied
// (and so Ready) condition; one Warning event is recorded, and the metric counts it.
// Further reconciles write nothing and record no second event. Once the assessment
// arrives, the Release goes on and the metric drops back.
func TestObserverAssessmentOverdue(t *testing.T) {
	const bound = 3 * time.Second
	e := newEnv(t, envOptions{assessmentOverdueAfter: bound})
	m := e.reconciler.metrics
	e.createRelease("web", twoWaves())
	e.waitApplied("web", "False", v1.ReasonWaitingForSync)

	synced := time.Now().Add(-time.Second).Truncate(time.Second)
	e.sync("web", false)
	e.waitApplied("web", "False", v1.ReasonWaitingForSyncWave)
	if inv := e.inventory("web"); !assessmentDue(inv) {
		t.Fatalf("inventory generation %d, status %+v: want its assessment behind (no observer runs)", inv.Generation, inv.Status)
	}

	var since time.Time
	var rel *v1.Release
	e.eventually("the Applied condition to report the overdue assessment", func() (bool, string) {
		rel = e.release("web")
		c := apimeta.FindStatusCondition(rel.Status.Conditions, v1.ConditionApplied)
		var ok bool
		since, ok = policy.OverdueSince(c.Message)
		return ok && c.Reason == v1.ReasonWaitingForSyncWave, fmt.Sprintf("Applied=%s/%s: %s", c.Status, c.Reason, c.Message)
	})
	if since.Before(synced) || since.After(time.Now()) {
		t.Errorf("overdue since %s, want the time of the wave's apply (after %s)", since, synced)
	}
	want := "Sync waves up to 0 are applied; wave 1 waits until they are Healthy; the observer has not assessed " +
		"the ReleaseInventory since " + since.UTC().Format(time.RFC3339) + ": check that convoy observer runs and can reach the Cluster."
	for _, ct := range []string{v1.ConditionApplied, v1.ConditionReady} {
		if diff := cmp.Diff(want, apimeta.FindStatusCondition(rel.Status.Conditions, ct).Message); diff != "" {
			t.Errorf("%s message (-want +got):\n%s", ct, diff)
		}
	}
	e.eventually("the Warning event", func() (bool, string) {
		evs := e.overdueEvents()
		return len(evs) == 1, fmt.Sprintf("%d events", len(evs))
	})
	if got := testutil.ToFloat64(m.overdue); got != 1 {
		t.Errorf("convoy_release_assessment_overdue = %v, want 1", got)
	}
	if got := testutil.ToFloat64(m.overdueOldest); got != float64(since.Unix()) {
		t.Errorf("convoy_release_assessment_overdue_oldest_timestamp_seconds = %v, want %d", got, since.Unix())
	}

	// Steady: a further reconcile (a /sync: the wave still waits) writes no status and
	// records no second event (a second one would make the recorder's series).
	before := e.release("web")
	n := e.reconciles("web")
	e.sync("web", false)
	e.waitReconciled("web", n)
	e.settle("web")
	if after := e.release("web"); !equality.Semantic.DeepEqual(before.Status, after.Status) {
		t.Errorf("the status changed in a reconcile that found nothing new:\n%s", cmp.Diff(before.Status, after.Status))
	}
	if evs := e.overdueEvents(); len(evs) != 1 || evs[0].Series != nil || evs[0].Type != "Warning" {
		var got []string
		for _, ev := range evs {
			got = append(got, fmt.Sprintf("%s (series %v): %s", ev.Type, ev.Series, ev.Note))
		}
		t.Errorf("events %q, want exactly one Warning %s", got, v1.EventObserverAssessmentOverdue)
	} else if !strings.Contains(evs[0].Note, "since "+since.UTC().Format(time.RFC3339)) {
		t.Errorf("event note %q, want it to say since when", evs[0].Note)
	}

	// The assessment arrives: wave 0 is Healthy, the /sync goes on with wave 1.
	e.writeAssessment("web", v1.HealthHealthy)
	rel = e.waitApplied("web", "True", v1.ReasonApplied)
	if c := apimeta.FindStatusCondition(rel.Status.Conditions, v1.ConditionApplied); strings.Contains(c.Message, "observer") {
		t.Errorf("Applied message %q still reports the overdue assessment", c.Message)
	}
	if got := e.secret("web-secret"); got == nil {
		t.Error("wave 1 (the Secret) was not applied")
	}
	if got := testutil.ToFloat64(m.overdue); got != 0 {
		t.Errorf("convoy_release_assessment_overdue = %v after the assessment, want 0", got)
	}
	if got := testutil.ToFloat64(m.overdueOldest); got != 0 {
		t.Errorf("convoy_release_assessment_overdue_oldest_timestamp_seconds = %v after the assessment, want 0", got)
	}
	if evs := e.overdueEvents(); len(evs) != 1 {
		t.Errorf("%d %s events, want still the one", len(evs), v1.EventObserverAssessmentOverdue)
	}
}

// overdueEvents lists the ObserverAssessmentOverdue events of the test's namespace.
func (e *env) overdueEvents() []eventsv1.Event {
	e.t.Helper()
	var list eventsv1.EventList
	if err := e.client.List(e.ctx, &list, client.InNamespace(e.ns)); err != nil {
		e.t.Fatal(err)
	}
	var out []eventsv1.Event
	for _, ev := range list.Items {
		if ev.Reason == v1.EventObserverAssessmentOverdue {
			out = append(out, ev)
		}
	}
	return out
}

// writeAssessment writes what the observer writes to the status of name's
// ReleaseInventory when it has assessed the inventory as it stands: every object with
// health, at the inventory's generation.
func (e *env) writeAssessment(name string, health v1.HealthStatus) {
	e.t.Helper()
	inv := e.inventory(name)
	observed := inv.DeepCopy()
	now := metav1.Now()
	observed.Status = v1.ReleaseInventoryStatus{
		RenderRef: inv.RenderRef, ObservedGeneration: inv.Generation, AssessedAt: &now, Health: health,
	}
	waves := map[int32]bool{}
	for _, o := range inv.Objects {
		observed.Status.Objects = append(observed.Status.Objects, v1.ObjectHealth{ObjectReference: o.ObjectReference, Health: health})
		if !waves[o.Wave] {
			waves[o.Wave] = true
			observed.Status.Waves = append(observed.Status.Waves, v1.WaveHealth{Wave: o.Wave, Health: health})
		}
	}
	if err := e.client.Status().Patch(e.ctx, observed, client.MergeFrom(inv)); err != nil {
		e.t.Fatal(err)
	}
}

// The inventory's assessment is behind when the observer's status assesses another
// render or an older generation of it.
func TestAssessmentDue(t *testing.T) {
	inv := func(renderRef string, generation int64, assessed string, observed int64) *v1.ReleaseInventory {
		return &v1.ReleaseInventory{
			ObjectMeta: metav1.ObjectMeta{Generation: generation},
			RenderRef:  renderRef,
			Status:     v1.ReleaseInventoryStatus{RenderRef: assessed, ObservedGeneration: observed},
		}
	}
	deleting := inv("sha256:r1", 3, "", 0)
	deleting.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	cases := map[string]struct {
		inv  *v1.ReleaseInventory
		want bool
	}{
		"no inventory":                                    {inv: nil},
		"an inventory that names no render yet":           {inv: inv("", 1, "", 0)},
		"assessed at its generation":                      {inv: inv("sha256:r1", 4, "sha256:r1", 4)},
		"a wave applied since (the generation moved on)":  {inv: inv("sha256:r1", 5, "sha256:r1", 4), want: true},
		"a new render not assessed yet":                   {inv: inv("sha256:r2", 5, "sha256:r1", 4), want: true},
		"never assessed":                                  {inv: inv("sha256:r1", 2, "", 0), want: true},
		"an observer that does not record the generation": {inv: inv("sha256:r1", 5, "sha256:r1", 0)},
		"being deleted":                                   {inv: deleting},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := assessmentDue(tc.inv); got != tc.want {
				t.Errorf("assessmentDue = %v, want %v", got, tc.want)
			}
		})
	}
}

// convoy_release_assessment_overdue counts the Releases whose wait is overdue, and the
// oldest timestamp says since when the longest has lasted; a Release that moves on or
// is gone drops out.
func TestAssessmentOverdueMetrics(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 4, 10, 0, 0, time.UTC)
	overdue := func(since time.Time) policy.Outcome { return policy.Outcome{Overdue: &policy.Overdue{Since: since}} }
	web, api := policy.Key{Namespace: "team-a", Name: "web"}, policy.Key{Namespace: "team-a", Name: "api"}
	steps := []struct {
		what       string
		do         func(m *metrics)
		wantCount  float64
		wantOldest time.Time
	}{
		{"none overdue", func(m *metrics) { m.observe(web, policy.Plan{}, policy.Outcome{}, changeCounts{}, 0) }, 0, time.Time{}},
		{"one overdue", func(m *metrics) { m.observe(web, policy.Plan{}, overdue(t0.Add(time.Minute)), changeCounts{}, 0) }, 1, t0.Add(time.Minute)},
		{"an older one", func(m *metrics) { m.observe(api, policy.Plan{}, overdue(t0), changeCounts{}, 0) }, 2, t0},
		{"the same again", func(m *metrics) { m.observe(api, policy.Plan{}, overdue(t0), changeCounts{}, 0) }, 2, t0},
		{"the older moves on", func(m *metrics) { m.observe(api, policy.Plan{}, policy.Outcome{}, changeCounts{}, 0) }, 1, t0.Add(time.Minute)},
		{"the other is gone", func(m *metrics) { m.forget(web) }, 0, time.Time{}},
	}
	m := newMetrics(prometheus.NewRegistry())
	for _, s := range steps {
		s.do(m)
		wantOldest := 0.0
		if !s.wantOldest.IsZero() {
			wantOldest = float64(s.wantOldest.Unix())
		}
		if got := testutil.ToFloat64(m.overdue); got != s.wantCount {
			t.Errorf("%s: convoy_release_assessment_overdue = %v, want %v", s.what, got, s.wantCount)
		}
		if got := testutil.ToFloat64(m.overdueOldest); got != wantOldest {
			t.Errorf("%s: oldest = %v, want %v", s.what, got, wantOldest)
		}
	}
}
