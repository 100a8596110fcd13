package chaos

import (
	"fmt"
	"sort"
)

// rolloutCounts are what checkLowerWaveRollouts judged and could not.
type rolloutCounts struct {
	// judged counts the (apply of a higher cluster wave, lower Release reported
	// Applied and Healthy) it compared with the lower Release's objects.
	judged int
	// concurrent counts those whose lower Release began its latest render after the
	// higher one asked for the inputs it applied, just before the apply: a gate that
	// read the lower one before cannot have seen it (not violations; askedAfter).
	concurrent int
	// unverified counts those where a relist of the harness's watch of an object may
	// have hidden the moment it became healthy.
	unverified int
}

// checkLowerWaveRollouts finds Releases of a higher cluster wave applied while a lower
// wave's Release on the same Cluster was still rolling out its render (decision 0160:
// the lower one reported Healthy from the observer's assessment of its first
// sync waves, before its last one had rolled out). When an object of a Release of
// cluster wave k first carries some inputs (ev, as checkClusterWaves), each Release of
// a lower wave on the same Cluster whose states around ev say Applied and Healthy for
// its spec (readyAround) must have rolled out the render it asks for: every object it
// had applied with those inputs on the Cluster before ev — all of its sync waves
// applied so far — was healthy with them before ev (the same etcd orders the objects
// of one Cluster and ev exactly).
//
// A lower Release whose states around ev are not ready is checkClusterWaves' to judge,
// and one that was never ready is not judged here.
func checkLowerWaveRollouts(h history) (out []violation, c rolloutCounts) {
	objects := map[string][]objEvent{} // Release → its objects' events
	for _, e := range h.events {
		objects[e.release] = append(objects[e.release], e)
	}
	byPlace := releasesByPlace(h.places)
	for _, ev := range firstApplies(h.events) {
		p, ok := h.places[ev.release]
		if !ok || p.wave == 0 {
			continue
		}
		for w := range p.wave {
			for _, low := range byPlace[place{p.cluster, w}] {
				st, ok := readyAround(h.states[low], ev)
				if !ok || hidden(h.states[low], ev, h.gaps) {
					continue
				}
				c.judged++
				obj, appliedAt := rollingOut(objects[low], ev, st.inputs)
				switch {
				case obj == "":
				case h.gaps.overlaps(stream{ev.cluster, kindOf(objects[low], obj)}, appliedAt, ev.rv):
					c.unverified++
				case askedAfter(h.states[low], h.states[ev.release], ev, st.inputs):
					c.concurrent++
				default:
					out = append(out, violation{"cluster-wave-rollouts", ev.release, fmt.Sprintf(
						"cluster wave %d on %s: %s applied with inputs %s at %s while Release %s of cluster wave %d, Applied and Healthy, still rolled out its inputs %s: %s, applied with them at resourceVersion %d, was not yet healthy",
						p.wave, clusterName(p.cluster), ev.object, ev.inputs, ev.moment(), low, w, st.inputs, obj, appliedAt)})
				}
			}
		}
	}
	return out, c
}

// firstApplies are the first events of each Release and inputs on its cluster (the
// lowest resourceVersion on the host, the first seen on the remote cluster), sorted by
// Release and inputs.
func firstApplies(events []objEvent) []objEvent {
	type key struct{ release, inputs string }
	first := map[key]objEvent{}
	for _, ev := range events {
		k := key{ev.release, ev.inputs}
		f, ok := first[k]
		if !ok || (ev.cluster == "" && ev.rv < f.rv) || (ev.cluster != "" && ev.at.Before(f.at)) {
			first[k] = ev
		}
	}
	out := make([]objEvent, 0, len(first))
	for _, ev := range first {
		out = append(out, ev)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].release != out[j].release {
			return out[i].release < out[j].release
		}
		return out[i].inputs < out[j].inputs
	})
	return out
}

// releasesByPlace lists the Releases of each place, sorted.
func releasesByPlace(places map[string]place) map[place][]string {
	out := map[place][]string{}
	for rel, p := range places {
		out[p] = append(out[p], rel)
	}
	for _, rels := range out {
		sort.Strings(rels)
	}
	return out
}

// readyAround is the state of a Release (its states) that ev is judged against when
// the Release was Applied and Healthy for its spec, and not being deleted, at ev: on
// the host, its last state before ev (one etcd orders both); on the remote cluster,
// strictly, its last state seen clockSlack before ev and every state seen within
// clockSlack of ev, all with the same inputs (the opposite of held's leniency: a
// violation here must not come from the watches' delays).
func readyAround(states []relState, ev objEvent) (relState, bool) {
	good := func(s relState) bool { return s.ready && !s.gone }
	if ev.cluster == "" {
		var last *relState
		for i, s := range states {
			if s.rv < ev.rv && (last == nil || s.rv > last.rv) {
				last = &states[i]
			}
		}
		if last == nil || !good(*last) {
			return relState{}, false
		}
		return *last, true
	}
	from, to := ev.at.Add(-clockSlack), ev.at.Add(clockSlack)
	var judged []relState
	var last *relState
	for i, s := range states {
		switch {
		case s.at.After(to):
		case !s.at.After(from):
			if last == nil || s.at.After(last.at) {
				last = &states[i]
			}
		default:
			judged = append(judged, s)
		}
	}
	if last != nil {
		judged = append(judged, *last)
	}
	if len(judged) == 0 {
		return relState{}, false
	}
	for _, s := range judged {
		if !good(s) || s.inputs != judged[0].inputs {
			return relState{}, false
		}
	}
	return judged[len(judged)-1], true
}

// rollingOut names an object of a lower Release (its events: objs) that carried
// inputs on ev's cluster before ev but had not been healthy with them before ev, and
// the first resourceVersion at which it carried them; "" when every such object had
// been healthy (or none carried them: the render is not on the cluster yet, which
// the Release's states then misreport, and checkClusterWaves' domain). Healthy once is
// enough: a Deployment that a fault made unavailable later has rolled out.
func rollingOut(objs []objEvent, ev objEvent, inputs string) (string, int64) {
	applied := map[string]int64{}
	healthy := map[string]bool{}
	for _, o := range objs {
		if o.cluster != ev.cluster || o.inputs != inputs || o.rv >= ev.rv {
			continue
		}
		if rv, ok := applied[o.object]; !ok || o.rv < rv {
			applied[o.object] = o.rv
		}
		healthy[o.object] = healthy[o.object] || o.healthy
	}
	names := make([]string, 0, len(applied))
	for name := range applied {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if !healthy[name] {
			return name, applied[name]
		}
	}
	return "", 0
}

// kindOf is the kind of object among a Release's events (the stream that saw it).
func kindOf(objs []objEvent, object string) string {
	for _, o := range objs {
		if o.object == object {
			return o.kind
		}
	}
	return ""
}

// askedAfter says whether the gate of the higher Release's reconcile that applied ev
// may have read the lower Release (its states: lower) before the lower one began
// asking for inputs (the first state of its last run asking for them before ev): that
// began after the higher Release asked for ev's inputs (the first state of its last
// run asking for them; both are Releases, ordered by the host's resourceVersions) and
// less than clockSlack before ev, as checkClusterWaves' changedDuring has it. A lower
// render begun longer before came through states that were not ready, which a
// reconcile of the higher one would have read.
func askedAfter(lower, higher []relState, ev objEvent, inputs string) bool {
	lo, okLo := runStart(lower, ev, inputs)
	hi, okHi := runStart(higher, ev, ev.inputs)
	return okLo && okHi && lo.rv > hi.rv && ev.at.Sub(lo.at) < clockSlack
}

// runStart is the first state of the last run of states asking for inputs before ev
// (on the remote cluster: seen up to clockSlack after ev).
func runStart(states []relState, ev objEvent, inputs string) (relState, bool) {
	var before []relState
	for _, s := range states {
		if ev.cluster == "" && s.rv < ev.rv || ev.cluster != "" && !s.at.After(ev.at.Add(clockSlack)) {
			before = append(before, s)
		}
	}
	sort.Slice(before, func(i, j int) bool { return before[i].rv < before[j].rv })
	i := len(before)
	for i > 0 && before[i-1].inputs == inputs {
		i--
	}
	if i == len(before) {
		return relState{}, false
	}
	return before[i], true
}

// overlaps says whether a relist of s covered part of the resourceVersions from lo to
// hi: states of an object between them may have gone unseen.
func (rl relists) overlaps(s stream, lo, hi int64) bool {
	for _, g := range rl[s] {
		if g.from < hi && g.to > lo {
			return true
		}
	}
	return false
}
