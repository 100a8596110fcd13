package chaos

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/releaseset"
)

// rs builds a state of a set's Release at rv: holding revision rev, Ready at it or not.
func rs(rv int64, rev string, ready bool) relState {
	return relState{rv: rv, revision: rev, setReady: ready}
}

// bakeT0 is the time of the bake cases.
var bakeT0 = time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)

// bakedAt is s as the harness saw it at bakeT0+after, Ready (when it is) since bakeT0+since.
func bakedAt(s relState, after, since time.Duration) relState {
	s.at = bakeT0.Add(after)
	if s.setReady {
		s.readySince = bakeT0.Add(since)
	}
	return s
}

func TestCheckStageOrder(t *testing.T) {
	stages := map[string]int{"ns/canary": 0, "ns/rest": 1}
	type counts struct{ Violations, Judged, Unverified int }
	cases := map[string]struct {
		states map[string][]relState
		gaps   relists
		bake   time.Duration // the canary stage's
		want   counts
	}{
		"the rest updated once the canary baked": {
			states: map[string][]relState{
				"ns/canary": {bakedAt(rs(10, "r1", true), 2*time.Second, time.Second)},
				"ns/rest":   {bakedAt(rs(13, "r1", false), 12*time.Second, 0)},
			},
			bake: 10 * time.Second,
			want: counts{Judged: 1},
		},
		"the rest updated before the canary baked": {
			states: map[string][]relState{
				"ns/canary": {bakedAt(rs(10, "r1", true), 2*time.Second, time.Second)},
				"ns/rest":   {bakedAt(rs(13, "r1", false), 5*time.Second, 0)},
			},
			bake: 10 * time.Second,
			want: counts{Violations: 1, Judged: 1},
		},
		"the rest created with revision 1 once the canary is Ready at it": {
			states: map[string][]relState{
				"ns/canary": {rs(10, "r1", false), rs(12, "r1", true)},
				"ns/rest":   {rs(13, "r1", false), rs(15, "r1", true)},
			},
			want: counts{Judged: 1},
		},
		"the rest created before the canary was Ready": {
			states: map[string][]relState{
				"ns/canary": {rs(10, "r1", false), rs(14, "r1", true)},
				"ns/rest":   {rs(12, "r1", false)},
			},
			want: counts{Violations: 1, Judged: 1},
		},
		"the rest created before the canary existed": {
			states: map[string][]relState{
				"ns/canary": {rs(14, "r1", true)},
				"ns/rest":   {rs(12, "r1", false)},
			},
			want: counts{Violations: 1, Judged: 1},
		},
		"revision 2 on the rest while the canary was Ready at revision 1 only": {
			states: map[string][]relState{
				"ns/canary": {rs(10, "r1", true), rs(20, "r2", false), rs(24, "r2", true)},
				"ns/rest":   {rs(11, "r1", true), rs(22, "r2", false)},
			},
			want: counts{Violations: 1, Judged: 2},
		},
		"revision 2 in order; a status write of the rest at the same revision is not a new revision": {
			states: map[string][]relState{
				"ns/canary": {rs(10, "r1", true), rs(20, "r2", false), rs(21, "r2", true)},
				"ns/rest":   {rs(11, "r1", true), rs(23, "r2", false), rs(25, "r2", true), rs(26, "r2", true)},
			},
			want: counts{Judged: 2},
		},
		"the arrival order does not matter, the resourceVersions do": {
			states: map[string][]relState{
				"ns/canary": {rs(21, "r2", true), rs(10, "r1", true), rs(20, "r2", false)},
				"ns/rest":   {rs(23, "r2", false), rs(11, "r1", true)},
			},
			want: counts{Judged: 2},
		},
		"the canary not Ready again later does not reach back": {
			states: map[string][]relState{
				"ns/canary": {rs(10, "r1", true), rs(30, "r1", false)},
				"ns/rest":   {rs(11, "r1", false)},
			},
			want: counts{Judged: 1},
		},
		"a relist that may have hidden the canary's Ready state: not judged": {
			states: map[string][]relState{
				"ns/canary": {rs(10, "r1", false), rs(16, "r1", true)},
				"ns/rest":   {rs(13, "r1", false)},
			},
			gaps: relists{releaseStream: {{from: 11, to: 16}}},
			want: counts{Judged: 1, Unverified: 1},
		},
		"a relist before the canary's last state seen excuses nothing": {
			states: map[string][]relState{
				"ns/canary": {rs(10, "r1", false), rs(16, "r1", true)},
				"ns/rest":   {rs(13, "r1", false)},
			},
			gaps: relists{releaseStream: {{from: 5, to: 9}}},
			want: counts{Violations: 1, Judged: 1},
		},
		"no Release of the set: nothing judged": {
			want: counts{},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			v, judged, unverified := checkStageOrder(history{states: tc.states, gaps: tc.gaps}, stages, map[int]time.Duration{0: tc.bake})
			got := counts{len(v), judged, unverified}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("counts (-want +got):\n%s\nviolations: %v", diff, v)
			}
		})
	}
}

// setRel builds a state of a set's Release at resourceVersion rv holding revision rev (seen by the watch).
func setRel(rv int64, rev string) relState { return relState{rv: rv, revision: rev} }

// goneAt builds a state of a set's Release at resourceVersion rv being deleted (or deleted), at revision rev.
func goneAt(rv int64, rev string) relState { return relState{rv: rv, revision: rev, gone: true} }

func TestCheckPaused(t *testing.T) {
	releases := []string{"ns/canary", "ns/rest"}
	// Paused at 20, observed by the controller at 24, resumed at 40.
	window := []pauseWindow{{wrote: 20, observed: 24, resumed: 40}}
	type counts struct{ Violations, Judged, InFlight, Unverified int }
	cases := map[string]struct {
		states  map[string][]relState
		gaps    relists
		windows []pauseWindow
		want    counts
	}{
		"status writes at the revisions held": {
			states: map[string][]relState{
				"ns/canary": {setRel(10, "r1"), setRel(26, "r1"), setRel(30, "r1")},
				"ns/rest":   {setRel(11, "r1"), setRel(28, "r1")},
			},
			want: counts{Judged: 3},
		},
		"the canary updated to a new revision while paused": {
			states: map[string][]relState{
				"ns/canary": {setRel(10, "r1"), setRel(30, "r2")},
				"ns/rest":   {setRel(11, "r1")},
			},
			want: counts{Violations: 1, Judged: 1},
		},
		"the rest created while paused": {
			states: map[string][]relState{
				"ns/canary": {setRel(10, "r1")},
				"ns/rest":   {setRel(30, "r1")},
			},
			want: counts{Violations: 1, Judged: 1},
		},
		"the rest deleted while paused": {
			states: map[string][]relState{
				"ns/canary": {setRel(10, "r1")},
				"ns/rest":   {setRel(11, "r1"), goneAt(30, "r1")},
			},
			want: counts{Violations: 1, Judged: 1},
		},
		"a reconcile in flight at the pause: its write comes before the controller observes it": {
			states: map[string][]relState{
				"ns/canary": {setRel(10, "r1"), setRel(22, "r2"), setRel(30, "r2")},
				"ns/rest":   {setRel(11, "r1")},
			},
			want: counts{Judged: 1, InFlight: 1},
		},
		"a pause the controller did not observe before the resume: every change in flight": {
			states: map[string][]relState{
				"ns/canary": {setRel(10, "r1"), setRel(30, "r2")},
			},
			windows: []pauseWindow{{wrote: 20, resumed: 40}},
			want:    counts{InFlight: 1},
		},
		"updated before the pause and after the resume": {
			states: map[string][]relState{
				"ns/canary": {setRel(10, "r1"), setRel(18, "r2"), setRel(41, "r3")},
				"ns/rest":   {setRel(11, "r1"), setRel(45, "r3")},
			},
			want: counts{},
		},
		"the change came with a relist that began before the controller observed the pause: not judged": {
			states: map[string][]relState{
				"ns/canary": {setRel(10, "r1"), setRel(30, "r2")},
			},
			gaps: relists{releaseStream: {{from: 15, to: 30}}},
			want: counts{Judged: 1, Unverified: 1},
		},
		"a relist that began after the observation excuses nothing": {
			states: map[string][]relState{
				"ns/canary": {setRel(10, "r1"), setRel(30, "r2")},
			},
			gaps: relists{releaseStream: {{from: 26, to: 30}}},
			want: counts{Violations: 1, Judged: 1},
		},
		"the driver's own writes are not the watch's": {
			states: map[string][]relState{
				"ns/canary": {setRel(10, "r1"), {rv: 30, revision: "r2", written: true}},
			},
			want: counts{},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := window
			if tc.windows != nil {
				w = tc.windows
			}
			v, judged, inFlight, unverified := checkPaused(history{states: tc.states, gaps: tc.gaps}, releases, w)
			got := counts{len(v), judged, inFlight, unverified}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("counts (-want +got):\n%s\nviolations: %v", diff, v)
			}
		})
	}
}

func TestPauseWindows(t *testing.T) {
	pauses := []pauseWrite{{wrote: 20, generation: 5, resumed: 40}, {wrote: 50, generation: 9, resumed: 60}}
	pauses = append(pauses, pauseWrite{wrote: 70, generation: 12, resumed: 90})
	sets := []setState{
		{rv: 19, observedGeneration: 4}, {rv: 22, observedGeneration: 4, paused: true}, // a status of the spec before the pause
		{rv: 27, observedGeneration: 6, paused: true}, {rv: 25, observedGeneration: 5, paused: true}, // arrival order aside, 25 is the first
		{rv: 61, observedGeneration: 10}, // the second pause observed only after its resume
		// The third: observed at 72, resumed at 80 by a write answered with an error;
		// the retry that succeeded answered 90.
		{rv: 72, observedGeneration: 12, paused: true}, {rv: 80, observedGeneration: 12}, {rv: 85, observedGeneration: 13},
	}
	want := []pauseWindow{{wrote: 20, observed: 25, resumed: 40}, {wrote: 50, resumed: 60}, {wrote: 70, observed: 72, resumed: 80}}
	if diff := cmp.Diff(want, pauseWindows(pauses, sets), cmp.AllowUnexported(pauseWindow{})); diff != "" {
		t.Errorf("pauseWindows (-want +got):\n%s", diff)
	}
}

func TestLeaveVerdict(t *testing.T) {
	leftAt := bakeT0.Add(time.Hour)
	cases := map[string]struct {
		prior     []time.Duration // before at
		held      bool
		violation bool
		judged    bool
	}{
		"the first leave is deleted":                                  {judged: true},
		"the first leave held: maxRemovals 1 allows it":               {held: true, violation: true, judged: true},
		"a leave 2 minutes after a removal is held":                   {prior: []time.Duration{2 * time.Minute}, held: true, judged: true},
		"a leave 2 minutes after a removal deleted: a mass removal":   {prior: []time.Duration{2 * time.Minute}, violation: true, judged: true},
		"a removal 20 minutes before no longer counts":                {prior: []time.Duration{20 * time.Minute}, judged: true},
		"a removal 20 minutes before, and the leave held":             {prior: []time.Duration{20 * time.Minute}, held: true, violation: true, judged: true},
		"a removal near the end of the window: not judged either way": {prior: []time.Duration{10 * time.Minute}, held: true},
		"a removal near the end of the window, deleted: not judged":   {prior: []time.Duration{9*time.Minute + 50*time.Second}},
		"two removals, the later one recent: held":                    {prior: []time.Duration{30 * time.Minute, 3 * time.Minute}, held: true, judged: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var prior []time.Time
			for _, d := range tc.prior {
				prior = append(prior, leftAt.Add(-d))
			}
			why, judged := leaveVerdict(prior, leftAt, tc.held)
			if judged != tc.judged || (why != "") != tc.violation {
				t.Errorf("leaveVerdict = %q, judged %t; want a violation %t, judged %t", why, judged, tc.violation, tc.judged)
			}
		})
	}
}

func TestFleetReadyAt(t *testing.T) {
	rel := func(cluster, rev, version string) v1alpha1.Release {
		return v1alpha1.Release{
			ObjectMeta: metav1.ObjectMeta{Name: releaseset.ReleaseName(fleetSetName, cluster), Annotations: map[string]string{v1alpha1.AnnotationReleaseSetRevision: rev}},
			Spec:       v1alpha1.ReleaseSpec{Chart: v1alpha1.ChartSource{Version: version}},
		}
	}
	set := func(token, source string, ready metav1.ConditionStatus) *v1alpha1.ReleaseSet {
		s := &v1alpha1.ReleaseSet{ObjectMeta: metav1.ObjectMeta{Name: fleetSetName, Generation: 4}}
		s.Spec.Template.Spec.Values = valuesOf(token)
		s.Status = v1alpha1.ReleaseSetStatus{ObservedGeneration: 4, Revision: "r9", Source: &v1alpha1.ReleaseSetSource{ChartVersion: source},
			Conditions: []metav1.Condition{{Type: v1alpha1.ConditionReady, Status: ready, Reason: "X"}}}
		return s
	}
	both := []v1alpha1.Release{rel(hostClusterName, "r9", fleetPublished), rel(remoteClusterName, "r9", fleetPublished)}
	cases := map[string]struct {
		set      *v1alpha1.ReleaseSet
		releases []v1alpha1.Release
		ready    bool
	}{
		"Ready at the published version": {set: set("set-2", fleetPublished, metav1.ConditionTrue), releases: both, ready: true},
		"not Ready":                      {set: set("set-2", fleetPublished, metav1.ConditionFalse), releases: both},
		"Ready at the version before":    {set: set("set-2", versionB, metav1.ConditionTrue), releases: both},
		"Ready at the template before":   {set: set("set-1", fleetPublished, metav1.ConditionTrue), releases: both},
		"the remote Release not back":    {set: set("set-2", fleetPublished, metav1.ConditionTrue), releases: both[:1]},
		"the remote Release at the revision before": {set: set("set-2", fleetPublished, metav1.ConditionTrue),
			releases: []v1alpha1.Release{both[0], rel(remoteClusterName, "r8", fleetPublished)}},
		"the remote Release at the version before": {set: set("set-2", fleetPublished, metav1.ConditionTrue),
			releases: []v1alpha1.Release{both[0], rel(remoteClusterName, "r9", versionB)}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			why := fleetReadyAt(tc.set, tc.releases, []string{"set-2"}, fleetPublished)
			if (why == "") != tc.ready {
				t.Errorf("fleetReadyAt = %q, want ready %t", why, tc.ready)
			}
		})
	}
}
