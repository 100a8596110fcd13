package releaseset

import (
	"fmt"
	"maps"
	"slices"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/policy"
)

// Input is everything a plan is made from, as observed in one reconcile.
type Input struct {
	// Set is the ReleaseSet, with its approvals and its current status.
	Set *v1.ReleaseSet
	// NamespaceLabels are the labels of the set's namespace (Clusters' namespaceSelectors).
	NamespaceLabels map[string]string
	// Clusters are the Cluster objects of the host.
	Clusters []v1.Cluster
	// Releases are the Releases labelled with the set's name; those the set does not
	// control (ownerReference) are left alone.
	Releases []v1.Release
	// Now is the time of the reconcile (conditions' lastTransitionTime).
	Now metav1.Time
	// Source is what the set resolved from its template (status.source), pinned into
	// each Release and part of the revision; nil when the template has nothing to
	// resolve. When SourceErr is set it is the previous source (status.source).
	Source *v1.ReleaseSetSource
	// SourceErr is why the source could not be resolved this time. With a Source (the
	// last one resolved from the same inputs) the set goes on with it; without, it
	// creates and changes no Release and its status keeps its revision and source.
	SourceErr error
}

// Plan is what a reconcile writes: the Releases to create, update and delete, and the
// set's status as observed (the writes show in the next reconcile's).
type Plan struct {
	// Create are new Releases, complete but for the server's fields.
	Create []*v1.Release
	// Update are existing Releases with the fields the set owns (spec, its labels and
	// annotations, the ownerReference) changed; every other field as observed.
	Update []*v1.Release
	// Delete are Releases of Clusters that the set no longer selects or that are gone.
	Delete []*v1.Release
	// Status is the set's status.
	Status v1.ReleaseSetStatus
	// RequeueAfter, when > 0, is when to decide again although nothing else changes:
	// the earliest end of a bake or of a progressDeadline.
	RequeueAfter time.Duration
}

// Writes reports whether the plan changes any Release.
func (p Plan) Writes() bool { return len(p.Create)+len(p.Update)+len(p.Delete) > 0 }

// observed is where one Release stands with respect to a revision.
type observed struct {
	rel *v1.Release
	// cluster is the name of its Cluster; available: that Cluster is Ready.
	cluster   string
	available bool
	// updated: its revision annotation is the revision.
	updated bool
	// ready: updated, its status observes its generation, and Ready=True.
	ready bool
	// readySince: when ready, the later of Ready's lastTransitionTime and the time its
	// current render was applied (status.lastSuccessful.appliedAt): a new render need
	// not make Ready flap.
	readySince time.Time
	// failed: updated, observed, and its rollout of the current render ended Failed or
	// RolledBack, or its Applied condition, of its generation, is False with a reason
	// that does not go away by retrying (applied says which).
	failed  bool
	applied *metav1.Condition
}

func observe(rel *v1.Release, rev string) observed {
	o := observed{rel: rel}
	if rel == nil || rel.Annotations[v1.AnnotationReleaseSetRevision] != rev {
		return o
	}
	o.updated = true
	if rel.Generation != rel.Status.ObservedGeneration {
		return o
	}
	if c := apimeta.FindStatusCondition(rel.Status.Conditions, v1.ConditionReady); c != nil && c.Status == metav1.ConditionTrue {
		o.ready = true
		o.readySince = c.LastTransitionTime.Time
		if ls, r := rel.Status.LastSuccessful, rel.Status.Render; ls != nil && ls.AppliedAt != nil && r != nil &&
			ls.RenderRef == r.Ref && ls.AppliedAt.After(o.readySince) {
			o.readySince = ls.AppliedAt.Time
		}
	}
	if ro := rel.Status.Rollout; ro != nil && (ro.Phase == v1.RolloutFailed || ro.Phase == v1.RolloutRolledBack) &&
		rel.Status.Render != nil && ro.RenderRef == rel.Status.Render.Ref {
		o.failed = true
	}
	// An Applied condition of an earlier generation (an earlier spec, so an earlier
	// render) is no failure at this one; holds (WaitingForSync, Pinned, …) and
	// transient failures (ClusterNotReady, DeployFailed, …) are none either.
	if c := apimeta.FindStatusCondition(rel.Status.Conditions, v1.ConditionApplied); !o.failed && c != nil &&
		c.Status == metav1.ConditionFalse && c.ObservedGeneration == rel.Generation && policy.KindOf(c.Reason) == policy.KindFailure {
		o.failed, o.applied = true, c
	}
	return o
}

// stageView is one stage as one reconcile observes it.
type stageView struct {
	sc  StageClusters
	ss  v1.StageStatus
	obs []observed
	// done: every Release of an available Cluster is Ready at the revision and the
	// unavailable ones are at most maxUnavailable (the bake aside).
	done bool
	// bakedAt: when done, the time the last of those Releases will have been Ready for
	// bakeTime (each counted from the stage's start at the earliest); zero without any.
	bakedAt time.Time
	// deadline: startedAt + progressDeadline; zero without either.
	deadline time.Time
	// inflight: Releases of available Clusters updated and not yet Ready.
	inflight int
}

// Decide makes the plan of a reconcile (see docs/fleets.md, "How a rollout proceeds"):
//
//   - every revision rolls out stage by stage, the first one included: a stage starts
//     when every stage before it is Complete and, when Manual, an approval holds
//     {stage, revision};
//   - a stage is Complete when every Release of a Ready Cluster is Ready at the
//     revision, each for bakeTime, and the Releases of Clusters not Ready are at most
//     maxUnavailable;
//   - inside a started stage at most maxParallel Releases of Ready Clusters are updated
//     and not yet Ready; those of Clusters not Ready are written without a slot;
//   - a Release of a stage that has not started is neither created nor changed; a new
//     Cluster of such a stage gets a copy of a sibling's Release (the revision the stage
//     is at), or waits for its stage when it has no sibling;
//   - a Release that failed at the revision (its rollout, or its apply for a reason
//     that retrying does not cure), or a started stage not Complete within its
//     progressDeadline, halts the set: no Release gets the revision until a new one;
//   - the Release of a Cluster no longer selected (or gone) is deleted, unless more
//     than maxRemovals go at once (within RemovalWindow, counting those deleted in it)
//     and no /promote acknowledged them: then the set writes nothing and halts
//     (MassRemoval);
//   - a paused set writes nothing; its status is computed as usual;
//   - each Release's spec.values are its Cluster's (ClusterValues); the revision
//     covers the template, spec.clusterOverrides and the source (Revision), so a
//     change of an override rolls out stage by stage as a change of the template does.
//
// Times come from the stored status (startedAt, completedAt) and the Releases'
// conditions, never from the reconcile's clock alone: the same inputs give the same
// status. Plan.RequeueAfter says when a bake or a deadline ends.
func Decide(in Input) Plan {
	set := in.Set
	rev := Revision(set.Spec.Template, set.Spec.ClusterOverrides, in.Source)
	st := v1.ReleaseSetStatus{
		ObservedGeneration: set.Generation,
		Revision:           rev,
		Source:             in.Source.DeepCopy(),
	}
	held := sourceHeld(in)
	if held {
		// The source of the template is unknown: the status stays at the revision and
		// source it had, and no Release is created or changed.
		st.Source = set.Status.Source.DeepCopy()
		if set.Status.Revision != "" {
			rev, st.Revision = set.Status.Revision, set.Status.Revision
		}
	}
	for _, c := range set.Status.Conditions {
		st.Conditions = append(st.Conditions, *c.DeepCopy())
	}
	sel, err := Select(set, in.NamespaceLabels, in.Clusters)
	var vals map[string]*runtime.RawExtension
	if err == nil {
		vals, err = clusterValues(set, sel, in.Clusters)
	}
	if err != nil {
		msg := fmt.Sprintf("%v: fix the ReleaseSet; no Release is written until then", err)
		setCondition(&st, in, v1.ConditionReady, metav1.ConditionFalse, v1.ReasonInvalidSpec, msg)
		setCondition(&st, in, v1.ConditionProgressing, metav1.ConditionFalse, v1.ReasonInvalidSpec, msg)
		setCondition(&st, in, v1.ConditionHalted, metav1.ConditionFalse, v1.ReasonNotHalted, "No Release failed at this revision.")
		return Plan{Status: st}
	}
	st.Skipped = sel.Skipped

	owned := map[string]*v1.Release{}
	for i := range in.Releases {
		if r := &in.Releases[i]; controlledBy(r, set) {
			owned[r.Name] = r
		}
	}
	b := builder{set: set, rev: rev, values: vals, source: in.Source}
	clusterReady := map[string]*metav1.Condition{}
	for i := range in.Clusters {
		clusterReady[in.Clusters[i].Name] = apimeta.FindStatusCondition(in.Clusters[i].Status.Conditions, v1.ConditionReady)
	}
	// The stages' times at this revision, as the stored status has them.
	prev := map[string]v1.StageStatus{}
	if set.Status.Revision == rev {
		for _, s := range set.Status.Stages {
			prev[s.Name] = s
		}
	}
	now := in.Now.Rfc3339Copy()

	// The halt: the first Release, in rollout order, that failed at the revision.
	var h *halt
	failedStage := -1
	views := make([]stageView, len(sel.Stages))
	for i, sc := range sel.Stages {
		views[i].sc = sc
		for _, c := range sc.Clusters {
			o := observe(owned[ReleaseName(set.Name, c)], rev)
			o.cluster = c
			o.available = clusterReady[c] != nil && clusterReady[c].Status == metav1.ConditionTrue
			views[i].obs = append(views[i].obs, o)
			if o.failed && h == nil {
				h, failedStage = releaseFailed(o, rev), i
			}
		}
	}

	var requeue time.Duration
	wait := func(until time.Time) {
		if d := until.Sub(now.Time); d > 0 && (requeue == 0 || d < requeue) {
			requeue = d
		}
	}
	details := map[string]string{}
	earlierDone := true
	for i := range views {
		v := &views[i]
		sc := v.sc
		p, hadPrev := prev[sc.Stage.Name]
		ss := v1.StageStatus{Name: sc.Stage.Name, Clusters: int32(len(sc.Clusters)), StartedAt: p.StartedAt, CompletedAt: p.CompletedAt}
		completedBefore := hadPrev && (p.CompletedAt != nil || p.Phase == v1.StageComplete)
		// A stage that starts now starts now; the Releases' bake counts from its start.
		start := now
		if p.StartedAt != nil {
			start = *p.StartedAt
		}
		bake := durationOf(sc.Stage.BakeTime)
		v.done = true
		var unavailable, notReady []observed
		for _, o := range v.obs {
			if o.updated {
				ss.Updated++
			}
			if o.ready {
				ss.Ready++
			}
			if !o.available {
				ss.Unavailable++
				unavailable = append(unavailable, o)
				continue
			}
			if !o.ready {
				v.done = false
				notReady = append(notReady, o)
				if o.updated {
					v.inflight++
				}
				continue
			}
			if t := later(o.readySince, start.Time).Add(bake); t.After(v.bakedAt) {
				v.bakedAt = t
			}
		}
		if maxU := MaxUnavailable(sc.Stage.MaxUnavailable, len(sc.Clusters)); int(ss.Unavailable) > maxU {
			v.done = false
		}
		if d := durationOf(sc.Stage.ProgressDeadline); d > 0 && p.StartedAt != nil {
			v.deadline = p.StartedAt.Add(d)
		}
		baked := bake <= 0 || !now.Time.Before(v.bakedAt)
		deadlinePassed := !v.deadline.IsZero() && !completedBefore && !now.Time.Before(v.deadline)
		inTime := !deadlinePassed || !v.bakedAt.After(v.deadline)
		switch {
		case h != nil && i == failedStage:
			ss.Phase = v1.StageHalted
		case !earlierDone:
			ss.Phase = v1.StageWaiting
		case deadlinePassed && p.Phase == v1.StageHalted:
			// A deadline halt lasts: a stage that completes late does not go on.
			ss.Phase = v1.StageHalted
		case v.done && (completedBefore || (baked && inTime)):
			ss.Phase = v1.StageComplete
		case deadlinePassed:
			ss.Phase = v1.StageHalted
		case sc.Stage.Approval == v1.ApprovalManual && !approved(set.Approvals, sc.Stage.Name, rev):
			ss.Phase = v1.StageWaitingForApproval
		default:
			ss.Phase = v1.StageProgressing
		}
		if ss.Phase == v1.StageHalted && i != failedStage && h == nil {
			h = deadlineExceeded(set, sc, notReady, unavailable, *p.StartedAt, v.deadline)
		}
		if ss.Phase != v1.StageWaiting && ss.Phase != v1.StageWaitingForApproval && ss.StartedAt == nil {
			ss.StartedAt = &start
		}
		if ss.Phase == v1.StageComplete && ss.CompletedAt == nil {
			completed := now
			ss.CompletedAt = &completed
		}
		if ss.Phase == v1.StageProgressing && !completedBefore {
			if bake > 0 {
				for _, o := range v.obs {
					if o.available && o.ready && later(o.readySince, start.Time).Add(bake).After(now.Time) {
						ss.Baking++
					}
				}
				if v.done {
					wait(v.bakedAt)
				}
			}
			if !v.deadline.IsZero() {
				wait(v.deadline)
			}
		}
		details[sc.Stage.Name] = stageDetail(sc.Stage, ss, unavailable, clusterReady, v.bakedAt, v.done)
		earlierDone = earlierDone && ss.Phase == v1.StageComplete
		v.ss = ss
	}
	halted := h != nil

	var plan Plan
	wanted := map[string]bool{}
	for i := range views {
		v := &views[i]
		sc := v.sc
		// A started stage gets the revision: new and outdated Releases under maxParallel
		// while it progresses (those of Clusters not Ready without a slot: they get it
		// when their Cluster is back), hand-made changes undone at any time.
		rolling := (v.ss.Phase == v1.StageProgressing || v.ss.Phase == v1.StageComplete) && !halted
		budget := MaxParallel(sc.Stage.MaxParallel, len(sc.Clusters)) - v.inflight
		for _, o := range v.obs {
			c := o.cluster
			wanted[ReleaseName(set.Name, c)] = true
			switch {
			case o.rel != nil && o.rel.DeletionTimestamp != nil:
				// Being deleted: a new one is created once it is gone.
			case rolling && o.rel == nil:
				if !o.available || budget > 0 {
					plan.Create = append(plan.Create, b.release(c))
					budget -= boolInt(o.available)
				}
			case rolling && !o.updated:
				if !o.available || budget > 0 {
					plan.Update = append(plan.Update, b.update(o.rel, b.release(c)))
					budget -= boolInt(o.available)
				}
			case rolling && b.differs(o.rel, b.release(c)):
				// At the revision, but what the set owns was changed by hand: restore it.
				plan.Update = append(plan.Update, b.update(o.rel, b.release(c)))
			case o.rel == nil:
				// The stage has not started (or the set is halted): the new Cluster gets
				// the revision its stage is at, that of a sibling, if it has one. A
				// sibling at a revision with overrides may hold values of its own
				// Cluster, and that revision's overrides are not known any more: the new
				// Cluster waits for its stage then.
				sib := sibling(sc.Clusters, owned, set.Name, rev, halted)
				switch {
				case sib == nil:
				case sib.Annotations[v1.AnnotationReleaseSetRevision] == rev:
					plan.Create = append(plan.Create, b.release(c))
				case sib.Annotations[v1.AnnotationReleaseSetOverrides] == "":
					plan.Create = append(plan.Create, b.copyOf(sib, c))
				}
			}
		}
		st.Stages = append(st.Stages, v.ss)
	}
	if halted {
		requeue = 0
	}

	var removals []*v1.Release
	count := 0
	for _, name := range slices.Sorted(maps.Keys(owned)) {
		r := owned[name]
		if r.DeletionTimestamp != nil {
			continue
		}
		count++
		if !wanted[name] {
			removals = append(removals, r)
		}
	}
	recent := recentRemovals(set.Status, in.Now)
	st.RecentRemovals = recent
	mass := holdRemovals(set, removals, count, recent)
	switch {
	case mass != nil:
		// A mass removal (a selector typo?) holds every write until it is fixed or acknowledged.
		st.HeldRemovals = mass.names()
		plan.Create, plan.Update = nil, nil
	case set.Spec.Paused:
		plan.Create, plan.Update = nil, nil
	default:
		plan.Delete = removals
		st.RecentRemovals = removed(set, recent, removals, in.Now)
	}
	if held {
		// The revision's source is unknown: no Release gets it.
		plan.Create, plan.Update = nil, nil
	}
	setConditions(&st, in, h, mass, details)
	if in.SourceErr != nil && mass == nil {
		sourceConditions(&st, in, held)
	}
	plan.Status = st
	plan.RequeueAfter = requeue
	return plan
}

// approved says whether approvals hold {stage, revision}.
func approved(approvals []v1.StageApproval, stage, rev string) bool {
	return slices.ContainsFunc(approvals, func(a v1.StageApproval) bool { return a.Stage == stage && a.Revision == rev })
}

// controlledBy says whether set is rel's controller.
func controlledBy(rel *v1.Release, set *v1.ReleaseSet) bool {
	ref := metav1.GetControllerOfNoCopy(rel)
	return ref != nil && ref.UID == set.UID && ref.Kind == "ReleaseSet" && ref.Name == set.Name
}

// sibling is the Release of the first of clusters (by name) that has one with a
// revision annotation, other than rev when the set is halted; nil if none.
func sibling(clusters []string, owned map[string]*v1.Release, set, rev string, halted bool) *v1.Release {
	for _, c := range clusters {
		r := owned[ReleaseName(set, c)]
		if r == nil || r.DeletionTimestamp != nil {
			continue
		}
		if at := r.Annotations[v1.AnnotationReleaseSetRevision]; at != "" && (!halted || at != rev) {
			return r
		}
	}
	return nil
}

// clusterValues are the spec.values of the Release of each selected Cluster, by
// name, when the set has overrides (ClusterValues); nil without.
func clusterValues(set *v1.ReleaseSet, sel Selection, clusters []v1.Cluster) (map[string]*runtime.RawExtension, error) {
	if len(set.Spec.ClusterOverrides) == 0 {
		return nil, nil
	}
	byName := map[string]*v1.Cluster{}
	for i := range clusters {
		byName[clusters[i].Name] = &clusters[i]
	}
	out := map[string]*runtime.RawExtension{}
	for _, sc := range sel.Stages {
		for _, c := range sc.Clusters {
			v, err := ClusterValues(set.Spec.Template.Spec.Values, set.Spec.ClusterOverrides, byName[c])
			if err != nil {
				return nil, err
			}
			out[c] = v
		}
	}
	return out, nil
}

// builder writes the Releases of one set at one revision.
type builder struct {
	set *v1.ReleaseSet
	rev string
	// values are the spec.values of each Cluster's Release (clusterValues); a Cluster
	// without gets the template's.
	values map[string]*runtime.RawExtension
	// source is pinned into each Release (pin); nil: nothing to pin.
	source *v1.ReleaseSetSource
}

// release is the Release of cluster at the revision, defaulted as the API server
// stores it.
func (b builder) release(cluster string) *v1.Release {
	t := b.set.Spec.Template
	rel := &v1.Release{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:   b.set.Namespace,
			Name:        ReleaseName(b.set.Name, cluster),
			Labels:      maps.Clone(t.Metadata.Labels),
			Annotations: maps.Clone(t.Metadata.Annotations),
		},
		Spec: *t.Spec.DeepCopy(),
	}
	pin(&rel.Spec, b.set.Name, b.source)
	if rel.Labels == nil {
		rel.Labels = map[string]string{}
	}
	if rel.Annotations == nil {
		rel.Annotations = map[string]string{}
	}
	if v, ok := b.values[cluster]; ok {
		rel.Spec.Values = v.DeepCopy()
	}
	b.own(rel, cluster)
	rel.Annotations[v1.AnnotationReleaseSetRevision] = b.rev
	if len(b.set.Spec.ClusterOverrides) > 0 {
		rel.Annotations[v1.AnnotationReleaseSetOverrides] = "true"
	}
	v1.SetObjectDefaults_Release(rel)
	return rel
}

// own puts on rel what marks it as the set's Release of cluster: labels, the
// controller reference, spec.cluster, and the shard label.
func (b builder) own(rel *v1.Release, cluster string) {
	rel.Spec.Cluster = cluster
	rel.Labels[v1.LabelReleaseSet] = v1.LabelValue(b.set.Name)
	rel.Labels[v1.LabelCluster] = v1.LabelValue(cluster)
	// A set's Releases are in its shard (the template's label, else the set's own):
	// the controller of a shard caches only that shard's Releases.
	if shard, ok := b.set.Labels[v1.LabelShard]; ok {
		if _, inTemplate := b.set.Spec.Template.Metadata.Labels[v1.LabelShard]; !inTemplate {
			rel.Labels[v1.LabelShard] = shard
		}
	}
	rel.OwnerReferences = []metav1.OwnerReference{b.ownerRef()}
}

func (b builder) ownerRef() metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion:         v1.SchemeGroupVersion.String(),
		Kind:               "ReleaseSet",
		Name:               b.set.Name,
		UID:                b.set.UID,
		Controller:         ptr.To(true),
		BlockOwnerDeletion: ptr.To(true),
	}
}

// copyOf is a new Release for cluster with sib's spec, labels and annotations (its
// revision): the revision a stage that has not started is at. Per-Release requests
// (the sync annotations) are not copied.
func (b builder) copyOf(sib *v1.Release, cluster string) *v1.Release {
	rel := &v1.Release{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:   b.set.Namespace,
			Name:        ReleaseName(b.set.Name, cluster),
			Labels:      maps.Clone(sib.Labels),
			Annotations: maps.Clone(sib.Annotations),
		},
		Spec: *sib.Spec.DeepCopy(),
	}
	if rel.Labels == nil {
		rel.Labels = map[string]string{}
	}
	delete(rel.Annotations, v1.AnnotationSyncRequestedAt)
	delete(rel.Annotations, v1.AnnotationSyncForceRequestedAt)
	delete(rel.Annotations, v1.AnnotationSyncRequestedRender)
	b.own(rel, cluster)
	return rel
}

// differs says whether what the set owns on rel differs from want: the spec, the
// labels and annotations want has, the controller reference.
func (b builder) differs(rel, want *v1.Release) bool {
	if !sameSpec(rel.Spec, want.Spec) {
		return true
	}
	for k, v := range want.Labels {
		if got, ok := rel.Labels[k]; !ok || got != v {
			return true
		}
	}
	for k, v := range want.Annotations {
		if got, ok := rel.Annotations[k]; !ok || got != v {
			return true
		}
	}
	if _, ok := want.Annotations[v1.AnnotationReleaseSetOverrides]; !ok && rel.Annotations[v1.AnnotationReleaseSetOverrides] != "" {
		return true
	}
	ref := metav1.GetControllerOfNoCopy(rel)
	return ref == nil || ref.UID != b.set.UID || !ptr.Deref(ref.BlockOwnerDeletion, false)
}

// update is rel with the fields the set owns taken from want; pin, mutations,
// lifecycle, status and other labels and annotations as they are.
func (b builder) update(rel, want *v1.Release) *v1.Release {
	out := rel.DeepCopy()
	out.Spec = *want.Spec.DeepCopy()
	if out.Labels == nil {
		out.Labels = map[string]string{}
	}
	maps.Copy(out.Labels, want.Labels)
	if out.Annotations == nil {
		out.Annotations = map[string]string{}
	}
	maps.Copy(out.Annotations, want.Annotations)
	if _, ok := want.Annotations[v1.AnnotationReleaseSetOverrides]; !ok {
		delete(out.Annotations, v1.AnnotationReleaseSetOverrides)
	}
	if i := slices.IndexFunc(out.OwnerReferences, func(r metav1.OwnerReference) bool { return r.UID == b.set.UID }); i >= 0 {
		out.OwnerReferences[i] = b.ownerRef()
	} else {
		out.OwnerReferences = append(out.OwnerReferences, b.ownerRef())
	}
	return out
}

// sameSpec compares two Release specs as the API server stores them: defaulted, values
// compared as JSON rather than as bytes.
func sameSpec(a, b v1.ReleaseSpec) bool {
	ra, rb := &v1.Release{Spec: *a.DeepCopy()}, &v1.Release{Spec: *b.DeepCopy()}
	v1.SetObjectDefaults_Release(ra)
	v1.SetObjectDefaults_Release(rb)
	ja, errA := canonicalJSON(ra.Spec)
	jb, errB := canonicalJSON(rb.Spec)
	return errA == nil && errB == nil && string(ja) == string(jb)
}

// durationOf is d, or 0 when unset.
func durationOf(d *metav1.Duration) time.Duration {
	if d == nil {
		return 0
	}
	return d.Duration
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// later is the later of a and b.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
