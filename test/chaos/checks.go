package chaos

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"kumodo.io/convoy/api/v1alpha1"
)

// violation is one broken invariant.
type violation struct {
	Invariant string // "sync", "manual", "approval", "waves", "orphans", "converge", "quiet", "cluster-waves", "cluster-wave-rollouts"
	Release   string
	Detail    string
}

func (v violation) String() string {
	return fmt.Sprintf("[%s] %s: %s", v.Invariant, v.Release, v.Detail)
}

// checkWaves finds renders applied out of sync-wave order: for each Release and
// inputs, no object of wave k may appear before every object of each lower wave
// (with the same inputs) was healthy. It also counts the (Release, inputs, wave)
// that it cannot judge: it never saw their lower waves with those inputs, or a relist
// of a watch may have hidden when a lower wave's object became healthy.
func checkWaves(h history) (out []violation, unverified int) {
	type key struct{ release, inputs string }
	first := map[key]map[int32]int64{}              // wave → first RV any object of it had these inputs
	healthy := map[key]map[int32]map[string]int64{} // wave → object → first RV it was healthy with them
	seen := map[key]map[int32]map[string]stream{}   // wave → object → the watch that saw it
	for _, ev := range h.events {
		k := key{ev.release, ev.inputs}
		if first[k] == nil {
			first[k], healthy[k], seen[k] = map[int32]int64{}, map[int32]map[string]int64{}, map[int32]map[string]stream{}
		}
		if rv, ok := first[k][ev.wave]; !ok || ev.rv < rv {
			first[k][ev.wave] = ev.rv
		}
		if seen[k][ev.wave] == nil {
			seen[k][ev.wave], healthy[k][ev.wave] = map[string]stream{}, map[string]int64{}
		}
		seen[k][ev.wave][ev.object] = ev.stream()
		if rv, ok := healthy[k][ev.wave][ev.object]; ev.healthy && (!ok || ev.rv < rv) {
			healthy[k][ev.wave][ev.object] = ev.rv
		}
	}
	keys := make([]key, 0, len(first))
	for k := range first {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].release != keys[j].release {
			return keys[i].release < keys[j].release
		}
		return keys[i].inputs < keys[j].inputs
	})
	for _, k := range keys {
		waves := make([]int32, 0, len(first[k]))
		for w := range first[k] {
			waves = append(waves, w)
		}
		slices.Sort(waves)
		for i, w := range waves {
			if i == 0 && w > 0 {
				unverified++
				continue
			}
			for _, lower := range waves[:i] {
				objs := seen[k][lower]
				var readyAt int64
				notHealthy, readyObj := "", ""
				for obj := range objs {
					rv, ok := healthy[k][lower][obj]
					if !ok {
						notHealthy = obj
						break
					}
					if rv > readyAt {
						readyAt, readyObj = rv, obj
					}
				}
				switch {
				case notHealthy != "" && h.gaps.after(objs[notHealthy], first[k][lower]),
					notHealthy == "" && first[k][w] < readyAt && h.gaps.hides(objs[readyObj], readyAt):
					unverified++ // a relist may have hidden the moment it became healthy
				case notHealthy != "":
					out = append(out, violation{"waves", k.release, fmt.Sprintf("inputs %s: wave %d applied at resourceVersion %d, but %s of wave %d never became healthy with those inputs", k.inputs, w, first[k][w], notHealthy, lower)})
				case first[k][w] < readyAt:
					out = append(out, violation{"waves", k.release, fmt.Sprintf("inputs %s: wave %d applied at resourceVersion %d, before wave %d was healthy (at %d)", k.inputs, w, first[k][w], lower, readyAt)})
				}
			}
		}
	}
	return out, unverified
}

// checkManual finds applies without a sync request in manual mode: when an object of a
// manual Release first carries some inputs, the Release's last state before must have
// had a pending sync request (see held for "before" on the remote cluster). A request
// is pending from its /sync until lastHandledSyncAt reaches it, so this also catches a
// request handled twice: an apply after its handling, on a stale view that still had
// it pending.
//
// unverified counts the applies it cannot judge: a relist of a watch may have hidden
// an earlier apply of the same inputs or a state of the Release before it (hidden).
func checkManual(h history) (out []violation, unverified int) {
	for _, ev := range manualApplies(h) {
		if hidden(h.states[ev.release], ev, h.gaps) {
			unverified++
			continue
		}
		ok, seen, before := held(h.states[ev.release], ev, func(s relState) bool { return s.pending })
		switch {
		case !seen:
			out = append(out, violation{"manual", ev.release, fmt.Sprintf("%s applied with inputs %s at %s, before any state of the Release was seen", ev.object, ev.inputs, ev.moment())})
		case !ok:
			out = append(out, violation{"manual", ev.release, fmt.Sprintf("%s applied with inputs %s at %s, but no sync request was pending in the Release %s", ev.object, ev.inputs, ev.moment(), before)})
		}
	}
	return out, unverified
}

// manualApplies are the events in which an object of a manual Release first carries
// some inputs, in the order seen: the applies checkManual and checkApproval judge.
func manualApplies(h history) []objEvent {
	done := map[string]bool{}
	var out []objEvent
	for _, ev := range h.events {
		id := ev.release + " " + ev.object + " " + ev.inputs
		if !h.manual[ev.release] || done[id] {
			continue
		}
		done[id] = true
		out = append(out, ev)
	}
	return out
}

// checkApproval finds applies in manual mode of a render that no /sync approved: when
// an object of a manual Release first carries some inputs and checkManual found a
// sync request pending (it judges the rest), a state of the Release that asked for
// those inputs (its spec) and was seen before the apply must have had a request
// pending that approves them: a plain /sync (it approves any render), one bound to a
// render of those inputs (sync-requested-render: a /sync?render= approves that render
// only), or, in a pinned Release, one whose pinned render is of those inputs (a
// pinned Release applies its pin; the server takes a bound /sync of the current or
// the pinned render).
//
// Any such state, not only the last before the apply: the controller applied what it
// read in a state that asked for those inputs, and a /sync may change the request
// between that read and the apply (seed 11: the observer's plain /sync replaced a
// person's approval of the render before the values changed, the controller applied
// the new values, and the person's next /sync, bound to the same render, landed
// before the apply). On the remote cluster the states seen up to clockSlack after the
// apply count.
//
// The inputs of a render are those of the states whose status says they rendered
// their spec (relState.rendered; renderInputs). judged counts the applies it judged,
// bound those of them with a request bound to a render among those states; unverified
// those it could not judge: the inputs of an approved render unknown, no state asking
// for the inputs seen, or a relist of Releases that may have hidden one.
func checkApproval(h history) (out []violation, judged, bound, unverified int) {
	renders := renderInputs(h.states)
	for _, ev := range manualApplies(h) {
		states := h.states[ev.release]
		if hidden(states, ev, h.gaps) {
			continue // checkManual counts it
		}
		if ok, _, _ := held(states, ev, func(s relState) bool { return s.pending }); !ok {
			continue // checkManual's violation
		}
		judged++
		asked, mayHide := asking(states, ev, h.gaps)
		best, boundSeen := notApproved, false
		for _, s := range asked {
			if s.pending {
				best = max(best, approves(s, ev.inputs, renders[ev.release]))
				boundSeen = boundSeen || s.bound != ""
			}
		}
		if boundSeen {
			bound++
		}
		switch {
		case best == approved:
			continue
		case best == approvalUnknown || len(asked) == 0 || mayHide:
			unverified++
			continue
		}
		var what []string
		for _, s := range asked {
			// A state comes twice when both the watch and a write's answer gave it.
			if d := fmt.Sprintf("at %d %s", s.rv, describeApproval(s, renders[ev.release])); s.pending && !slices.Contains(what, d) {
				what = append(what, d)
			}
		}
		if len(what) == 0 {
			what = []string{"none pending"}
		}
		out = append(out, violation{"approval", ev.release, fmt.Sprintf("%s applied with inputs %s at %s, but no /sync pending in a state asking for them approved them (%s)",
			ev.object, ev.inputs, ev.moment(), strings.Join(what, "; "))})
	}
	return out, judged, bound, unverified
}

// asking are the states of a Release (states) that asked for ev's inputs and were seen
// before ev: on the host, below ev's resourceVersion; on the remote cluster, up to
// clockSlack after it. mayHide says that a relist of Releases may have hidden one:
// one listed after the last state seen that asked for other inputs before the first
// of them, and began before ev.
func asking(states []relState, ev objEvent, gaps relists) (out []relState, mayHide bool) {
	before := func(s relState) bool {
		if ev.cluster == "" {
			return s.rv < ev.rv
		}
		return !s.at.After(ev.at.Add(clockSlack))
	}
	for _, s := range states {
		if before(s) && s.inputs == ev.inputs {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return nil, true
	}
	first := slices.MinFunc(out, func(a, b relState) int { return cmpOrder(ev, a, b) })
	var other *relState
	for i, s := range states {
		if before(s) && s.inputs != ev.inputs && cmpOrder(ev, s, first) < 0 && (other == nil || cmpOrder(ev, s, *other) > 0) {
			other = &states[i]
		}
	}
	if ev.cluster == "" {
		var lo int64
		if other != nil {
			lo = other.rv
		}
		for _, g := range gaps[releaseStream] {
			if g.to > lo && g.from < ev.rv {
				return out, true
			}
		}
		return out, false
	}
	from := first.at.Add(-clockSlack)
	if other != nil {
		from = other.at
	}
	return out, gaps.during(releaseStream, from, ev.at.Add(clockSlack))
}

// cmpOrder orders two states of a Release as the check of ev does: by resourceVersion
// for a host apply, by the time seen for a remote one.
func cmpOrder(ev objEvent, a, b relState) int {
	if ev.cluster == "" {
		return cmp.Compare(a.rv, b.rv)
	}
	return a.at.Compare(b.at)
}

// approval is what a pending /sync says of an apply of some inputs: approvalUnknown
// ranks between notApproved and approved (a lenient judgement takes the best).
type approval int

const (
	notApproved approval = iota
	approvalUnknown
	approved
)

// approves says whether the pending /sync of s approves an apply of inputs, given the
// inputs of the Release's renders.
func approves(s relState, inputs string, renders map[string]string) approval {
	if s.bound == "" {
		return approved
	}
	of := func(ref string) approval {
		in, ok := inputsOf(renders, ref)
		switch {
		case !ok:
			return approvalUnknown
		case in == inputs:
			return approved
		}
		return notApproved
	}
	a := of(s.bound)
	if s.pinned {
		a = max(a, of(s.pin)) // an empty pin ref: unknown
	}
	return a
}

// describeApproval says what the pending /sync of s approved, for a violation.
func describeApproval(s relState, renders map[string]string) string {
	name := func(ref string) string {
		if in, ok := inputsOf(renders, ref); ok {
			return fmt.Sprintf("render %s (inputs %s)", v1alpha1.RenderRef(ref).Short(), in)
		}
		return fmt.Sprintf("render %s (inputs unknown)", v1alpha1.RenderRef(ref).Short())
	}
	d := name(s.bound)
	if s.pinned {
		d += ", pinned to " + name(s.pin)
	}
	return d
}

// inputsOf is the inputs of the render ref (full, or its short form) in renders.
func inputsOf(renders map[string]string, ref string) (string, bool) {
	if ref == "" {
		return "", false
	}
	if in, ok := renders[ref]; ok {
		return in, in != ""
	}
	for full, in := range renders {
		if v1alpha1.RenderRef(ref).Names(full) {
			return in, in != ""
		}
	}
	return "", false
}

// renderInputs maps each Release's renders (status.render.ref) to the inputs they are
// the render of, from its states that say so (relState.rendered). A render seen as
// the render of two inputs maps to "" (unknown): one of those states was misread, and
// what it would judge is not judged.
func renderInputs(states map[string][]relState) map[string]map[string]string {
	out := map[string]map[string]string{}
	for key, ss := range states {
		for _, s := range ss {
			if s.render == "" || s.rendered == "" {
				continue
			}
			if out[key] == nil {
				out[key] = map[string]string{}
			}
			if in, ok := out[key][s.render]; ok && in != s.rendered {
				out[key][s.render] = ""
				continue
			}
			out[key][s.render] = s.rendered
		}
	}
	return out
}

// checkClusterWaves finds Releases applied out of cluster-wave order: when an object of
// a Release of cluster wave k first carries some inputs, every Release of a lower wave
// on the same Cluster must have been Applied=True and Healthy=True in its last state
// before (see held), or not exist yet, or be being deleted (docs/waves.md, "Cluster waves").
// judged counts the applies of a wave above 0 that it checked.
//
// A lower wave that stopped being ready while the higher one's reconcile ran is not a
// violation (concurrent counts them): no gate that reads before it applies can see a
// change made after its read. On the host that is exact up to the time of one
// reconcile: the lower wave's change came after the higher Release asked for the
// inputs it applied (its reconcile's read of the cache, one watch of Releases in
// resourceVersion order, included that request, so not necessarily the change), and
// less than clockSlack before the apply.
//
// unverified counts the (apply, lower Release) it cannot judge (hidden).
func checkClusterWaves(h history) (out []violation, judged, concurrent, unverified int) {
	states, places := h.states, h.places
	lower := releasesByPlace(places)
	ready := func(s relState) bool { return s.ready || s.gone }
	for _, ev := range firstApplies(h.events) {
		k := struct{ release, inputs string }{ev.release, ev.inputs}
		p, ok := places[k.release]
		if !ok || p.wave == 0 {
			continue
		}
		judged++
		for w := range p.wave {
			for _, other := range lower[place{p.cluster, w}] {
				if hidden(states[other], ev, h.gaps) {
					unverified++
					continue
				}
				ok, seen, before := held(states[other], ev, ready)
				if seen && !ok && ev.cluster == "" && changedDuring(states[other], states[k.release], ev, ready) {
					concurrent++
					continue
				}
				if seen && !ok {
					out = append(out, violation{"cluster-waves", k.release, fmt.Sprintf(
						"cluster wave %d on %s: %s applied with inputs %s at %s, but Release %s of cluster wave %d was not Applied and Healthy %s",
						p.wave, clusterName(p.cluster), ev.object, k.inputs, ev.moment(), other, w, before)})
				}
			}
		}
	}
	return out, judged, concurrent, unverified
}

// changedDuring says whether the host apply ev of a higher cluster wave's Release (its
// states: higher) raced the change that made a lower wave's Release (lower) not ready:
// the lower Release's last run of not-ready states before ev began after the higher
// Release asked for ev's inputs (the first state of its last run asking for them) and
// less than clockSlack before ev was seen.
func changedDuring(lower, higher []relState, ev objEvent, ready func(relState) bool) bool {
	before := func(states []relState) []relState {
		var out []relState
		for _, s := range states {
			if s.rv < ev.rv {
				out = append(out, s)
			}
		}
		sort.Slice(out, func(i, j int) bool { return out[i].rv < out[j].rv })
		return out
	}
	lo, hi := before(lower), before(higher)
	i := len(lo)
	for i > 0 && !ready(lo[i-1]) {
		i--
	}
	j := len(hi)
	for j > 0 && hi[j-1].inputs == ev.inputs {
		j--
	}
	if i == len(lo) || j == len(hi) {
		return false // the lower one ready after all, or the higher one never asked for them
	}
	return lo[i].rv > hi[j].rv && ev.at.Sub(lo[i].at) < clockSlack
}

// clockSlack bounds how late the harness may see an event after another that happened
// before it. The remote cluster has its own etcd, so an apply there is ordered against
// the Release's states (in the host's etcd) by the time the harness saw each.
const clockSlack = 3 * time.Second

// hidden says whether a relist of a watch may have hidden what held judges for ev:
// an earlier apply of ev's inputs (ev came with a relist of its own watch), or the
// Release's last state before ev. On the host exactly: a relist of Releases that
// began at or after the last state seen before ev and listed after ev hid the states
// between (a relist shows only each object's last state); on the remote cluster, by
// the times seen, any relist of Releases from that state to clockSlack after ev.
func hidden(states []relState, ev objEvent, gaps relists) bool {
	if gaps.hides(ev.stream(), ev.rv) {
		return true
	}
	if ev.cluster == "" {
		var lo int64
		written := false
		for _, s := range states {
			if s.rv < ev.rv && (s.rv > lo || s.rv == lo && s.written) {
				lo, written = s.rv, s.written
			}
		}
		return gaps.straddles(releaseStream, lo, ev.rv, written)
	}
	var lo time.Time
	for _, s := range states {
		if !s.at.After(ev.at.Add(-clockSlack)) && s.at.After(lo) {
			lo = s.at
		}
	}
	return gaps.during(releaseStream, lo, ev.at.Add(clockSlack))
}

// held says whether pred held for a Release (its states) when ev happened, and whether
// any state of it was seen by then; before describes the state(s) judged. On the host,
// exactly: the last state whose resourceVersion is below ev's (one etcd orders both).
// On the remote cluster, leniently: pred held if it held for the last state seen
// clockSlack before ev or for any state seen within clockSlack of it, so a violation
// there is one that no ordering of the watches' delays explains.
func held(states []relState, ev objEvent, pred func(relState) bool) (ok, seen bool, before string) {
	if ev.cluster == "" {
		var last *relState
		for i, s := range states {
			if s.rv < ev.rv && (last == nil || s.rv > last.rv) {
				last = &states[i]
			}
		}
		if last == nil {
			return false, false, ""
		}
		return pred(*last), true, fmt.Sprintf("at %d, its last state before", last.rv)
	}
	from, to := ev.at.Add(-clockSlack), ev.at.Add(clockSlack)
	var last *relState
	for i, s := range states {
		switch {
		case s.at.After(to):
		case !s.at.After(from):
			if last == nil || s.at.After(last.at) {
				last = &states[i]
			}
		default:
			seen = true
			ok = ok || pred(s)
		}
	}
	if last != nil {
		seen = true
		ok = ok || pred(*last)
	}
	return ok, seen, fmt.Sprintf("in any state seen from %s before to %s after", clockSlack, clockSlack)
}

// moment is where ev stands in its cluster's order: a resourceVersion on the host, the
// time the harness saw it on the remote cluster.
func (ev objEvent) moment() string {
	if ev.cluster == "" {
		return fmt.Sprintf("resourceVersion %d", ev.rv)
	}
	return fmt.Sprintf("%s (seen; Cluster %s, resourceVersion %d)", ev.at.UTC().Format("15:04:05.000"), ev.cluster, ev.rv)
}

// checkSyncHandled says whether every /sync convoy acknowledged for rel was handled:
// in manual mode lastHandledSyncAt reached the latest acknowledged request time, and
// in either mode lastHandledForceSyncAt reached the latest acknowledged force (automatic
// mode does not use lastHandledSyncAt: a /sync only starts a reconcile, SP-12). ""
// when they did.
func checkSyncHandled(rel *v1alpha1.Release, manual bool, ackSync, ackForce time.Time) string {
	handled := func(t *v1alpha1.Release) (s, f time.Time) {
		if h := t.Status.LastHandledSyncAt; h != nil {
			s = h.UTC().Truncate(time.Second)
		}
		if h := t.Status.LastHandledForceSyncAt; h != nil {
			f = h.UTC().Truncate(time.Second)
		}
		return s, f
	}
	s, f := handled(rel)
	switch {
	case manual && !ackSync.IsZero() && s.Before(ackSync):
		return fmt.Sprintf("/sync acknowledged at %s, lastHandledSyncAt is %s", v1alpha1.FormatSyncTime(ackSync), fmtTime(s))
	case !ackForce.IsZero() && f.Before(ackForce):
		return fmt.Sprintf("forced /sync acknowledged at %s, lastHandledForceSyncAt is %s", v1alpha1.FormatSyncTime(ackForce), fmtTime(f))
	}
	return ""
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "unset"
	}
	return v1alpha1.FormatSyncTime(t)
}

// judge says whether rel has converged to what its inputs deserve, and if not, why.
// A good version: Ready=True for the current generation, and no rollout Progressing. The failing version (its
// wave-1 Deployment never becomes Available) ends, for the current generation, as its
// failurePolicy says: Rollback — rolled back (Applied=False/RolledBack), or the rollout
// Failed when no render ever succeeded (nothing to roll back to); Halt — the
// rollout Failed; none — wave 2 held for ever (Applied=False/WaitingForSyncWave) once
// the observer found wave 1 Degraded (degraded: from the ReleaseInventory).
func judge(rel *v1alpha1.Release, expectFailure, degraded bool) (bool, string) {
	ready := apimeta.FindStatusCondition(rel.Status.Conditions, v1alpha1.ConditionReady)
	if ready == nil {
		return false, "no Ready condition"
	}
	if ready.ObservedGeneration != rel.Generation {
		return false, fmt.Sprintf("Ready is of generation %d, the Release is at %d", ready.ObservedGeneration, rel.Generation)
	}
	if !expectFailure {
		if ready.Status != metav1.ConditionTrue {
			return false, fmt.Sprintf("Ready=%s/%s: %s", ready.Status, ready.Reason, ready.Message)
		}
		// A rollout still Progressing ends with a status write (Succeeded) once the
		// observer has assessed it, although Ready may already be True (a forced
		// sync's rollout of a render that was Healthy; seed 3467476935).
		if ro := rel.Status.Rollout; ro != nil && ro.Phase == v1alpha1.RolloutProgressing {
			return false, fmt.Sprintf("Ready=True, but the rollout of render %s is still Progressing", ro.RenderRef)
		}
		return true, ""
	}
	if ready.Status == metav1.ConditionTrue {
		return false, "Ready=True with the failing chart version"
	}
	applied := apimeta.FindStatusCondition(rel.Status.Conditions, v1alpha1.ConditionApplied)
	var phase v1alpha1.RolloutPhase
	if rel.Status.Rollout != nil {
		phase = rel.Status.Rollout.Phase
	}
	var policy v1alpha1.FailureAction
	if rel.Spec.FailurePolicy != nil {
		policy = rel.Spec.FailurePolicy.Action
	}
	switch {
	case policy == v1alpha1.FailureActionRollback && applied != nil && applied.Reason == v1alpha1.ReasonRolledBack && phase == v1alpha1.RolloutRolledBack:
		return true, ""
	case policy == v1alpha1.FailureActionRollback && phase == v1alpha1.RolloutFailed && rel.Status.LastSuccessful == nil:
		return true, "" // nothing to roll back to: Failed, with a message saying so
	case policy == v1alpha1.FailureActionHalt && phase == v1alpha1.RolloutFailed:
		return true, ""
	case policy == "" && applied != nil && applied.Reason == v1alpha1.ReasonWaitingForSyncWave && degraded:
		return true, ""
	}
	return false, fmt.Sprintf("failing version, failurePolicy %q, rollout %q, degraded %v: Ready=%s/%s: %s", policy, phase, degraded, ready.Status, ready.Reason, ready.Message)
}

// percentile is the p-th percentile (0–100) of ds by nearest rank; 0 for none.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(float64(len(s))*p/100+0.999999) - 1
	return s[min(max(i, 0), len(s)-1)]
}
