package chaos

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
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
