package chaos

import (
	"testing"
	"time"
)

func TestCheckLowerWaveRollouts(t *testing.T) {
	// Release ns/r (cluster wave 1) applies inputs t1@1 (its ConfigMap at rv 20); ns/low
	// of wave 0 on the same Cluster asks for l2@1 and rolls it out in two sync waves: a
	// ConfigMap (wave 0) and a Deployment (wave 1).
	apply := objEvent{release: "ns/r", object: "cm/first", kind: "cm", inputs: "t1@1", rv: 20, healthy: true, at: t0}
	low := func(object string, wave int32, inputs string, rv int64, healthy bool) objEvent {
		e := ev(object, wave, inputs, rv, healthy)
		e.release = "ns/low"
		return e
	}
	ready := func(rv int64, inputs string) relState { return relState{rv: rv, ready: true, inputs: inputs} }
	notReady := func(rv int64, inputs string) relState { return relState{rv: rv, inputs: inputs} }
	// began: the lower Release's edit to inputs, seen d before the apply (seen at t0).
	began := func(rv int64, inputs string, d time.Duration) relState {
		return relState{rv: rv, inputs: inputs, at: t0.Add(-d)}
	}
	asked := func(rv int64) relState { return relState{rv: rv, inputs: "t1@1"} }
	rolledOut := []objEvent{low("cm/low", 0, "l2@1", 5, true), low("dep/low", 1, "l2@1", 8, false), low("dep/low", 1, "l2@1", 11, true)}
	cases := map[string]struct {
		events                 []objEvent
		low, higher            []relState
		gaps                   relists
		want                   int
		judged, raced, unknown int
	}{
		"the lower Release rolled out every sync wave before": {
			events: append(rolledOut, apply), low: []relState{ready(12, "l2@1")}, higher: []relState{asked(3)}, judged: 1,
		},
		// Decision 0160: Healthy written from the assessment of sync wave 0 while
		// the Deployment of sync wave 1 still rolled out.
		"the lower Release reported Ready while its last sync wave rolled out": {
			events: []objEvent{low("cm/low", 0, "l2@1", 5, true), low("dep/low", 1, "l2@1", 8, false), apply, low("dep/low", 1, "l2@1", 25, true)},
			low:    []relState{began(4, "l2@1", 10*time.Second), ready(12, "l2@1")}, higher: []relState{asked(3)}, want: 1, judged: 1,
		},
		"healthy once is enough (a fault made it unavailable later)": {
			events: append(append(rolledOut, low("dep/low", 1, "l2@1", 15, false)), apply),
			low:    []relState{ready(12, "l2@1")}, higher: []relState{asked(3)}, judged: 1,
		},
		"the objects of earlier inputs do not count": {
			events: []objEvent{low("dep/low", 1, "l1@1", 2, false), low("cm/low", 0, "l2@1", 5, true), low("dep/low", 1, "l2@1", 8, true), apply},
			low:    []relState{ready(12, "l2@1")}, higher: []relState{asked(3)}, judged: 1,
		},
		"a lower Release not ready is checkClusterWaves' to judge": {
			events: []objEvent{low("dep/low", 1, "l2@1", 8, false), apply}, low: []relState{notReady(12, "l2@1")},
		},
		"a lower Release being deleted does not count": {
			events: []objEvent{low("dep/low", 1, "l2@1", 8, false), apply}, low: []relState{{rv: 12, ready: true, gone: true, inputs: "l2@1"}},
		},
		"a relist of Deployments may have hidden when it became healthy": {
			events: []objEvent{low("dep/low", 1, "l2@1", 8, false), apply}, low: []relState{ready(12, "l2@1")},
			higher: []relState{asked(3)}, gaps: relists{hostDeps: {{from: 9, to: 14}}}, judged: 1, unknown: 1,
		},
		"the lower Release asked for its render after the higher one asked, just before the apply": {
			events: []objEvent{low("dep/low", 1, "l2@1", 8, false), apply},
			low:    []relState{ready(2, "l1@1"), began(6, "l2@1", time.Second), ready(12, "l2@1")}, higher: []relState{asked(4)}, judged: 1, raced: 1,
		},
		"the lower Release asked for its render after the higher one asked, long before the apply": {
			events: []objEvent{low("dep/low", 1, "l2@1", 8, false), apply},
			low:    []relState{ready(2, "l1@1"), began(6, "l2@1", 2*clockSlack), ready(12, "l2@1")}, higher: []relState{asked(4)}, want: 1, judged: 1,
		},
		"the lower Release asked for its render before the higher one asked": {
			events: []objEvent{low("dep/low", 1, "l2@1", 8, false), apply},
			low:    []relState{ready(2, "l1@1"), began(3, "l2@1", time.Second), ready(12, "l2@1")}, higher: []relState{asked(4)}, want: 1, judged: 1,
		},
		"another Cluster's objects do not count": {
			events: []objEvent{func() objEvent { e := low("dep/low", 1, "l2@1", 8, false); e.cluster = remoteClusterName; return e }(), apply},
			low:    []relState{ready(12, "l2@1")}, higher: []relState{asked(3)}, judged: 1,
		},
		"remote: ready throughout, last sync wave not healthy": {
			events: []objEvent{
				func() objEvent { e := low("dep/low", 1, "l2@1", 8, false); e.cluster = remoteClusterName; return e }(),
				remote(20, 0),
			},
			low: []relState{{rv: 12, at: t0.Add(-10 * time.Second), ready: true, inputs: "l2@1"}}, higher: []relState{asked(3)}, want: 1, judged: 1,
		},
		"remote: ready only within the slack": {
			events: []objEvent{
				func() objEvent { e := low("dep/low", 1, "l2@1", 8, false); e.cluster = remoteClusterName; return e }(),
				remote(20, 0),
			},
			low: []relState{{rv: 10, at: t0.Add(-10 * time.Second), inputs: "l2@1"}, {rv: 12, at: t0.Add(-time.Second), ready: true, inputs: "l2@1"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			places := map[string]place{"ns/r": {"", 1}, "ns/low": {"", 0}}
			if tc.events[len(tc.events)-1].cluster == remoteClusterName || name[:6] == "remote" {
				places = map[string]place{"ns/r": {remoteClusterName, 1}, "ns/low": {remoteClusterName, 0}}
			}
			got, c := checkLowerWaveRollouts(history{events: tc.events, states: map[string][]relState{"ns/low": tc.low, "ns/r": tc.higher}, places: places, gaps: tc.gaps})
			if len(got) != tc.want || c.judged != tc.judged || c.concurrent != tc.raced || c.unverified != tc.unknown {
				t.Errorf("checkLowerWaveRollouts = %v, %+v; want %d violations, %d judged, %d raced, %d unverified",
					got, c, tc.want, tc.judged, tc.raced, tc.unknown)
			}
		})
	}
}
