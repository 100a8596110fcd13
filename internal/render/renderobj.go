package render

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"kumodo.io/convoy/api/v1alpha1"
)

// KeepRenders is how many Render objects of a Release the history keeps besides
// those the Release's status and pin name.
const KeepRenders = 10

// maxNameLength is the longest object name (a DNS subdomain).
const maxNameLength = 253

// RenderName is the name of the Render object of a render ref:
// <release>-<first 10 hex digits of the digest>.
func RenderName(release, ref string) string {
	hex := strings.TrimPrefix(ref, "sha256:")
	if len(hex) > 10 {
		hex = hex[:10]
	}
	if limit := maxNameLength - len(hex) - 1; len(release) > limit {
		release = strings.TrimRight(release[:limit], "-.")
	}
	return release + "-" + hex
}

// NewRenderObject builds the Render object of a result: named by RenderName,
// labelled with the Release, owned by it, holding the gzip'd canonical stream.
func NewRenderObject(rel *v1alpha1.Release, res *Result) (*v1alpha1.Render, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(res.Canonical); err != nil {
		return nil, fmt.Errorf("render %s of Release %s/%s: %w", res.Ref, rel.Namespace, rel.Name, err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("render %s of Release %s/%s: %w", res.Ref, rel.Namespace, rel.Name, err)
	}
	controller := true
	return &v1alpha1.Render{
		TypeMeta: metav1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: "Render"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      RenderName(rel.Name, res.Ref),
			Namespace: rel.Namespace,
			Labels:    map[string]string{v1alpha1.LabelRelease: rel.Name},
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
		Chart:        v1alpha1.RenderChart{Name: res.ChartName, Version: res.ChartVersion},
		ValuesDigest: res.ValuesDigest,
		ObjectCount:  int32(len(res.Objects)),
		Waves:        res.Waves,
		Manifests:    buf.Bytes(),
	}, nil
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
