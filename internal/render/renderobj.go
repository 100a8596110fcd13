package render

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/hooks"
	"kumodo.io/convoy/internal/manifest"
)

// KeepRenders is how many Render objects of a Release the history keeps besides
// those the Release's status and pin name.
const KeepRenders = 10

// NewRenderObject builds the Render object of a result: named by RenderName,
// labelled with the Release, owned by it, holding the gzip'd canonical stream.
func NewRenderObject(rel *v1alpha1.Release, res *Result) (*v1alpha1.Render, error) {
	if res.Canonical == nil {
		// A result read from the compact form: its canonical stream again, from its
		// objects, which must give the same ref.
		canonical, err := canonicalize(slices.Clone(res.Objects), slices.Clone(res.Hooks))
		if err != nil {
			return nil, err
		}
		if ref := refOf(canonical); ref != res.Ref {
			return nil, fmt.Errorf("render %s of Release %s/%s: its objects serialise to render %s", res.Ref, rel.Namespace, rel.Name, ref)
		}
		res.Canonical = canonical
	}
	manifests, err := manifest.Compress(res.Canonical)
	if err != nil {
		return nil, fmt.Errorf("render %s of Release %s/%s: %w", res.Ref, rel.Namespace, rel.Name, err)
	}
	controller := true
	labels := map[string]string{v1alpha1.LabelRelease: v1alpha1.LabelValue(rel.Name)}
	var annotations map[string]string
	if res.Inputs != "" {
		labels[v1alpha1.LabelInputs] = InputsLabel(res.Inputs)
		annotations = map[string]string{v1alpha1.AnnotationInputs: res.Inputs}
	}
	if res.Revision > 0 {
		labels[v1alpha1.LabelRevision] = strconv.FormatInt(res.Revision, 10)
	}
	lookups, err := LookupsAnnotation(res.Lookups)
	if err != nil {
		return nil, err
	}
	caps, err := CapabilitiesAnnotation(res.Capabilities)
	if err != nil {
		return nil, err
	}
	for key, a := range map[string]string{v1alpha1.AnnotationLookups: lookups, v1alpha1.AnnotationCapabilities: caps} {
		if a == "" {
			continue
		}
		if annotations == nil {
			annotations = map[string]string{}
		}
		annotations[key] = a
	}
	return &v1alpha1.Render{
		TypeMeta: metav1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: "Render"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        v1alpha1.RenderRef(res.Ref).RenderName(rel.Name),
			Namespace:   rel.Namespace,
			Labels:      labels,
			Annotations: annotations,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion:         v1alpha1.SchemeGroupVersion.String(),
				Kind:               "Release",
				Name:               rel.Name,
				UID:                rel.UID,
				Controller:         &controller,
				BlockOwnerDeletion: &controller,
			}},
		},
		RenderRef:    res.Ref,
		Release:      rel.Name,
		Chart:        v1alpha1.RenderChart{Name: res.ChartName, Version: res.ChartVersion, Commit: res.Commit},
		ValuesDigest: res.ValuesDigest,
		ObjectCount:  int32(len(res.Objects)),
		Waves:        res.Waves,
		Manifests:    manifests,
	}, nil
}

// ResultFromObject reads a Render object back into the result it stores, for a
// reuse of the render: objects, hooks, waves, ref, chart, inputs, revision and what
// its templates read of the target. The
// result has no Warnings (they were reported when the render was made) and its
// IsUpgrade is left to the caller, who knows which inputs it matched.
func ResultFromObject(obj *v1alpha1.Render) (*Result, error) {
	what := fmt.Sprintf("Render %s/%s", obj.Namespace, obj.Name)
	canonical, err := manifest.Decompress(obj.Manifests)
	if err != nil {
		return nil, fmt.Errorf("%s: manifests: %w", what, err)
	}
	objs, hooks, err := Decode(canonical)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if ref := refOf(canonical); ref != obj.RenderRef {
		return nil, fmt.Errorf("%s: its manifests have the digest %s, not its renderRef %s", what, ref, obj.RenderRef)
	}
	res, err := resultOf(obj, objs, hooks)
	if err != nil {
		return nil, err
	}
	res.Canonical = canonical
	return res, nil
}

// resultOf is the result that the Render object obj stores, with its objects and
// hooks as read from its manifests; without Canonical.
func resultOf(obj *v1alpha1.Render, objs []Object, chartHooks []hooks.Chart) (*Result, error) {
	revision, _ := RevisionOf(obj.Labels) // a Render without one has revision 0
	var reads []LookupRead
	if a := obj.Annotations[v1alpha1.AnnotationLookups]; a != "" {
		if err := json.Unmarshal([]byte(a), &reads); err != nil {
			return nil, fmt.Errorf("Render %s/%s: annotation %s: %w", obj.Namespace, obj.Name, v1alpha1.AnnotationLookups, err)
		}
	}
	var caps CapabilityReads
	if a := obj.Annotations[v1alpha1.AnnotationCapabilities]; a != "" {
		if err := json.Unmarshal([]byte(a), &caps); err != nil {
			return nil, fmt.Errorf("Render %s/%s: annotation %s: %w", obj.Namespace, obj.Name, v1alpha1.AnnotationCapabilities, err)
		}
	}
	return &Result{
		Ref:          obj.RenderRef,
		ValuesDigest: obj.ValuesDigest,
		ChartName:    obj.Chart.Name,
		ChartVersion: obj.Chart.Version,
		Commit:       obj.Chart.Commit,
		Inputs:       obj.Annotations[v1alpha1.AnnotationInputs],
		Revision:     revision,
		Lookups:      reads,
		Capabilities: caps,
		Objects:      objs,
		Waves:        wavesOf(objs),
		Hooks:        chartHooks,
	}, nil
}

// LookupsAnnotation is the value of AnnotationLookups for the reads of a render; ""
// when there are none.
func LookupsAnnotation(reads []LookupRead) (string, error) {
	if len(reads) == 0 {
		return "", nil
	}
	b, err := json.Marshal(reads)
	if err != nil {
		return "", fmt.Errorf("the lookups of a render: %w", err)
	}
	return string(b), nil
}

// RevisionOf reads LabelRevision from a Render's labels; false when it has none or
// it is not a positive number.
func RevisionOf(labels map[string]string) (int64, bool) {
	n, err := strconv.ParseInt(labels[v1alpha1.LabelRevision], 10, 64)
	if err != nil || n <= 0 {
		return 0, false
	}
	return n, true
}

// RendersToDelete chooses which of a Release's Render objects to delete: it keeps
// those whose ref status.render, status.lastSuccessful, status.rollout (renderRef
// and previousRenderRef) or pin names, plus the KeepRenders most recent others (by
// creation time, then name), and returns the names of the rest, sorted. Renders of
// other Releases are never chosen.
func RendersToDelete(rel *v1alpha1.Release, renders []v1alpha1.Render) []string {
	keep := map[string]bool{}
	st := rel.Status
	if st.Render != nil {
		keep[st.Render.Ref] = true
	}
	if st.LastSuccessful != nil {
		keep[st.LastSuccessful.RenderRef] = true
	}
	if st.Rollout != nil {
		keep[st.Rollout.RenderRef] = true
		keep[st.Rollout.PreviousRenderRef] = true
	}
	if rel.Pin != nil {
		keep[rel.Pin.RenderRef] = true
	}
	delete(keep, "")

	var others []v1alpha1.Render
	for _, r := range renders {
		if r.Release != rel.Name || r.Namespace != rel.Namespace || keep[r.RenderRef] {
			continue
		}
		others = append(others, r)
	}
	sort.Slice(others, func(i, j int) bool {
		ti, tj := others[i].CreationTimestamp, others[j].CreationTimestamp
		if !ti.Equal(&tj) {
			return tj.Before(&ti) // newest first
		}
		return others[i].Name < others[j].Name
	})
	var out []string
	for i, r := range others {
		if i >= KeepRenders {
			out = append(out, r.Name)
		}
	}
	sort.Strings(out)
	return out
}
