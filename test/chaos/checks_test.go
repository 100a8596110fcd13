package chaos

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"kumodo.io/convoy/api/v1alpha1"
)

// t0 is the moment of the remote applies in the tables.
var t0 = time.Date(2026, 12, 4, 3, 0, 0, 0, time.UTC)

// remote builds a wave-0 event on the remote Cluster of Release ns/r, seen at t0+d.
func remote(rv int64, d time.Duration) objEvent {
	return objEvent{cluster: remoteClusterName, at: t0.Add(d), release: "ns/r", object: "cm/first", kind: "cm", inputs: "t1@1", rv: rv, healthy: true}
}

// Streams of the tests' events: ev's Deployments and ConfigMaps on the host.
var (
	hostDeps = stream{"", "dep"}
	hostCMs  = stream{"", "cm"}
)

// at builds a Release state seen at t0+d.
func at(rv int64, d time.Duration, pending bool) relState {
	return relState{rv: rv, at: t0.Add(d), pending: pending}
}

// ev builds an objEvent of Release ns/r.
func ev(object string, wave int32, inputs string, rv int64, healthy bool) objEvent {
	kind, _, _ := strings.Cut(object, "/")
	return objEvent{release: "ns/r", object: object, kind: kind, wave: wave, inputs: inputs, rv: rv, healthy: healthy}
}

func TestCheckWaves(t *testing.T) {
	cases := map[string]struct {
		events     []objEvent
		gaps       relists
		want       int // violations
		unverified int
	}{
		// A relist shows only each object's last state: when it delivered the first
		// healthy state of a lower wave's object, that object may have been healthy
		// earlier, unseen.
		"wave 2 before wave 1 was seen healthy, by a relist: not judged": {
			events: []objEvent{ev("cm/first", 0, "t1@1", 10, true), ev("dep/app", 1, "t1@1", 11, false), ev("cm/last", 2, "t1@1", 12, true), ev("dep/app", 1, "t1@1", 14, true)},
			gaps:   relists{hostDeps: {{from: 11, to: 15}}}, unverified: 1,
		},
		"a relist of another kind excuses nothing": {
			events: []objEvent{ev("cm/first", 0, "t1@1", 10, true), ev("dep/app", 1, "t1@1", 11, false), ev("cm/last", 2, "t1@1", 12, true), ev("dep/app", 1, "t1@1", 14, true)},
			gaps:   relists{hostCMs: {{from: 11, to: 15}}}, want: 1,
		},
		"a relist that ended before the healthy state excuses nothing": {
			events: []objEvent{ev("cm/first", 0, "t1@1", 10, true), ev("dep/app", 1, "t1@1", 11, false), ev("cm/last", 2, "t1@1", 12, true), ev("dep/app", 1, "t1@1", 14, true)},
			gaps:   relists{hostDeps: {{from: 5, to: 9}}}, want: 1,
		},
		"never seen healthy, and a relist after it appeared: not judged": {
			events: []objEvent{ev("cm/first", 0, "t1@2", 10, true), ev("dep/app", 1, "t1@2", 11, false), ev("cm/last", 2, "t1@2", 12, true)},
			gaps:   relists{hostDeps: {{from: 11, to: 13}}}, unverified: 1,
		},
		"in order: wave 1 after wave 0, wave 2 after wave 1 healthy": {
			events: []objEvent{ev("cm/first", 0, "t1@1", 10, true), ev("dep/app", 1, "t1@1", 11, false), ev("dep/app", 1, "t1@1", 14, true), ev("cm/last", 2, "t1@1", 15, true)},
		},
		"wave 2 before wave 1 became healthy": {
			events: []objEvent{ev("cm/first", 0, "t1@1", 10, true), ev("dep/app", 1, "t1@1", 11, false), ev("cm/last", 2, "t1@1", 12, true), ev("dep/app", 1, "t1@1", 14, true)},
			want:   1,
		},
		"wave 2 while wave 1 never became healthy": {
			events: []objEvent{ev("cm/first", 0, "t1@2", 10, true), ev("dep/app", 1, "t1@2", 11, false), ev("cm/last", 2, "t1@2", 12, true)},
			want:   1,
		},
		"wave 1 before wave 0": {
			events: []objEvent{ev("dep/app", 1, "t1@1", 9, true), ev("cm/first", 0, "t1@1", 10, true)},
			want:   1,
		},
		"other inputs do not count: wave 2 of t2 after wave 1 of t2": {
			events: []objEvent{ev("cm/first", 0, "t1@1", 10, true), ev("dep/app", 1, "t1@1", 11, true), ev("cm/first", 0, "t2@1", 20, true), ev("cm/last", 2, "t1@1", 21, true), ev("dep/app", 1, "t2@1", 22, true), ev("cm/last", 2, "t2@1", 23, true)},
		},
		"a later healthy state of an object does not move its first": {
			events: []objEvent{ev("cm/first", 0, "t1@1", 10, true), ev("dep/app", 1, "t1@1", 11, true), ev("dep/app", 1, "t1@1", 30, true), ev("cm/last", 2, "t1@1", 12, true)},
		},
		"no lower wave seen: not judged, counted": {
			events:     []objEvent{ev("cm/last", 2, "t1@1", 12, true)},
			unverified: 1,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, unverified := checkWaves(history{events: tc.events, gaps: tc.gaps})
			if len(got) != tc.want || unverified != tc.unverified {
				t.Errorf("checkWaves = %v, %d unverified; want %d violations, %d unverified", got, unverified, tc.want, tc.unverified)
			}
		})
	}
}

func TestCheckManual(t *testing.T) {
	st := func(rv int64, pending bool) relState { return relState{rv: rv, pending: pending} }
	cases := map[string]struct {
		events     []objEvent
		manual     bool
		states     []relState
		gaps       relists
		want       int
		unverified int
	}{
		// Relists: of Releases, which may hide the state before the apply; of the
		// applied objects, which may hide an earlier apply of the same inputs.
		"a relist of Releases from the last state seen to after the apply: not judged": {
			events: []objEvent{ev("cm/first", 0, "t1@1", 20, true)}, manual: true,
			states: []relState{st(10, false)}, gaps: relists{releaseStream: {{from: 12, to: 25}}}, unverified: 1,
		},
		"a relist of Releases that listed before the apply hides nothing": {
			events: []objEvent{ev("cm/first", 0, "t1@1", 20, true)}, manual: true,
			states: []relState{st(10, false)}, gaps: relists{releaseStream: {{from: 12, to: 18}}}, want: 1,
		},
		"a relist of Releases that began before the last state seen hides nothing": {
			events: []objEvent{ev("cm/first", 0, "t1@1", 20, true)}, manual: true,
			states: []relState{st(10, false), st(14, false)}, gaps: relists{releaseStream: {{from: 12, to: 25}}}, want: 1,
		},
		"the apply came with a relist of its own watch: not judged": {
			events: []objEvent{ev("cm/first", 0, "t1@1", 20, true)}, manual: true,
			states: []relState{st(10, false)}, gaps: relists{hostCMs: {{from: 15, to: 20}}}, unverified: 1,
		},
		"remote: a relist of Releases around the apply: not judged": {
			events: []objEvent{remote(20, 0)}, manual: true,
			states: []relState{at(99, -10*time.Second, false)},
			gaps:   relists{releaseStream: {{from: 99, to: 120, fromAt: t0.Add(-5 * time.Second), end: t0.Add(time.Second)}}}, unverified: 1,
		},
		"remote: a relist of Releases long before hides nothing": {
			events: []objEvent{remote(20, 0)}, manual: true,
			states: []relState{at(99, -10*time.Second, false)},
			gaps:   relists{releaseStream: {{from: 90, to: 95, fromAt: t0.Add(-30 * time.Second), end: t0.Add(-20 * time.Second)}}}, want: 1,
		},
		"applied while a sync was pending": {
			events: []objEvent{ev("cm/first", 0, "t1@1", 20, true)}, manual: true,
			states: []relState{st(10, false), st(15, true)},
		},
		"applied with no sync request": {
			events: []objEvent{ev("cm/first", 0, "t1@1", 20, true)}, manual: true,
			states: []relState{st(10, false)}, want: 1,
		},
		"applied after the sync was handled: a second handling": {
			events: []objEvent{ev("cm/first", 0, "t2@1", 30, true)}, manual: true,
			states: []relState{st(10, false), st(15, true), st(25, false)}, want: 1,
		},
		"states arriving out of order: the last before the apply counts": {
			events: []objEvent{ev("cm/first", 0, "t1@1", 20, true)}, manual: true,
			states: []relState{st(25, false), st(15, true), st(10, false)},
		},
		"applied before the Release was seen at all": {
			events: []objEvent{ev("cm/first", 0, "t1@1", 5, true)}, manual: true,
			states: []relState{st(10, true)}, want: 1,
		},
		"automatic mode needs no sync": {
			events: []objEvent{ev("cm/first", 0, "t2@1", 20, true)},
			states: []relState{st(10, false)},
		},
		"one violation per object and inputs, not per event": {
			events: []objEvent{ev("cm/first", 0, "t2@1", 20, true), ev("cm/first", 0, "t2@1", 21, true)}, manual: true,
			states: []relState{st(10, false)}, want: 1,
		},
		// On the remote cluster the resourceVersions are another etcd's: the times
		// the harness saw things order them, with clockSlack either way.
		"remote: applied while a sync was pending (seen seconds before)": {
			events: []objEvent{remote(20, 0)}, manual: true,
			states: []relState{at(99, -10*time.Second, false), at(100, -5*time.Second, true)},
		},
		"remote: resourceVersions are not compared across clusters": {
			events: []objEvent{remote(5, 0)}, manual: true,
			states: []relState{at(100, -5*time.Second, true)},
		},
		"remote: the pending state seen within the slack after the apply": {
			events: []objEvent{remote(20, 0)}, manual: true,
			states: []relState{at(99, -10*time.Second, false), at(100, clockSlack/2, true)},
		},
		"remote: no pending state from long before to after the apply": {
			events: []objEvent{remote(20, 0)}, manual: true,
			states: []relState{at(99, -10*time.Second, false), at(100, 2*clockSlack, true)}, want: 1,
		},
		"remote: the last state well before had it handled already": {
			events: []objEvent{remote(20, 0)}, manual: true,
			states: []relState{at(98, -20*time.Second, true), at(99, -10*time.Second, false)}, want: 1,
		},
		"remote: applied before any state was seen": {
			events: []objEvent{remote(20, 0)}, manual: true,
			states: []relState{at(99, 2*clockSlack, true)}, want: 1,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, unverified := checkManual(history{events: tc.events, manual: map[string]bool{"ns/r": tc.manual},
				states: map[string][]relState{"ns/r": tc.states}, gaps: tc.gaps})
			if len(got) != tc.want || unverified != tc.unverified {
				t.Errorf("checkManual = %v, %d unverified; want %d violations, %d unverified", got, unverified, tc.want, tc.unverified)
			}
		})
	}
}

// Renders of the approval tables: full refs.
var (
	renderA = "sha256:" + strings.Repeat("a", 64)
	renderB = "sha256:" + strings.Repeat("b", 64)
	renderC = "sha256:" + strings.Repeat("c", 64)
)

func TestCheckApproval(t *testing.T) {
	// rendered is a state that says render ref is the render of inputs (no request).
	rendered := func(rv int64, ref, inputs string) relState {
		return relState{rv: rv, render: ref, rendered: inputs, inputs: inputs}
	}
	// req is a state asking for inputs with a /sync pending, bound to render ref ("":
	// a plain one).
	req := func(rv int64, inputs, ref string) relState {
		return relState{rv: rv, inputs: inputs, pending: true, bound: ref}
	}
	reqAt := func(d time.Duration, inputs, ref string) relState {
		s := req(99, inputs, ref)
		s.at = t0.Add(d)
		return s
	}
	pinned := func(s relState, pin string) relState { s.pinned, s.pin = true, pin; return s }
	// Render A is of t1@1, render B of t2@1.
	maps := []relState{rendered(5, renderA, "t1@1"), rendered(6, renderB, "t2@1")}
	with := func(ss ...relState) []relState { return append(slices.Clone(maps), ss...) }
	cases := map[string]struct {
		events                          []objEvent
		automatic                       bool
		states                          []relState
		gaps                            relists
		want, judged, bound, unverified int
	}{
		"a bound approval of render A, then an apply of render B's inputs": {
			events: []objEvent{ev("cm/first", 0, "t2@1", 20, true)},
			states: with(req(15, "t2@1", renderA)), want: 1, judged: 1, bound: 1,
		},
		"a bound approval of render A, then new values, then an apply of them": {
			events: []objEvent{ev("cm/first", 0, "t3@1", 20, true)},
			states: with(req(14, "t1@1", renderA), req(15, "t3@1", renderA)), want: 1, judged: 1, bound: 1,
		},
		"a bound approval of render A, then an apply of its inputs": {
			events: []objEvent{ev("cm/first", 0, "t1@1", 20, true)},
			states: with(req(15, "t1@1", renderA)), judged: 1, bound: 1,
		},
		"a plain /sync approves any render": {
			events: []objEvent{ev("cm/first", 0, "t2@1", 20, true)},
			states: with(req(15, "t2@1", "")), judged: 1,
		},
		"the inputs of the approved render unknown: not judged": {
			events: []objEvent{ev("cm/first", 0, "t2@1", 20, true)},
			states: with(req(15, "t2@1", renderC)), judged: 1, bound: 1, unverified: 1,
		},
		"a render seen as the render of two inputs: unknown, not judged": {
			events: []objEvent{ev("cm/first", 0, "t2@1", 20, true)},
			states: with(rendered(7, renderA, "t3@1"), req(15, "t2@1", renderA)), judged: 1, bound: 1, unverified: 1,
		},
		"a bound approval in its short form": {
			events: []objEvent{ev("cm/first", 0, "t2@1", 20, true)},
			states: with(req(15, "t2@1", v1alpha1.RenderRef(renderA).Short())), want: 1, judged: 1, bound: 1,
		},
		// Seed 11: the observer's plain /sync replaced the approval of render A after
		// the values changed; the controller applied them; the next /sync, bound to
		// render A again, came between its read and its apply.
		"a plain /sync while the spec asked for the inputs, a bound one after it: the controller may have read the plain one": {
			events: []objEvent{ev("cm/first", 0, "t2@1", 20, true)},
			states: with(req(12, "t2@1", renderA), req(13, "t2@1", ""), req(15, "t2@1", renderA)), judged: 1, bound: 1,
		},
		"a plain /sync while the spec asked for other inputs approves nothing of these": {
			events: []objEvent{ev("cm/first", 0, "t2@1", 20, true)},
			states: with(req(12, "t1@1", ""), req(15, "t2@1", renderA)), want: 1, judged: 1, bound: 1,
		},
		"a plain /sync after the apply does not count": {
			events: []objEvent{ev("cm/first", 0, "t2@1", 20, true)},
			states: with(req(15, "t2@1", renderA), req(25, "t2@1", "")), want: 1, judged: 1, bound: 1,
		},
		"no state asking for the inputs seen before the apply: not judged": {
			events: []objEvent{ev("cm/first", 0, "t4@1", 20, true)},
			states: with(req(15, "t1@1", renderA)), judged: 1, bound: 0, unverified: 1,
		},
		"a relist of Releases since the spec asked for the inputs: not judged": {
			events: []objEvent{ev("cm/first", 0, "t2@1", 20, true)},
			states: with(req(12, "t1@1", ""), req(15, "t2@1", renderA), req(17, "t2@1", renderA)),
			gaps:   relists{releaseStream: {{from: 13, to: 16}}}, judged: 1, bound: 1, unverified: 1,
		},
		"a relist of Releases before the spec asked for the inputs hides nothing": {
			events: []objEvent{ev("cm/first", 0, "t2@1", 20, true)},
			states: with(req(12, "t1@1", ""), req(15, "t2@1", renderA)),
			gaps:   relists{releaseStream: {{from: 1, to: 4}}}, want: 1, judged: 1, bound: 1,
		},
		// A pinned Release applies its pin; the server takes a /sync bound to its
		// current render or its pinned one.
		"pinned: a /sync bound to the current render applies the pinned render": {
			events: []objEvent{ev("cm/first", 0, "t1@1", 20, true)},
			states: with(pinned(req(15, "t1@1", renderB), renderA)), judged: 1, bound: 1,
		},
		"pinned: neither the bound nor the pinned render of those inputs": {
			events: []objEvent{ev("cm/first", 0, "t3@1", 20, true)},
			states: with(pinned(req(15, "t3@1", renderB), renderA)), want: 1, judged: 1, bound: 1,
		},
		"pinned to no render: not judged": {
			events: []objEvent{ev("cm/first", 0, "t3@1", 20, true)},
			states: with(pinned(req(15, "t3@1", renderB), "")), judged: 1, bound: 1, unverified: 1,
		},
		// What checkManual judges is not judged again.
		"no request pending: checkManual's violation": {
			events: []objEvent{ev("cm/first", 0, "t2@1", 20, true)},
			states: with(relState{rv: 15, inputs: "t2@1", bound: renderA}),
		},
		"a relist of Releases may have hidden the state before: checkManual counts it": {
			events: []objEvent{ev("cm/first", 0, "t2@1", 20, true)},
			states: with(req(15, "t2@1", renderA)), gaps: relists{releaseStream: {{from: 16, to: 25}}},
		},
		"automatic mode needs no approval": {
			events: []objEvent{ev("cm/first", 0, "t2@1", 20, true)}, automatic: true,
			states: with(req(15, "t2@1", renderA)),
		},
		"one judgement per object and inputs": {
			events: []objEvent{ev("cm/first", 0, "t2@1", 20, true), ev("cm/first", 0, "t2@1", 21, true), ev("dep/app", 1, "t2@1", 22, false)},
			states: with(req(15, "t2@1", renderA)), want: 2, judged: 2, bound: 2,
		},
		"remote: a bound approval of render A seen within the slack after an apply of its inputs": {
			events: []objEvent{remote(20, 0)},
			states: with(reqAt(-10*time.Second, "t1@1", renderB), reqAt(clockSlack/2, "t1@1", renderA)), judged: 1, bound: 1,
		},
		"remote: only approvals of render B from well before to after an apply of render A's inputs": {
			events: []objEvent{remote(20, 0)},
			states: with(reqAt(-10*time.Second, "t1@1", renderB), reqAt(-time.Second, "t1@1", renderB), reqAt(2*clockSlack, "t1@1", "")), want: 1, judged: 1, bound: 1,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, judged, bound, unverified := checkApproval(history{events: tc.events, manual: map[string]bool{"ns/r": !tc.automatic},
				states: map[string][]relState{"ns/r": tc.states}, gaps: tc.gaps})
			if len(got) != tc.want || judged != tc.judged || bound != tc.bound || unverified != tc.unverified {
				t.Errorf("checkApproval = %v, %d judged, %d bound, %d unverified; want %d violations, %d judged, %d bound, %d unverified",
					got, judged, bound, unverified, tc.want, tc.judged, tc.bound, tc.unverified)
			}
			for _, v := range got {
				if v.Invariant != "approval" {
					t.Errorf("violation of %q, want approval: %s", v.Invariant, v)
				}
			}
		})
	}
}

// TestRenderedInputs: a state maps its render to its spec's inputs only when its
// status says that it rendered them.
func TestRenderedInputs(t *testing.T) {
	rel := func(gen, observed int64, chart, rendered, reason string) *v1alpha1.Release {
		r := &v1alpha1.Release{ObjectMeta: metav1.ObjectMeta{Generation: gen}}
		r.Spec.Chart.Version, r.Spec.Values = chart, valuesOf("t7")
		r.Status.ObservedGeneration = observed
		r.Status.Render = &v1alpha1.RenderStatus{Ref: renderA, ChartVersion: rendered}
		r.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ConditionApplied, Status: metav1.ConditionFalse, Reason: reason, ObservedGeneration: observed}}
		return r
	}
	noRender := rel(3, 3, versionA, versionA, v1alpha1.ReasonWaitingForSync)
	noRender.Status.Render = nil
	cases := map[string]struct {
		rel  *v1alpha1.Release
		want string
	}{
		"waiting for a /sync, of its generation":        {rel: rel(3, 3, versionA, versionA, v1alpha1.ReasonWaitingForSync), want: "t7@" + versionA},
		"applied, of its generation":                    {rel: rel(3, 3, versionA, versionA, v1alpha1.ReasonApplied), want: "t7@" + versionA},
		"waiting for a sync wave":                       {rel: rel(3, 3, versionA, versionA, v1alpha1.ReasonWaitingForSyncWave), want: "t7@" + versionA},
		"the status of an earlier generation":           {rel: rel(3, 2, versionA, versionA, v1alpha1.ReasonWaitingForSync)},
		"the chart repository down: no render":          {rel: rel(3, 3, versionA, versionA, v1alpha1.ReasonSourceNotReady)},
		"the Cluster unreachable: no render":            {rel: rel(3, 3, versionA, versionA, v1alpha1.ReasonClusterNotReady)},
		"held by a lower cluster wave before rendering": {rel: rel(3, 3, versionA, versionA, v1alpha1.ReasonWaitingForClusterWave)},
		"the render of another chart version":           {rel: rel(3, 3, versionB, versionA, v1alpha1.ReasonWaitingForSync)},
		"no render":                                     {rel: noRender},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, renderedInputs(tc.rel)); diff != "" {
				t.Errorf("renderedInputs (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSyncPending(t *testing.T) {
	rel := func(annotation, handled string) *v1alpha1.Release {
		r := &v1alpha1.Release{}
		if annotation != "" {
			r.Annotations = map[string]string{v1alpha1.AnnotationSyncRequestedAt: annotation}
		}
		if handled != "" {
			h, _ := v1alpha1.ParseSyncTime(handled)
			r.Status.LastHandledSyncAt = &metav1.Time{Time: h}
		}
		return r
	}
	cases := map[string]struct {
		rel  *v1alpha1.Release
		want bool
	}{
		"no request":                   {rel: rel("", ""), want: false},
		"a request, nothing handled":   {rel: rel("2026-12-03T10:00:05Z", ""), want: true},
		"a request later than handled": {rel: rel("2026-12-03T10:00:06Z", "2026-12-03T10:00:05Z"), want: true},
		"handled":                      {rel: rel("2026-12-03T10:00:05Z", "2026-12-03T10:00:05Z"), want: false},
		"same second, with fractions":  {rel: rel("2026-12-03T10:00:05.9Z", "2026-12-03T10:00:05Z"), want: false},
		"not a time":                   {rel: rel("soon", ""), want: false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := syncPending(tc.rel); got != tc.want {
				t.Errorf("syncPending = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestCheckSyncHandled(t *testing.T) {
	at := func(s string) time.Time { t, _ := v1alpha1.ParseSyncTime(s); return t }
	rel := func(sync, force string) *v1alpha1.Release {
		r := &v1alpha1.Release{}
		if sync != "" {
			r.Status.LastHandledSyncAt = &metav1.Time{Time: at(sync)}
		}
		if force != "" {
			r.Status.LastHandledForceSyncAt = &metav1.Time{Time: at(force)}
		}
		return r
	}
	cases := map[string]struct {
		rel               *v1alpha1.Release
		manual            bool
		ackSync, ackForce time.Time
		handled           bool
	}{
		"manual, handled at the acknowledged time": {rel: rel("2026-12-03T10:00:05Z", ""), manual: true, ackSync: at("2026-12-03T10:00:05Z"), handled: true},
		"manual, handled later":                    {rel: rel("2026-12-03T10:00:09Z", ""), manual: true, ackSync: at("2026-12-03T10:00:05Z"), handled: true},
		"manual, not reached":                      {rel: rel("2026-12-03T10:00:04Z", ""), manual: true, ackSync: at("2026-12-03T10:00:05Z")},
		"manual, never handled":                    {rel: rel("", ""), manual: true, ackSync: at("2026-12-03T10:00:05Z")},
		"automatic does not use lastHandledSyncAt": {rel: rel("", ""), ackSync: at("2026-12-03T10:00:05Z"), handled: true},
		"automatic, a force not handled":           {rel: rel("", "2026-12-03T10:00:01Z"), ackForce: at("2026-12-03T10:00:05Z")},
		"automatic, a force handled":               {rel: rel("", "2026-12-03T10:00:05Z"), ackForce: at("2026-12-03T10:00:05Z"), handled: true},
		"nothing acknowledged":                     {rel: rel("", ""), manual: true, handled: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			why := checkSyncHandled(tc.rel, tc.manual, tc.ackSync, tc.ackForce)
			if (why == "") != tc.handled {
				t.Errorf("checkSyncHandled = %q, want handled=%v", why, tc.handled)
			}
		})
	}
}

func TestJudge(t *testing.T) {
	cond := func(typ, status, reason string, gen int64) metav1.Condition {
		return metav1.Condition{Type: typ, Status: metav1.ConditionStatus(status), Reason: reason, ObservedGeneration: gen}
	}
	rel := func(gen int64, policy v1alpha1.FailureAction, phase v1alpha1.RolloutPhase, conds ...metav1.Condition) *v1alpha1.Release {
		r := &v1alpha1.Release{ObjectMeta: metav1.ObjectMeta{Generation: gen}, Status: v1alpha1.ReleaseStatus{Conditions: conds}}
		if policy != "" {
			r.Spec.FailurePolicy = &v1alpha1.FailurePolicy{Action: policy}
		}
		if phase != "" {
			r.Status.Rollout = &v1alpha1.RolloutStatus{Phase: phase}
		}
		return r
	}
	const rollback, halt = v1alpha1.FailureActionRollback, v1alpha1.FailureActionHalt
	waiting := cond("Applied", "False", "WaitingForSyncWave", 2)
	cases := map[string]struct {
		rel           *v1alpha1.Release
		expectFailure bool
		degraded      bool
		want          bool
	}{
		"Ready for the current generation": {rel: rel(3, "", "", cond("Ready", "True", "Ready", 3)), want: true},
		"Ready for an older generation":    {rel: rel(3, "", "", cond("Ready", "True", "Ready", 2))},
		// Seed 3467476935: chaos-2/r002 Ready after a forced /sync, its rollout
		// Progressing; the write of Succeeded came in the quiet window.
		"Ready, its rollout still Progressing": {rel: rel(3, "", v1alpha1.RolloutProgressing, cond("Ready", "True", "Ready", 3))},
		"Ready, its rollout Succeeded":         {rel: rel(3, "", v1alpha1.RolloutSucceeded, cond("Ready", "True", "Ready", 3)), want: true},
		"not Ready":                            {rel: rel(3, "", "", cond("Ready", "False", "WaitingForSyncWave", 3))},
		"no conditions yet":                    {rel: rel(1, "", "")},
		"failing, Rollback, rolled back": {
			rel:           rel(2, rollback, v1alpha1.RolloutRolledBack, cond("Ready", "False", "RolledBack", 2), cond("Applied", "False", "RolledBack", 2)),
			expectFailure: true, want: true,
		},
		"failing, Rollback, nothing to roll back to": {
			rel:           rel(2, rollback, v1alpha1.RolloutFailed, cond("Ready", "False", "WaitingForSyncWave", 2), waiting),
			expectFailure: true, want: true,
		},
		"failing, Rollback, failed with a previous render, not rolled back yet": {
			rel: func() *v1alpha1.Release {
				r := rel(2, rollback, v1alpha1.RolloutFailed, cond("Ready", "False", "WaitingForSyncWave", 2), waiting)
				r.Status.LastSuccessful = &v1alpha1.LastSuccessful{RenderRef: "sha256:1"}
				return r
			}(),
			expectFailure: true,
		},
		"failing, Rollback, still waiting for wave 2": {
			rel:           rel(2, rollback, v1alpha1.RolloutProgressing, cond("Ready", "False", "WaitingForSyncWave", 2), waiting),
			expectFailure: true, degraded: true,
		},
		"failing, Halt, rollout failed": {
			rel:           rel(2, halt, v1alpha1.RolloutFailed, cond("Ready", "False", "WaitingForSyncWave", 2), waiting),
			expectFailure: true, want: true,
		},
		"failing, Halt, rollout progressing": {
			rel:           rel(2, halt, v1alpha1.RolloutProgressing, cond("Ready", "False", "WaitingForSyncWave", 2), waiting),
			expectFailure: true,
		},
		"failing, no policy, wave 1 Degraded, wave 2 held": {
			rel:           rel(2, "", "", cond("Ready", "False", "WaitingForSyncWave", 2), waiting),
			expectFailure: true, degraded: true, want: true,
		},
		"failing, no policy, wave 1 still progressing": {
			rel:           rel(2, "", "", cond("Ready", "False", "WaitingForSyncWave", 2), waiting),
			expectFailure: true,
		},
		"failing version Ready is wrong": {rel: rel(2, "", "", cond("Ready", "True", "Ready", 2)), expectFailure: true, degraded: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, why := judge(tc.rel, tc.expectFailure, tc.degraded)
			if got != tc.want {
				t.Errorf("judge = %v (%s), want %v", got, why, tc.want)
			}
		})
	}
}

func TestPercentile(t *testing.T) {
	s := func(n ...int) []time.Duration {
		out := make([]time.Duration, len(n))
		for i, v := range n {
			out[i] = time.Duration(v) * time.Second
		}
		return out
	}
	cases := map[string]struct {
		in   []time.Duration
		p    float64
		want time.Duration
	}{
		"none":          {in: nil, p: 50, want: 0},
		"median of odd": {in: s(3, 1, 2), p: 50, want: 2 * time.Second},
		"p99 of ten":    {in: s(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), p: 99, want: 10 * time.Second},
		"max":           {in: s(4, 9, 1), p: 100, want: 9 * time.Second},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, percentile(tc.in, tc.p)); diff != "" {
				t.Errorf("percentile (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseKinds(t *testing.T) {
	network, err := parseKinds("network")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range network {
		if _, kills := processFaults[k]; kills {
			t.Errorf("network kinds include %q, which kills a process", k)
		}
	}
	if _, err := parseKinds("kill everything"); err == nil {
		t.Error("an unknown kind: want an error naming it and the kinds, got none")
	}
}

func TestCheckClusterWaves(t *testing.T) {
	// Release ns/r (cluster wave 1) applies inputs t1@1; ns/low is of wave 0 on the
	// same Cluster, ns/other of wave 0 on another.
	host := func(rv int64) objEvent { return ev("cm/first", 0, "t1@1", rv, true) }
	low := func(rv int64, ready, gone bool) relState { return relState{rv: rv, ready: ready, gone: gone} }
	lowAt := func(d time.Duration, ready bool) relState { return relState{rv: 1, at: t0.Add(d), ready: ready} }
	places := func(cluster string) map[string]place {
		return map[string]place{"ns/r": {cluster, 1}, "ns/low": {cluster, 0}, "ns/other": {"elsewhere", 0}, "ns/same": {cluster, 1}}
	}
	// Seen at t0+d; asked: a state of ns/r asking for inputs.
	hostAt := func(rv int64, d time.Duration) objEvent {
		e := host(rv)
		e.at = t0.Add(d)
		return e
	}
	lowSeen := func(rv int64, d time.Duration, ready bool) relState {
		return relState{rv: rv, at: t0.Add(d), ready: ready}
	}
	asked := func(rv int64, inputs string) relState { return relState{rv: rv, inputs: inputs} }
	cases := map[string]struct {
		events         []objEvent
		cluster        string
		low, higher    []relState
		gaps           relists
		want           int
		wantConcurrent int
		unverified     int
	}{
		"a relist of Releases hid the lower wave's state before the apply: not judged": {
			events: []objEvent{host(20)}, low: []relState{low(10, false, false)},
			gaps: relists{releaseStream: {{from: 12, to: 25}}}, unverified: 1,
		},
		// Races: the lower wave stopped being ready after the higher one asked for
		// the inputs it applied, less than clockSlack before the apply.
		"the lower wave changed during the higher one's reconcile": {
			events: []objEvent{hostAt(20, 0)}, higher: []relState{asked(5, "t0@1"), asked(12, "t1@1"), asked(13, "t1@1")},
			low: []relState{lowSeen(10, -5*time.Second, true), lowSeen(15, -time.Second, false)}, wantConcurrent: 1,
		},
		"the lower wave changed before the higher one asked": {
			events: []objEvent{hostAt(20, 0)}, higher: []relState{asked(5, "t0@1"), asked(16, "t1@1")},
			low: []relState{lowSeen(10, -5*time.Second, true), lowSeen(15, -time.Second, false)}, want: 1,
		},
		"the lower wave changed after the higher one asked, long before the apply": {
			events: []objEvent{hostAt(20, 0)}, higher: []relState{asked(12, "t1@1")},
			low: []relState{lowSeen(10, -20*time.Second, true), lowSeen(15, -2*clockSlack, false)}, want: 1,
		},
		"the higher one never asked for the inputs it applied": {
			events: []objEvent{hostAt(20, 0)}, higher: []relState{asked(12, "t9@1")},
			low: []relState{lowSeen(10, -5*time.Second, true), lowSeen(15, -time.Second, false)}, want: 1,
		},
		"the lower wave was created during the higher one's reconcile": {
			events: []objEvent{hostAt(20, 0)}, higher: []relState{asked(12, "t1@1")},
			low: []relState{lowSeen(15, -time.Second, false)}, wantConcurrent: 1,
		},
		"the lower wave was never ready since before the higher one asked": {
			events: []objEvent{hostAt(20, 0)}, higher: []relState{asked(12, "t1@1")},
			low: []relState{lowSeen(8, -5*time.Second, false), lowSeen(15, -time.Second, false)}, want: 1,
		},
		"the lower wave was Applied and Healthy before": {
			events: []objEvent{host(20)}, low: []relState{low(10, false, false), low(15, true, false)},
		},
		"the lower wave was not ready": {
			events: []objEvent{host(20)}, low: []relState{low(10, false, false)}, want: 1,
		},
		"the lower wave became ready only after": {
			events: []objEvent{host(20)}, low: []relState{low(10, false, false), low(25, true, false)}, want: 1,
		},
		"the lower wave was ready, then not, before the apply": {
			events: []objEvent{host(20)}, low: []relState{low(10, true, false), low(15, false, false)}, want: 1,
		},
		"the lower wave did not exist yet": {
			events: []objEvent{host(20)}, low: []relState{low(25, false, false)},
		},
		// Seed 1251186771: chaos-0/r003 was deleted while the watch of Releases was
		// down; the relist found it gone, recorded at the list's resourceVersion
		// (relists.gone), not at its last state seen.
		"the lower wave went while the watch was down, gone by the relist before the apply": {
			events: []objEvent{host(40)}, low: []relState{low(10, false, false), low(30, false, true)},
			gaps: relists{releaseStream: {{from: 12, to: 30}}},
		},
		"the lower wave went while the watch was down, the relist listed after the apply: not judged": {
			events: []objEvent{host(20)}, low: []relState{low(10, false, false), low(30, false, true)},
			gaps: relists{releaseStream: {{from: 12, to: 30}}}, unverified: 1,
		},
		// Seed 371706423: the watch of Releases was silent after a convoy apiserver
		// kill; the last known state of the lower wave was the answer to the settle's
		// /sync (2400), above where the watch stopped (2344); a list stood in.
		"the lower wave's last known state is a write's answer within a relist: not judged": {
			events: []objEvent{host(2609)}, low: []relState{{rv: 2400, written: true}, low(2700, true, false)},
			gaps: relists{releaseStream: {{from: 2344, to: 3000}}}, unverified: 1,
		},
		"the lower wave's last state came with the relist: judged": {
			events: []objEvent{host(2609)}, low: []relState{low(2400, false, false), low(2700, true, false)},
			gaps: relists{releaseStream: {{from: 2344, to: 3000}}}, want: 1,
		},
		"the lower wave was being deleted": {
			events: []objEvent{host(20)}, low: []relState{low(10, false, false), low(15, false, true)},
		},
		"only the first apply of some inputs counts": {
			events: []objEvent{host(20), host(40)}, low: []relState{low(10, true, false), low(30, false, false)},
		},
		"the first apply of some inputs is the lowest resourceVersion, not the first seen": {
			events: []objEvent{host(40), host(20)}, low: []relState{low(10, false, false), low(30, true, false)}, want: 1,
		},
		"remote: ready seconds before": {
			cluster: remoteClusterName, events: []objEvent{remote(5, 0)},
			low: []relState{lowAt(-10*time.Second, false), lowAt(-5*time.Second, true)},
		},
		"remote: ready seen within the slack after": {
			cluster: remoteClusterName, events: []objEvent{remote(5, 0)},
			low: []relState{lowAt(-10*time.Second, false), lowAt(clockSlack/2, true)},
		},
		"remote: not ready from well before to well after": {
			cluster: remoteClusterName, events: []objEvent{remote(5, 0)},
			low: []relState{lowAt(-10*time.Second, false), lowAt(2*clockSlack, true)}, want: 1,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			states := map[string][]relState{"ns/low": tc.low, "ns/r": tc.higher, "ns/other": {low(1, false, false)}, "ns/same": {low(1, false, false)}}
			got, _, concurrent, unverified := checkClusterWaves(history{events: tc.events, states: states, places: places(tc.cluster), gaps: tc.gaps})
			if len(got) != tc.want || concurrent != tc.wantConcurrent || unverified != tc.unverified {
				t.Errorf("checkClusterWaves = %v, %d raced, %d unverified; want %d violations, %d raced, %d unverified",
					got, concurrent, unverified, tc.want, tc.wantConcurrent, tc.unverified)
			}
		})
	}
}

func TestGoingAway(t *testing.T) {
	now := metav1.Now()
	rel := func(deleting bool) *v1alpha1.Release {
		r := &v1alpha1.Release{ObjectMeta: metav1.ObjectMeta{Namespace: "chaos-3", Name: "r043", CreationTimestamp: now}}
		if deleting {
			r.DeletionTimestamp = &now
			r.Finalizers = []string{v1alpha1.Finalizer}
		}
		return r
	}
	ns := func(deleting bool, phase corev1.NamespacePhase) *corev1.Namespace {
		n := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "chaos-3", CreationTimestamp: now}, Status: corev1.NamespaceStatus{Phase: phase}}
		if deleting {
			n.DeletionTimestamp = &now
		}
		return n
	}
	// created sets the Release's creation d from the namespace's (now).
	created := func(r *v1alpha1.Release, d time.Duration) *v1alpha1.Release {
		r.CreationTimestamp = metav1.NewTime(now.Add(d))
		return r
	}
	// recorded sets the namespace UID the Release recorded; uid, the namespace's.
	recorded := func(r *v1alpha1.Release, uid string) *v1alpha1.Release {
		r.Annotations = map[string]string{v1alpha1.AnnotationNamespaceUID: uid}
		return r
	}
	uid := func(n *corev1.Namespace, uid string) *corev1.Namespace {
		n.UID = types.UID(uid)
		return n
	}
	cases := map[string]struct {
		rel  *v1alpha1.Release
		ns   *corev1.Namespace
		want bool
	}{
		"a Release in an active namespace stays": {rel: rel(false), ns: ns(false, corev1.NamespaceActive), want: false},
		"a Release being deleted goes":           {rel: rel(true), ns: ns(false, corev1.NamespaceActive), want: true},
		// Seed 142163185: the namespace controller had not yet deleted chaos-3/r043
		// (no deletion timestamp) when the read back found it; it went with chaos-3.
		"a Release in a terminating namespace goes":          {rel: rel(false), ns: ns(true, corev1.NamespaceTerminating), want: true},
		"a deletion timestamp on the namespace is enough":    {rel: rel(false), ns: ns(true, corev1.NamespaceActive), want: true},
		"the phase Terminating is enough":                    {rel: rel(false), ns: ns(false, corev1.NamespaceTerminating), want: true},
		"a Release whose namespace is gone goes":             {rel: rel(false), ns: nil, want: true},
		"a Release being deleted in a terminating namespace": {rel: rel(true), ns: ns(true, corev1.NamespaceTerminating), want: true},
		// Seed 1251186771: chaos-2 deleted without its Releases, and created again.
		"a Release older than its namespace goes": {rel: created(rel(false), -2*time.Minute), ns: ns(false, corev1.NamespaceActive), want: true},
		"a Release as old as its namespace stays": {rel: created(rel(false), 0), ns: ns(false, corev1.NamespaceActive), want: false},
		"a Release of the namespace created again at once goes": {rel: recorded(created(rel(false), 0), "first"),
			ns: uid(ns(false, corev1.NamespaceActive), "second"), want: true},
		"a Release of its namespace stays": {rel: recorded(created(rel(false), -2*time.Minute), "first"),
			ns: uid(ns(false, corev1.NamespaceActive), "first"), want: false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, goingAway(tc.rel, tc.ns)); diff != "" {
				t.Errorf("goingAway (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPlanFaults(t *testing.T) {
	startup := []faultKind{faultStartKubeAPIDown, faultStartAPIServerDown}
	network, err := parseKinds("network")
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		n             int
		kinds         []faultKind
		require       []faultKind
		wantFirst     []faultKind // each among the first 2×len(wantFirst) faults
		wantNoStartup bool
	}{
		// Decision 0154: make test's short run (10 faults of every kind) has both.
		"the short run has both start-up faults": {n: 10, kinds: faultKinds, require: startup, wantFirst: startup},
		"make chaos's run has them early":        {n: 200, kinds: faultKinds, require: startup, wantFirst: startup},
		"a plan shorter than the required kinds": {n: 1, kinds: faultKinds, require: startup},
		"a kind that -kinds leaves out is not required": {
			n: 10, kinds: network, require: startup, wantNoStartup: true,
		},
		"no requirement": {n: 10, kinds: []faultKind{faultRepo5xx}, wantNoStartup: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			for seed := range uint64(50) {
				got := planFaults(rand.New(rand.NewPCG(seed, seed^0x5eed)), tc.n, 3*time.Second, tc.kinds, tc.require)
				if len(got) != tc.n {
					t.Fatalf("seed %d: %d faults, want %d", seed, len(got), tc.n)
				}
				head := got[:min(tc.n, 2*len(tc.wantFirst))]
				for _, k := range tc.wantFirst {
					if !slices.ContainsFunc(head, func(f fault) bool { return f.kind == k }) {
						t.Errorf("seed %d: %q is not among the first %d faults: %v", seed, k, len(head), head)
					}
				}
				for _, f := range got {
					isStartup := slices.Contains(startup, f.kind)
					if !slices.Contains(tc.kinds, f.kind) && !slices.Contains(tc.require, f.kind) {
						t.Errorf("seed %d: a fault of kind %q, not among the kinds", seed, f.kind)
					}
					if tc.wantNoStartup && isStartup {
						t.Errorf("seed %d: a start-up fault in a plan without them: %v", seed, f)
					}
					if isStartup != (f.proc != "") || (isStartup && !slices.Contains(startupProcs, f.proc)) {
						t.Errorf("seed %d: %q fault with process %q; want one of %v exactly for the start-up kinds", seed, f.kind, f.proc, startupProcs)
					}
				}
				again := planFaults(rand.New(rand.NewPCG(seed, seed^0x5eed)), tc.n, 3*time.Second, tc.kinds, tc.require)
				if diff := cmp.Diff(got, again, cmp.AllowUnexported(fault{})); diff != "" {
					t.Errorf("seed %d: the same seed drew another plan (-first +second):\n%s", seed, diff)
				}
			}
		})
	}
}

func TestLastStartTail(t *testing.T) {
	cases := map[string]struct {
		log  string
		n    int
		want string
	}{
		"only the last start's lines": {
			log:  "--- t0 convoy [observer]\nold line\n--- t1 convoy [observer]\nE1 create the manager: failed to get server groups\n",
			n:    5,
			want: "    E1 create the manager: failed to get server groups",
		},
		"the last n lines": {log: "--- t0 convoy\na\nb\nc\n", n: 2, want: "    b\n    c"},
		"no start line":    {log: "a\nb", n: 5, want: "    a\n    b"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, lastStartTail(tc.log, tc.n)); diff != "" {
				t.Errorf("lastStartTail (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAliveFirst(t *testing.T) {
	in := []violation{{"converge", "ns/a", "1"}, {"alive", procObserver, "2"}, {"quiet", "-", "3"}, {"alive", procController2, "4"}}
	want := []violation{{"alive", procObserver, "2"}, {"alive", procController2, "4"}, {"converge", "ns/a", "1"}, {"quiet", "-", "3"}}
	if diff := cmp.Diff(want, aliveFirst(in)); diff != "" {
		t.Errorf("aliveFirst (-want +got):\n%s", diff)
	}
}

func TestRelistsGone(t *testing.T) {
	cases := map[string]struct {
		gaps relists
		last int64
		want int64
	}{
		"no relist: its last state":                    {last: 10, want: 10},
		"found gone by a relist: the list's":           {gaps: relists{releaseStream: {{from: 12, to: 30}}}, last: 10, want: 30},
		"the latest relist counts":                     {gaps: relists{releaseStream: {{from: 5, to: 8}, {from: 12, to: 30}}}, last: 10, want: 30},
		"a relist of another stream says nothing":      {gaps: relists{hostCMs: {{from: 12, to: 30}}}, last: 10, want: 10},
		"a relist before its last state: its last one": {gaps: relists{releaseStream: {{from: 2, to: 5}}}, last: 10, want: 10},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.gaps.gone(releaseStream, tc.last)); diff != "" {
				t.Errorf("gone (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRecorderStandIn(t *testing.T) {
	rel := func(name string, rv int64, ready bool) *v1alpha1.Release {
		r := &v1alpha1.Release{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: fmt.Sprint(rv), Generation: 1}}
		if ready {
			for _, c := range []string{v1alpha1.ConditionApplied, v1alpha1.ConditionHealthy} {
				r.Status.Conditions = append(r.Status.Conditions, metav1.Condition{Type: c, Status: metav1.ConditionTrue, ObservedGeneration: 1})
			}
		}
		return r
	}
	r := newRecorder()
	r.listed(releaseStream, 5) // the informer's first list
	r.watched(rel("low", 10, true))
	r.watched(rel("gone", 11, true))
	r.state(rel("low", 20, false)) // a write's answer; then the watch fell silent
	live := []v1alpha1.Release{*rel("low", 30, true)}
	if got := r.behind(live); got != 2 {
		t.Fatalf("behind = %d, want 2 (ns/low's state at 30 unseen, ns/gone deleted unseen)", got)
	}
	r.standIn(40, live)
	if got := r.behind(live); got != 0 {
		t.Errorf("behind after standIn = %d, want 0", got)
	}
	h := r.snapshot()
	if diff := cmp.Diff([]relist{{from: 11, to: 40}}, h.gaps[releaseStream], cmp.AllowUnexported(relist{}), cmpopts.IgnoreFields(relist{}, "fromAt", "end")); diff != "" {
		t.Errorf("the stand-in relist (-want +got):\n%s", diff)
	}
	if last := h.states["ns/gone"][len(h.states["ns/gone"])-1]; !last.gone || last.rv != 40 {
		t.Errorf("ns/gone's last state = %+v, want gone at 40", last)
	}
	// An apply of a higher wave at 25 is not judged against ns/low's state at 20.
	places := h.places
	places["ns/r"] = place{"", 1}
	got, judged, _, unverified := checkClusterWaves(history{events: []objEvent{ev("cm/first", 0, "t1@1", 25, true)}, states: h.states, places: places, gaps: h.gaps})
	if len(got) != 0 || judged != 1 || unverified != 2 {
		t.Errorf("checkClusterWaves = %v, %d judged, %d unverified; want none, 1 judged, 2 unverified (ns/low and ns/gone)", got, judged, unverified)
	}
}

// TestChangedIn: the quiet window's report names each Release whose new state the
// watch saw in the window, with its state before; a state from a write's answer or
// outside the window is not named.
func TestChangedIn(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 5, 26, 10, 0, time.UTC)
	from, to := t0, t0.Add(15*time.Second)
	states := map[string][]relState{
		"chaos-0/r021": {
			{rv: 10, at: t0.Add(-5 * time.Second), status: "Ready=False/WaitingForSyncWave"},
			{rv: 11, at: t0.Add(-time.Second), written: true, status: "written"},
			{rv: 12, at: t0.Add(3 * time.Second), status: "Ready=False/WaitingForSyncWave; overdue"},
		},
		"chaos-1/r001": {{rv: 5, at: t0.Add(-time.Minute), status: "Ready=True"}},
		"chaos-1/r002": {{rv: 6, at: t0.Add(time.Second), written: true, status: "written in the window"}},
		"chaos-2/r003": {{rv: 7, at: t0.Add(20 * time.Second), status: "after the window"}},
		"chaos-2/r004": {{rv: 8, at: t0.Add(14 * time.Second), status: "first seen"}},
	}
	got := changedIn(states, from, to)
	want := []string{
		"chaos-0/r021 at rv 12: Ready=False/WaitingForSyncWave; overdue (before, rv 10: Ready=False/WaitingForSyncWave)",
		"chaos-2/r004 at rv 8: first seen (before, none seen)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("changedIn =\n%q\nwant\n%q", got, want)
	}
}

// TestLeaseLost: only a controller replica whose last start ended on losing its leader
// lease is started again by the harness; any other exit stays an "alive" violation.
func TestLeaseLost(t *testing.T) {
	const lost = "    E1206 leaderelection.go: Failed to update lock\n    error: leader election lost"
	for _, c := range []struct {
		name, tail string
		want       bool
	}{
		{procController, lost, true},
		{procController2, lost, true},
		{procObserver, lost, false},
		{procController, "    panic: runtime error: invalid memory address", false},
		{procController, "    Error: create the manager: connection refused", false},
	} {
		if got := leaseLost(&exitedError{name: c.name, tail: c.tail}); got != c.want {
			t.Errorf("leaseLost(%s, %q) = %v, want %v", c.name, c.tail, got, c.want)
		}
	}
}

// TestSyncKindOf: the driver binds the /syncs of manual Releases (some followed at
// once by new values), by a step's pick, and never those of automatic Releases.
func TestSyncKindOf(t *testing.T) {
	manual, automatic := &release{manual: true}, &release{}
	cases := map[string]struct {
		r    *release
		s    step
		want syncKind
	}{
		"manual, pick 0: plain":                          {r: manual, s: step{act: actSync, pick: 3}, want: syncPlain},
		"manual, pick 1: bound":                          {r: manual, s: step{act: actSync, pick: 4}, want: syncBound},
		"manual, pick 2: bound, then new values":         {r: manual, s: step{act: actSync, pick: 5}, want: syncBoundThenEdit},
		"a forced /sync, pick 0: plain":                  {r: manual, s: step{act: actForce, pick: 3}, want: syncPlain},
		"a forced /sync is bound, no new values after":   {r: manual, s: step{act: actForce, pick: 5}, want: syncBound},
		"a values edit, pick 0: a bound /sync before it": {r: manual, s: step{act: actEdit, pick: 3}, want: syncBoundThenEdit},
		"a values edit, pick 1: a bound /sync after it":  {r: manual, s: step{act: actEdit, pick: 4}, want: syncEditThenBound},
		"a values edit, pick 2: alone":                   {r: manual, s: step{act: actEdit, pick: 5}, want: syncPlain},
		"automatic: plain":                               {r: automatic, s: step{act: actSync, pick: 5}, want: syncPlain},
		"automatic, a values edit: alone":                {r: automatic, s: step{act: actEdit, pick: 3}, want: syncPlain},
		"neither a /sync nor a values edit":              {r: manual, s: step{act: actVersion, pick: 3}, want: syncPlain},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := syncKindOf(tc.r, tc.s); got != tc.want {
				t.Errorf("syncKindOf = %d, want %d", got, tc.want)
			}
		})
	}
}

// TestRecorderApprovals: the recorder keeps what the approval check reads — the render a
// pending /sync is bound to, the pin, status.render.ref and the inputs it is the render
// of — and lastRender is status.render.ref of the latest state.
func TestRecorderApprovals(t *testing.T) {
	rel := func(rv int64, bound, render string) *v1alpha1.Release {
		r := &v1alpha1.Release{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "r", ResourceVersion: fmt.Sprint(rv), Generation: 2,
			Annotations: map[string]string{v1alpha1.AnnotationSyncRequestedAt: "2026-12-07T10:00:00Z"}}}
		if bound != "" {
			r.Annotations[v1alpha1.AnnotationSyncRequestedRender] = bound
		}
		r.Spec.Chart.Version, r.Spec.Values = versionA, valuesOf("t9")
		r.Status.ObservedGeneration = 2
		r.Status.Render = &v1alpha1.RenderStatus{Ref: render, ChartVersion: versionA}
		r.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ConditionApplied, Status: metav1.ConditionFalse, Reason: v1alpha1.ReasonWaitingForSync, ObservedGeneration: 2}}
		return r
	}
	r := newRecorder()
	pinned := rel(10, renderA, renderA)
	pinned.Pin = &v1alpha1.Pin{RenderRef: renderB}
	r.watched(pinned)
	r.state(rel(12, "", renderC)) // a write's answer, later
	r.watched(rel(11, renderA, renderA))
	if got := r.lastRender("ns/r"); got != renderC {
		t.Errorf("lastRender = %q, want %q (the state of the highest resourceVersion)", got, renderC)
	}
	got := r.snapshot().states["ns/r"]
	want := []relState{
		{rv: 10, pending: true, inputs: "t9@" + versionA, bound: renderA, pin: renderB, pinned: true, render: renderA, rendered: "t9@" + versionA},
		{rv: 12, pending: true, inputs: "t9@" + versionA, written: true, render: renderC, rendered: "t9@" + versionA},
		{rv: 11, pending: true, inputs: "t9@" + versionA, bound: renderA, render: renderA, rendered: "t9@" + versionA},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(relState{}), cmpopts.IgnoreFields(relState{}, "at", "status")); diff != "" {
		t.Errorf("states (-want +got):\n%s", diff)
	}
}
