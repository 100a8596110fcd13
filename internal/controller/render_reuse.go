package controller

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/policy"
	"kumodo.io/convoy/internal/render"
	"kumodo.io/convoy/internal/store"
)

// A render is a function of its inputs (render.Inputs): while they stay, the Render
// made from them is reused instead of templating the chart again, so that a template's
// randAlphaNum, uuidv4, now or genCA does not make a new render at every reconcile.
// The Render objects carry their inputs (v1.AnnotationInputs) and are found in the
// cache of Render metadata; the current render of each Release is also kept in memory
// (in compact form, render.Compact), so that a steady Release reads nothing to reuse it.
// The controller decides the reuse itself (render step): it asks render for the
// inputs' key (render.Prepare), looks an earlier render of them up (reuse), lets
// render check that what its templates read of the target answers the same
// (render.Prepared.Reuse), and has the chart templated only when there is none.

// renderMemory holds, for each Release, the Render object of its latest render and
// the compact form of that render (render.Compact): the object's manifests are not
// kept, reading them back meant parsing YAML at every reconcile (decision 0134). It is safe
// for concurrent use; the zero value is ready to use.
type renderMemory struct {
	mu      sync.Mutex
	renders map[policy.Key]*rememberedRender
	// warned is the inputs digest of the last unexplained render change reported for
	// each Release, so that it is reported once.
	warned map[policy.Key]string
}

// rememberedRender is a Release's latest render in memory.
type rememberedRender struct {
	// obj is its Render object without manifests and managed fields: a Render as
	// created holds the API server's, which nothing reads, and at 10,000 Releases
	// they were ~0.8 KiB of each (decision 0134).
	obj *v1.Render
	// compact is the render's objects and hooks (render.Compact).
	compact []byte
}

// get returns the remembered render of key when it belongs to the Release of uid.
func (m *renderMemory) get(key policy.Key, uid types.UID) *rememberedRender {
	m.mu.Lock()
	defer m.mu.Unlock()
	rem := m.renders[key]
	if rem == nil || !ownedBy(rem.obj.OwnerReferences, uid) {
		return nil
	}
	return rem
}

// put remembers obj, the Render object of res, as key's latest render. The compact
// form is made once per render: the same ref is the same objects.
func (m *renderMemory) put(key policy.Key, obj *v1.Render, res *render.Result) error {
	kept := *obj
	kept.Manifests, kept.ManagedFields = nil, nil
	m.mu.Lock()
	rem := m.renders[key]
	m.mu.Unlock()
	var compact []byte
	if rem != nil && rem.obj.RenderRef == obj.RenderRef {
		compact = rem.compact
	} else {
		// Made outside the lock: the other workers' reconciles need it meanwhile.
		var err error
		if compact, err = render.Compact(res); err != nil {
			return err
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.renders == nil {
		m.renders = map[policy.Key]*rememberedRender{}
	}
	// A new entry, not an update of the one get may have handed out.
	m.renders[key] = &rememberedRender{obj: &kept, compact: compact}
	return nil
}

// warnOnce reports whether an unexplained change for inputs is to be reported, and
// notes that it was.
func (m *renderMemory) warnOnce(key policy.Key, inputs string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.warned == nil {
		m.warned = map[policy.Key]string{}
	}
	if m.warned[key] == inputs {
		return false
	}
	m.warned[key] = inputs
	return true
}

func (m *renderMemory) forget(key policy.Key) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.renders, key)
	delete(m.warned, key)
}

func ownedBy(refs []metav1.OwnerReference, uid types.UID) bool {
	for _, ref := range refs {
		if ref.UID == uid {
			return true
		}
	}
	return false
}

// renderCandidate is an earlier render of a Release: a Render object as the
// metadata cache has it, or the one in memory.
type renderCandidate struct {
	// name is the Render object's name.
	name string
	// inputs is its inputs digest (v1.AnnotationInputs); empty for a Render made
	// before inputs were recorded.
	inputs string
	// revision is its revision (v1.LabelRevision); 0 when it has none.
	revision int64
}

// chooseReuse picks the earlier render to reuse for the inputs of key, or returns -1
// to template the chart anew:
//
//   - the current render (the Render named current, status.render's) when its inputs
//     are key's, also as an install: a Release keeps the render that installed it
//     while no input changes (its first successful apply does not make a new
//     render);
//   - else a render of exactly key.Inputs, the one of the highest revision (there are
//     several only when a Render was lost and its inputs rendered again).
func chooseReuse(current string, key render.ReuseKey, cands []renderCandidate) int {
	best := -1
	for i, c := range cands {
		if c.inputs == "" {
			continue
		}
		if c.name == current && (c.inputs == key.Inputs || c.inputs == key.InstallInputs) {
			return i
		}
		if c.inputs == key.Inputs && (best < 0 || c.revision > cands[best].revision) {
			best = i
		}
	}
	return best
}

// chooseLegacy picks the current render (the Render named current) when convoy made
// it before it recorded what templates read of the capabilities, and its inputs are
// legacy's (render.ReuseKey.Legacy): the same inputs, Kubernetes version and list of
// API versions. It returns the candidate's index and the inputs digest to record on
// it now (key's digest of the form it matched, install or upgrade), or -1.
func chooseLegacy(current string, key, legacy render.ReuseKey, cands []renderCandidate) (int, string) {
	for i, c := range cands {
		if c.name != current || c.inputs == "" {
			continue
		}
		switch c.inputs {
		case legacy.Inputs:
			return i, key.Inputs
		case legacy.InstallInputs:
			return i, key.InstallInputs
		}
	}
	return -1, ""
}

// legacyCandidate is chooseLegacy for the reconcile's request, and the reads the
// Render is then recorded with; -1 when the current render matches key, is not a
// legacy one or none is. The legacy digests (of the whole list of API versions) are
// made only when the current render's inputs are not key's.
func legacyCandidate(current string, key render.ReuseKey, cands []renderCandidate) (int, string, render.CapabilityReads, error) {
	i := slices.IndexFunc(cands, func(c renderCandidate) bool { return c.name == current })
	if i < 0 || cands[i].inputs == "" || cands[i].inputs == key.Inputs || cands[i].inputs == key.InstallInputs {
		return -1, "", render.CapabilityReads{}, nil
	}
	legacy, reads, err := key.Legacy()
	if err != nil {
		return -1, "", render.CapabilityReads{}, err
	}
	i, inputs := chooseLegacy(current, key, legacy, cands)
	return i, inputs, reads, nil
}

// renderHistory is what the reconcile knows of the Release's earlier renders: the
// candidates for a reuse and their revisions.
type renderHistory struct {
	cands []renderCandidate
	// remembered is the render in memory; nil when there is none.
	remembered *rememberedRender
}

// history lists the Release's Render objects from the cache of Render metadata (no
// request) and adds the one in memory.
func (r *Reconciler) history(ctx context.Context, rel *v1.Release) (*renderHistory, error) {
	items, err := store.ListRenderMetadata(ctx, r.client, rel.Namespace, rel.Name)
	if err != nil {
		return nil, err
	}
	h := &renderHistory{remembered: r.renders.get(releaseKey(rel), rel.UID)}
	seen := map[string]bool{}
	add := func(m metav1.ObjectMeta) {
		if seen[m.Name] || !ownedBy(m.OwnerReferences, rel.UID) {
			return
		}
		seen[m.Name] = true
		revision, _ := render.RevisionOf(m.Labels)
		h.cands = append(h.cands, renderCandidate{name: m.Name, inputs: m.Annotations[v1.AnnotationInputs], revision: revision})
	}
	if h.remembered != nil {
		add(h.remembered.obj.ObjectMeta)
	}
	for _, m := range items {
		add(m.ObjectMeta)
	}
	return h, nil
}

// revisions are the revisions of the Release's renders, for NextRenderRevision.
func (h *renderHistory) revisions() []int64 {
	out := make([]int64, 0, len(h.cands))
	for _, c := range h.cands {
		out = append(out, c.revision)
	}
	return out
}

// candidate returns the candidate named name; false when there is none.
func (h *renderHistory) candidate(name string) (renderCandidate, bool) {
	for _, c := range h.cands {
		if c.name == name {
			return c, true
		}
	}
	return renderCandidate{}, false
}

// reuse finds the earlier render of the inputs of key (render.Prepared.Key) before
// anything is templated: the one chooseReuse picks, or else the current render made
// by an earlier convoy of the same inputs (chooseLegacy), from memory or read from
// the API server (only when the inputs match a Render other than the one in memory).
// A Render that is gone or cannot be read back is not reused; render.Prepared.Reuse
// then checks what its templates read of the target.
func (r *Reconciler) reuse(ctx context.Context, st *state, h *renderHistory, key render.ReuseKey) (*render.Result, error) {
	rel := st.rel
	current := currentRenderName(rel)
	i := chooseReuse(current, key, h.cands)
	var inputs string // the inputs of a legacy Render, to record on it
	var reads render.CapabilityReads
	if i < 0 {
		var err error
		if i, inputs, reads, err = legacyCandidate(current, key, h.cands); err != nil || i < 0 {
			return nil, nil // a version that does not parse: templating reports it
		}
	}
	c := h.cands[i]
	var obj *v1.Render
	var res *render.Result
	var err error
	if rem := h.remembered; rem != nil && rem.obj.Name == c.name {
		obj = rem.obj
		res, err = render.ResultFromCompact(obj, rem.compact)
	} else {
		if obj, err = r.readCandidate(ctx, rel, c); obj == nil || err != nil {
			return nil, err
		}
		res, err = render.ResultFromObject(obj)
	}
	if err != nil {
		logr.FromContextOrDiscard(ctx).Error(err, "Cannot reuse a Render: rendering anew", "render", obj.Name)
		return nil, nil
	}
	res.Inputs = c.inputs
	if inputs != "" {
		logr.FromContextOrDiscard(ctx).Info("Reusing a Render of an earlier convoy: the target's API versions and Kubernetes version are the same",
			"render", obj.Name)
		res.Inputs, res.Capabilities = inputs, reads
	}
	res.IsUpgrade = key.InstallInputs != "" && res.Inputs == key.Inputs
	st.renderObj = obj
	return res, nil
}

// readCandidate reads the Render of candidate c from the API server; nil when it is
// gone or its inputs changed since the cache saw it.
func (r *Reconciler) readCandidate(ctx context.Context, rel *v1.Release, c renderCandidate) (*v1.Render, error) {
	logr.FromContextOrDiscard(ctx).V(1).Info("Reading the Render of the same inputs", "render", c.name)
	obj, err := store.GetRenderNamed(ctx, r.apiReader, rel.Namespace, c.name)
	if obj == nil || err != nil || obj.Annotations[v1.AnnotationInputs] != c.inputs {
		return nil, err
	}
	return obj, nil
}

// unexplainedChange is the warning for a render templated anew that differs from the
// current render although no input is known to have changed, or "". After reuse this
// happens only when the current render's Render could not be reused: deleted by
// hand, lost with a restore, or made by a convoy that did not record inputs; the
// chart then gives a new render because its templates are not deterministic.
func unexplainedChange(rel *v1.Release, h *renderHistory, key render.ReuseKey, res *render.Result) string {
	old := rel.Status.Render
	if old == nil || old.Ref == res.Ref {
		return ""
	}
	cur, known := h.candidate(currentRenderName(rel))
	switch {
	case known && cur.inputs != "":
		if cur.inputs != key.Inputs && cur.inputs != key.InstallInputs {
			return "" // an input changed
		}
	case old.ValuesDigest != res.ValuesDigest || old.ChartVersion != res.ChartVersion || old.Commit != res.Commit:
		return "" // the current render's inputs are unknown, but these changed
	}
	return fmt.Sprintf("Render %s differs from render %s although, as far as convoy knows, none of its inputs changed (chart %s, values %s): "+
		"the chart's templates give a new result each time they run (randAlphaNum, uuidv4, now, genCA, …) "+
		"and the Render of %s could not be reused (deleted, or made by an earlier convoy). "+
		"convoy keeps render %s until an input changes.", res.Ref, old.Ref, res.ChartVersion, res.ValuesDigest, old.Ref, res.Ref)
}

// currentRenderName is the name of the Render of status.render; "" when there is none.
func currentRenderName(rel *v1.Release) string {
	if rel.Status.Render == nil || rel.Status.Render.Ref == "" {
		return ""
	}
	return v1.RenderRef(rel.Status.Render.Ref).RenderName(rel.Name)
}

func releaseKey(rel *v1.Release) policy.Key {
	return policy.Key{Namespace: rel.Namespace, Name: rel.Name}
}
