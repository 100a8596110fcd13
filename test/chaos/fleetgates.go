package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/releaseset"
)

// The ReleaseSet's gates under faults (docs/fleets.md, docs/fleet-rollouts.md):
//
//   - a chart version published in the set's version range during the faults
//     (publishChart): the set resolves it (status.source.chartVersion) into a new
//     revision that goes through the stages like a template change (checkStageOrder
//     judges it as any revision), and after the faults the set is Ready at it
//     (waitFleetReady, fleetReadyAt);
//   - the set paused for a while during the faults, then resumed (pauseFleet): no
//     Release of the set gets a revision it did not have while the controller knew
//     the set paused (checkPaused);
//   - the remote Cluster leaving the fleet while its stage rolls out, and coming back
//     (the fault "cluster leaves mid-stage", leaveMidStage): the set deletes its
//     Release, or holds the deletion as a mass removal when maxRemovals says so
//     (leaveVerdict), and creates it again once the Cluster is back;
//   - the controller leader killed while a stage rolls out (the fault "kill the leader
//     mid-stage").
const (
	// fleetVersionRange is the set's chart version: a range (1.1.x), so that the set
	// resolves the version itself and a version published in it is a new revision.
	// The failing 2.0.0 is outside it.
	fleetVersionRange = "~" + versionB
	// fleetPublished is the version published during the faults: versionB's chart as
	// 1.1.1.
	fleetPublished = "1.1.1"
	// restStage is the stage of the remote Cluster.
	restStage = "rest"
	// stageMomentBound bounds the wait of a mid-stage fault for a stage to roll out.
	stageMomentBound = 30 * time.Second
	// leaveSlack is the margin of leaveVerdict around the end of the removal window:
	// the set stamps its removals with the controller's clock at its reconcile, the
	// harness its leaves with its own at the label's removal.
	leaveSlack = 30 * time.Second
)

// fleetMaxRemovals is the set's spec.strategy.maxRemovals: one of its two Releases. A
// user whose two-Cluster fleet loses a Cluster now and then (maintenance, a rebuild)
// allows one removal; the default 25% allows none of 2, so every leave would halt the
// set. Removals within releaseset.RemovalWindow of an earlier one still count with it
// and halt the set (MassRemoval) until acknowledged: the harness then acknowledges, as
// the user who meant the removal would (kubectl convoy releaseset promote).
const fleetMaxRemovals = 1

// fleetState is what the harness did to the set during the faults, for the checks.
type fleetState struct {
	// gate is held by a pause and by a Cluster's leave from start to end: they do not
	// overlap (a paused set deletes nothing, so a leave would wait in vain).
	gate sync.Mutex

	mu sync.Mutex
	// tokens are the template tokens the set may end at: the last one written, and
	// the last one tried (a write whose answer was lost may have gone through).
	tokens []string
	// version is the newest chart version in the set's range.
	version string
	// pauses are the pauses, resumed.
	pauses []pauseWrite
	// removals are when the remote Cluster left and the set deleted its Release
	// without an acknowledgement (they count against maxRemovals for RemovalWindow).
	removals []time.Time
	// leaves counts the leaves, held those the set held as mass removals.
	leaves, held int
}

// pauseWrite is one pause of the set as the harness wrote it: the resourceVersion and
// generation of the set in the answer to the pause, and the resourceVersion in the
// answer to the resume.
type pauseWrite struct {
	wrote, generation, resumed int64
}

// fleetTokens are the tokens the set may end at.
func (e *env) fleetTokens() []string {
	e.fleet.mu.Lock()
	defer e.fleet.mu.Unlock()
	if len(e.fleet.tokens) == 0 {
		return []string{"set-1"}
	}
	return slices.Clone(e.fleet.tokens)
}

// fleetVersion is the newest chart version in the set's range.
func (e *env) fleetVersion() string {
	e.fleet.mu.Lock()
	defer e.fleet.mu.Unlock()
	if e.fleet.version == "" {
		return versionB
	}
	return e.fleet.version
}

// publishChart publishes fleetPublished in the chart repository after wait, unless
// phase ends first.
func (e *env) publishChart(phase context.Context, wait time.Duration) {
	select {
	case <-phase.Done():
		return
	case <-time.After(wait):
	}
	file, err := e.repo.publish(filepath.Join("testdata", "charts", chartName+"-"+versionB), fleetPublished,
		"The chaos harness's chart "+versionB+", published again as "+fleetPublished+" during the faults (a version in the ReleaseSet's range).")
	if err != nil {
		e.log.printf("Publishing chart %s %s: %v", chartName, fleetPublished, err)
		return
	}
	e.fleet.mu.Lock()
	e.fleet.version = fleetPublished
	e.fleet.mu.Unlock()
	e.log.printf("Chart %s published in the chart repository (%s, in the range %s of ReleaseSet %s/%s)", file, fleetPublished, fleetVersionRange, fleetNamespace, fleetSetName)
}

// pauseFleet pauses the set after wait and resumes it after length (or when phase
// ends), recording both writes; nothing when phase ends before the pause. The resume
// is retried until it goes through (within ctx): a set left paused would never
// converge.
func (e *env) pauseFleet(ctx, phase context.Context, wait, length time.Duration) {
	select {
	case <-phase.Done():
		return
	case <-time.After(wait):
	}
	e.fleet.gate.Lock()
	defer e.fleet.gate.Unlock()
	patch := func(ctx context.Context, paused bool, bound time.Duration) (*v1alpha1.ReleaseSet, error) {
		body, _ := json.Marshal(map[string]any{"spec": map[string]any{"paused": paused}})
		got := &v1alpha1.ReleaseSet{}
		err := retry(ctx, bound, func(ctx context.Context) error {
			return e.convoy.Patch(types.MergePatchType).Namespace(fleetNamespace).Resource(v1alpha1.ResourceReleaseSets).
				Name(fleetSetName).Body(body).Do(ctx).Into(got)
		})
		return got, err
	}
	paused, err := patch(phase, true, time.Hour)
	if err != nil {
		// Written or not, the set is resumed below.
		e.log.printf("ReleaseSet %s/%s: the pause was not written during the faults: %v", fleetNamespace, fleetSetName, err)
	} else {
		e.log.printf("ReleaseSet %s/%s paused (resourceVersion %s, generation %d) for %s", fleetNamespace, fleetSetName, paused.ResourceVersion, paused.Generation, length)
		select {
		case <-phase.Done():
		case <-time.After(length):
		}
	}
	resumed, rerr := patch(ctx, false, 2*time.Minute)
	if rerr != nil {
		e.addViolation(violation{"releaseset", fleetNamespace + "/" + fleetSetName, fmt.Sprintf("could not resume the set after its pause: %v", rerr)})
		return
	}
	e.log.printf("ReleaseSet %s/%s resumed (resourceVersion %s)", fleetNamespace, fleetSetName, resumed.ResourceVersion)
	if err != nil {
		return
	}
	w := pauseWrite{generation: paused.Generation}
	w.wrote, _ = strconv.ParseInt(paused.ResourceVersion, 10, 64)
	w.resumed, _ = strconv.ParseInt(resumed.ResourceVersion, 10, 64)
	e.fleet.mu.Lock()
	e.fleet.pauses = append(e.fleet.pauses, w)
	e.fleet.mu.Unlock()
}

// setState is a state of the ReleaseSet that the harness's watch saw.
type setState struct {
	rv, observedGeneration int64
	// paused is the state's spec.paused.
	paused bool
}

// pauseWindow is one pause as the checks judge it: the resourceVersions of the pause
// write, of the first state of the set seen whose status observes the paused spec (0
// when none was seen before the resume), and of the resume write.
type pauseWindow struct {
	wrote, observed, resumed int64
}

// pauseWindows are the pauses with the first state of the set (sets) whose status
// observes each: its observedGeneration is that of the pause, or later. From that
// state on the controller has decided on the paused spec: a reconcile writes the
// Releases, then the status, one reconcile of a set at a time.
//
// The pause ends at the resume write, or at the first state seen after the pause
// that is no longer paused, if earlier: a resume answered with an error (a 503 of the
// aggregator while kube-apiserver starts again) may have been stored all the same, and
// the retry that succeeds then changes nothing and answers with a later
// resourceVersion (seed 11, 7 December: the controller's write after the first resume
// was judged as one while paused).
func pauseWindows(pauses []pauseWrite, sets []setState) []pauseWindow {
	out := make([]pauseWindow, 0, len(pauses))
	for _, p := range pauses {
		w := pauseWindow{wrote: p.wrote, resumed: p.resumed}
		for _, s := range sets {
			if s.rv > p.wrote && s.observedGeneration >= p.generation && (w.observed == 0 || s.rv < w.observed) {
				w.observed = s.rv
			}
			if s.rv > p.wrote && !s.paused && s.rv < w.resumed {
				w.resumed = s.rv
			}
		}
		if w.observed >= w.resumed {
			w.observed = 0 // observed only after the resume
		}
		out = append(out, w)
	}
	return out
}

// checkPaused checks the pauses of a set in h: no Release of the set (releases: their
// keys) got a revision that it did not have, was created or was deleted, at a
// resourceVersion after the controller observed the pause and before the resume
// write. A change between the pause write and the controller's first status of the
// paused spec came from a reconcile that had read the set before the pause (its
// writes precede that status): in flight, counted, not a violation; so is every change
// of a pause whose observation was not seen before its resume. A change that a relist
// brought, which may have happened before the observation, is not judged. It returns
// the violations, how many states of the set's Releases it judged while paused, how
// many changes were in flight and how many it could not judge.
func checkPaused(h history, releases []string, windows []pauseWindow) (out []violation, judged, inFlight, unverified int) {
	for _, w := range windows {
		for _, key := range releases {
			states := slices.Clone(h.states[key])
			slices.SortStableFunc(states, func(a, b relState) int { return int(a.rv - b.rv) })
			had, exists := "", false
			for _, s := range states {
				if s.written {
					continue
				}
				if s.rv <= w.wrote {
					had, exists = s.revision, !s.gone
					continue
				}
				if s.rv >= w.resumed {
					break
				}
				var change string
				switch {
				case !exists && !s.gone:
					change = fmt.Sprintf("was created at revision %s", s.revision)
				case exists && s.gone:
					change = "was deleted"
				case exists && s.revision != had:
					change = fmt.Sprintf("got revision %s (it had %s)", s.revision, had)
				}
				paused := w.observed != 0 && s.rv > w.observed
				if paused {
					judged++
				}
				if change == "" {
					continue
				}
				had, exists = s.revision, !s.gone
				switch {
				case !paused:
					inFlight++
				case relistBefore(h.gaps, s.rv, w.observed):
					unverified++
				default:
					out = append(out, violation{"paused", key, fmt.Sprintf("%s at resourceVersion %d while its ReleaseSet was paused (the pause written at %d, observed by the controller at %d, resumed at %d)",
						change, s.rv, w.wrote, w.observed, w.resumed)})
				}
			}
		}
	}
	return out, judged, inFlight, unverified
}

// relistBefore says whether the state at rv came with a relist of Releases that began
// before from: the change it shows may have happened before from, unseen.
func relistBefore(gaps relists, rv, from int64) bool {
	for _, g := range gaps[releaseStream] {
		if g.from < from && g.from < rv && rv <= g.to {
			return true
		}
	}
	return false
}

// progressing names the first stage of set that is Progressing (stage, or any when
// stage is ""), with its counts; "" when none is.
func progressing(set *v1alpha1.ReleaseSet, stage string) string {
	for _, st := range set.Status.Stages {
		if st.Phase == v1alpha1.StageProgressing && (stage == "" || st.Name == stage) {
			return fmt.Sprintf("stage %s of ReleaseSet %s/%s Progressing at revision %s (%d of %d Releases updated, %d Ready)",
				st.Name, set.Namespace, set.Name, shortRevision(set.Status.Revision), st.Updated, st.Clusters, st.Ready)
		}
	}
	return ""
}

// shortRevision is a revision in short, for the log.
func shortRevision(rev string) string {
	if i := strings.IndexByte(rev, ':'); i >= 0 && len(rev) > i+13 {
		return rev[:i+13] + "…"
	}
	return rev
}

// midStage returns once a stage of the set rolls out (stage, or any when ""), saying
// which: at once when one does now, else when the recorder sees one start, within
// stageMomentBound; "" when none did by then.
func (e *env) midStage(ctx context.Context, kind faultKind, stage string) string {
	set := &v1alpha1.ReleaseSet{}
	if err := e.convoy.Get().Namespace(fleetNamespace).Resource(v1alpha1.ResourceReleaseSets).Name(fleetSetName).Do(ctx).Into(set); err == nil {
		if m := progressing(set, stage); m != "" {
			return m
		}
	}
	select {
	case m := <-e.moments[kind]:
		return m
	case <-time.After(stageMomentBound):
	case <-ctx.Done():
	}
	return ""
}

// leaveMidStage is the fault "cluster leaves mid-stage": while the remote Cluster's
// stage rolls out (or after stageMomentBound), the Cluster loses the fleet label. The
// set must delete its Release — or, when an earlier removal without acknowledgement
// is within releaseset.RemovalWindow, hold the removal (Halted, MassRemoval, the
// Release in status.heldRemovals), which the harness then acknowledges through
// /promote (leaveVerdict judges which). Once the Release is gone, and f.length later,
// the label is put back, and the set creates the Release again (waitFleetReady checks
// that it did by the end). A leave waits for a pause to end, and the other way round.
func (e *env) leaveMidStage(ctx context.Context, f fault) error {
	e.fleet.gate.Lock()
	defer e.fleet.gate.Unlock()
	relName := releaseset.ReleaseName(fleetSetName, remoteClusterName)
	key := fleetNamespace + "/" + relName
	getRel := func(ctx context.Context) (*v1alpha1.Release, error) {
		rel := &v1alpha1.Release{}
		err := e.convoy.Get().Namespace(fleetNamespace).Resource(v1alpha1.ResourceReleases).Name(relName).Do(ctx).Into(rel)
		return rel, err
	}
	moment := e.midStage(ctx, f.kind, restStage)
	if rel, err := getRel(ctx); err != nil || rel.DeletionTimestamp != nil {
		// Not re-created yet after an earlier leave (its stage has not started), or
		// unreadable: there is nothing to remove.
		e.log.printf("Fault %q skipped: the Release %s is not there (%v)", f.kind, key, err)
		return nil
	}
	if moment == "" {
		moment = fmt.Sprintf("no stage of ReleaseSet %s/%s rolled out within %s", fleetNamespace, fleetSetName, stageMomentBound)
	}
	e.fleet.mu.Lock()
	prior := slices.Clone(e.fleet.removals)
	e.fleet.leaves++
	e.fleet.mu.Unlock()
	e.log.fault(string(f.kind), "the label %s of Cluster %s removed (%s); put back %s after its Release is gone",
		labelFleet, remoteClusterName, moment, f.length.Truncate(time.Millisecond))
	at := time.Now()
	if err := e.labelFleet(ctx, false); err != nil {
		return err
	}
	held := false
	err := retry(ctx, time.Minute, func(ctx context.Context) error {
		set := &v1alpha1.ReleaseSet{}
		if err := e.convoy.Get().Namespace(fleetNamespace).Resource(v1alpha1.ResourceReleaseSets).Name(fleetSetName).Do(ctx).Into(set); err != nil {
			return err
		}
		if slices.Contains(set.Status.HeldRemovals, relName) {
			held = true
			return nil
		}
		rel, err := getRel(ctx)
		if apierrors.IsNotFound(err) || err == nil && rel.DeletionTimestamp != nil {
			return nil
		}
		if err != nil {
			return err
		}
		return fmt.Errorf("the Release %s is neither deleted nor held (set: %s)", key, conditionsInShort(set.Status.Conditions))
	})
	switch {
	case err != nil:
		e.addViolation(violation{"fleet-leave", key, fmt.Sprintf("Cluster %s left the set's selection, and within 1m0s the set neither deleted its Release nor held the removal: %v", remoteClusterName, err)})
	case held:
		e.fleet.mu.Lock()
		e.fleet.held++
		e.fleet.mu.Unlock()
		if why, judged := leaveVerdict(prior, at, true); judged && why != "" {
			e.addViolation(violation{"fleet-leave", key, why})
		}
		e.log.printf("ReleaseSet %s/%s holds the removal of %s (MassRemoval); acknowledging it (POST promote)", fleetNamespace, fleetSetName, relName)
		err := retry(ctx, time.Minute, func(ctx context.Context) error {
			return e.convoy.Post().Namespace(fleetNamespace).Resource(v1alpha1.ResourceReleaseSets).Name(fleetSetName).
				SubResource(v1alpha1.SubresourcePromote).Do(ctx).Error()
		})
		if err != nil {
			e.addViolation(violation{"fleet-leave", key, fmt.Sprintf("the held removal could not be acknowledged: %v", err)})
		}
	default:
		e.fleet.mu.Lock()
		e.fleet.removals = append(e.fleet.removals, at)
		e.fleet.mu.Unlock()
		if why, judged := leaveVerdict(prior, at, false); judged && why != "" {
			e.addViolation(violation{"fleet-leave", key, why})
		}
	}
	// Gone (its finalizer done) before the Cluster comes back: a bounded wait, the end
	// of the run checks the rest.
	if err := retry(ctx, time.Minute, func(ctx context.Context) error {
		if _, err := getRel(ctx); !apierrors.IsNotFound(err) {
			return fmt.Errorf("still there (%v)", err)
		}
		return nil
	}); err != nil {
		e.log.printf("The Release %s is not gone 1m0s after its Cluster left the set: %v", key, err)
	} else {
		e.log.printf("The Release %s is gone %s after its Cluster left the set", key, time.Since(at).Truncate(time.Millisecond))
	}
	select {
	case <-ctx.Done():
	case <-time.After(f.length):
	}
	if err := e.labelFleet(ctx, true); err != nil {
		return err
	}
	back := time.Now()
	// Its stage may wait for the canary: a short, bounded wait, for the log only.
	if err := retry(ctx, 20*time.Second, func(ctx context.Context) error {
		rel, err := getRel(ctx)
		if err == nil && rel.DeletionTimestamp != nil {
			return fmt.Errorf("being deleted")
		}
		return err
	}); err == nil {
		e.log.printf("The Release %s is created again %s after its Cluster is back in the set", key, time.Since(back).Truncate(time.Millisecond))
	} else {
		e.log.printf("The Release %s is not created again 20s after its Cluster is back in the set (its stage may wait): %v", key, err)
	}
	return nil
}

// labelFleet puts the fleet label on the remote Cluster, or removes it.
func (e *env) labelFleet(ctx context.Context, in bool) error {
	var v any
	if in {
		v = "true"
	}
	body, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]any{labelFleet: v}}})
	err := retry(ctx, 2*time.Minute, func(ctx context.Context) error {
		return e.convoy.Patch(types.MergePatchType).Resource(v1alpha1.ResourceClusters).Name(remoteClusterName).Body(body).Do(ctx).Error()
	})
	if err != nil {
		return fmt.Errorf("label the Cluster %s (in the fleet: %t): %w", remoteClusterName, in, err)
	}
	return nil
}

// leaveVerdict judges the set's answer to the remote Cluster leaving at at, given
// prior, when it left before and the set deleted its Release without an
// acknowledgement: with maxRemovals fleetMaxRemovals (1) of the set's two Releases,
// the removal goes on, unless one of prior is within releaseset.RemovalWindow before
// at (it counts with this one: 2 > 1), and then the set holds it. A prior removal
// within leaveSlack of the window's end is not judged. It returns the violation ("" for
// none) and whether it judged.
func leaveVerdict(prior []time.Time, at time.Time, held bool) (string, bool) {
	recent := 0
	for _, p := range prior {
		d := at.Sub(p)
		switch {
		case d > releaseset.RemovalWindow-leaveSlack && d < releaseset.RemovalWindow+leaveSlack:
			return "", false
		case d < releaseset.RemovalWindow:
			recent++
		}
	}
	want := recent+1 > fleetMaxRemovals
	switch {
	case held && !want:
		return fmt.Sprintf("the removal of the Release of Cluster %s, which left the set, was held (MassRemoval) although maxRemovals %d allows it (no other removal in the last %s)",
			remoteClusterName, fleetMaxRemovals, releaseset.RemovalWindow), true
	case !held && want:
		return fmt.Sprintf("the Release of Cluster %s, which left the set, was deleted although %d other removal(s) in the last %s count with it, more than maxRemovals %d allows: the set must hold it (MassRemoval)",
			remoteClusterName, recent, releaseset.RemovalWindow, fleetMaxRemovals), true
	}
	return "", true
}

// conditionsInShort is conditions as type=status/reason, for messages.
func conditionsInShort(cs []metav1.Condition) string {
	parts := make([]string, 0, len(cs))
	for _, c := range cs {
		parts = append(parts, fmt.Sprintf("%s=%s/%s", c.Type, c.Status, c.Reason))
	}
	return strings.Join(parts, ", ")
}

// fleetReadyAt says why the set is not yet where the run must end ("" when it is):
// its status observes its spec, Ready=True, its template's token one of tokens, its
// source the chart version version, and the Release of each of its Clusters (host and
// remote) there, at the set's revision, with that exact version.
func fleetReadyAt(set *v1alpha1.ReleaseSet, releases []v1alpha1.Release, tokens []string, version string) string {
	ready := apimeta.FindStatusCondition(set.Status.Conditions, v1alpha1.ConditionReady)
	source := ""
	if set.Status.Source != nil {
		source = set.Status.Source.ChartVersion
	}
	switch {
	case set.Status.ObservedGeneration != set.Generation:
		return fmt.Sprintf("status of generation %d, spec %d", set.Status.ObservedGeneration, set.Generation)
	case ready == nil || ready.Status != metav1.ConditionTrue:
		return fmt.Sprintf("not Ready (%s)", conditionsInShort(set.Status.Conditions))
	case !slices.Contains(tokens, tokenOf(set.Spec.Template.Spec.Values)):
		return fmt.Sprintf("its template has token %q, not the last one written (%v)", tokenOf(set.Spec.Template.Spec.Values), tokens)
	case source != version:
		return fmt.Sprintf("Ready at chart version %q (status.source), not the newest in its range, %s", source, version)
	}
	byName := map[string]*v1alpha1.Release{}
	for i := range releases {
		byName[releases[i].Name] = &releases[i]
	}
	for _, cluster := range []string{hostClusterName, remoteClusterName} {
		name := releaseset.ReleaseName(set.Name, cluster)
		rel := byName[name]
		switch {
		case rel == nil || rel.DeletionTimestamp != nil:
			return fmt.Sprintf("Ready, but the Release %s of Cluster %s is not there", name, cluster)
		case rel.Annotations[v1alpha1.AnnotationReleaseSetRevision] != set.Status.Revision:
			return fmt.Sprintf("Ready at revision %s, but the Release %s holds %s", set.Status.Revision, name, rel.Annotations[v1alpha1.AnnotationReleaseSetRevision])
		case rel.Spec.Chart.Version != version:
			return fmt.Sprintf("Ready, but the Release %s has chart version %q, not %s", name, rel.Spec.Chart.Version, version)
		}
	}
	return ""
}

// sourceRevisions counts the new revisions of the set's later-stage Releases in h
// whose chart version is version: those that checkStageOrder judged and that came from
// the source (a version published during the run), not from the template.
func sourceRevisions(h history, stages map[string]int, version string) int {
	first := slices.Min(slices.Collect(maps.Values(stages)))
	n := 0
	for key, stage := range stages {
		if stage == first {
			continue
		}
		seen := map[string]bool{}
		for _, s := range h.states[key] {
			if s.revision != "" && !seen[s.revision] && strings.HasSuffix(s.inputs, "@"+version) {
				seen[s.revision] = true
				n++
			}
		}
	}
	return n
}
