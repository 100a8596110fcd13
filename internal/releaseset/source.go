package releaseset

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strings"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/render"
	"kumodo.io/convoy/internal/source"
)

// What a set resolves from its template (status.source) and pins into each Release,
// so that what moves outside the template — a chart version published in the range,
// a Git branch moved, a valuesFrom object edited — is a new revision that goes through
// the stages (docs/fleets.md, "What a revision covers").

const (
	// maxCopyNameLength is the longest name of a values copy (a ConfigMap's or Secret's).
	maxCopyNameLength = 253
	// copyHex is the number of hex digits that end a copy's name.
	copyHex = 10
)

// resolves reports whether the set has something to resolve: a chart version range
// (or none), a Git branch, tag or semver range, or valuesFrom. A template that names
// an exact version or a commit and no valuesFrom has no source (status.source unset,
// the revision that of the template alone).
func resolves(t v1.ReleaseTemplate) bool {
	return source.Moves(t.Spec.Chart) || len(t.Spec.ValuesFrom) > 0
}

// valuesRead is what one valuesFrom entry read: its key's data, or nothing (Found
// false) when the entry is optional and its object or key is missing.
type valuesRead struct {
	Ref   v1.ValuesReference
	Found bool
	Data  []byte
}

// valuesDigest is "sha256:" and the hex sha256 of the entries in order: each entry's
// kind, key, whether it was found, and its data.
func valuesDigest(reads []valuesRead) string {
	h := sha256.New()
	for _, r := range reads {
		for _, part := range [][]byte{[]byte(r.Ref.Kind), []byte(render.ValuesKey(r.Ref)), []byte(fmt.Sprint(r.Found)), r.Data} {
			var n [8]byte
			binary.BigEndian.PutUint64(n[:], uint64(len(part)))
			h.Write(n[:])
			h.Write(part)
		}
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// copyName is the name of the copy of the i-th valuesFrom entry at digest, as
// kustomize names generated ConfigMaps: "<set>-values-<10 hex>", the hex of
// sha256(digest/i); a long set name is cut so that the name fits.
func copyName(set, digest string, i int) string {
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s/%d", digest, i)))
	suffix := "-values-" + hex.EncodeToString(sum[:])[:copyHex]
	if len(set)+len(suffix) > maxCopyNameLength {
		set = strings.TrimRight(set[:maxCopyNameLength-len(suffix)], "-.")
	}
	return set + suffix
}

// valuesCopy is the immutable copy of the i-th entry's data that the set's Releases
// read at digest: of the entry's kind (a Secret's data stays in a Secret), labelled
// with the set's name and owned by the set; empty when the entry found nothing.
func valuesCopy(set *v1.ReleaseSet, digest string, i int, r valuesRead) client.Object {
	meta := metav1.ObjectMeta{
		Namespace: set.Namespace,
		Name:      copyName(set.Name, digest, i),
		Labels:    map[string]string{v1.LabelReleaseSet: v1.LabelValue(set.Name)},
		OwnerReferences: []metav1.OwnerReference{{
			APIVersion: v1.SchemeGroupVersion.String(), Kind: "ReleaseSet", Name: set.Name, UID: set.UID,
		}},
	}
	key := render.ValuesKey(r.Ref)
	if r.Ref.Kind == v1.ValuesSourceSecret {
		s := &corev1.Secret{ObjectMeta: meta, Type: corev1.SecretTypeOpaque, Immutable: ptr.To(true)}
		if r.Found {
			s.Data = map[string][]byte{key: r.Data}
		}
		return s
	}
	cm := &corev1.ConfigMap{ObjectMeta: meta, Immutable: ptr.To(true)}
	switch {
	case !r.Found:
	case utf8.Valid(r.Data):
		cm.Data = map[string]string{key: string(r.Data)}
	default:
		cm.BinaryData = map[string][]byte{key: r.Data}
	}
	return cm
}

// pin makes spec (a copy of the template's) read what src resolved: the exact chart
// version, or the commit in place of the branch, tag or semver range, and the copies
// of the valuesFrom objects (same kind, key and optional). A nil src leaves spec as it is.
func pin(spec *v1.ReleaseSpec, set string, src *v1.ReleaseSetSource) {
	if src == nil {
		return
	}
	if g := spec.Chart.Git; g != nil {
		if src.Commit != "" {
			g.Ref = v1.GitRef{Commit: src.Commit}
		}
	} else if src.ChartVersion != "" {
		spec.Chart.Version = src.ChartVersion
	}
	if src.ValuesDigest != "" {
		for i := range spec.ValuesFrom {
			spec.ValuesFrom[i].Name = copyName(set, src.ValuesDigest, i)
		}
	}
}

// sourceHeld says whether the set holds its Releases because its source could not be
// resolved and no source resolved from the same inputs is known: writing the template
// would roll out a revision whose source nobody resolved.
func sourceHeld(in Input) bool {
	return in.SourceErr != nil && in.Source == nil
}

// sourceConditions says on Progressing (and, when the Releases are held, on Ready)
// that the source could not be resolved, what keeps going and what to do.
func sourceConditions(st *v1.ReleaseSetStatus, in Input, held bool) {
	what := "the template's chart source and valuesFrom"
	keep := "The Releases keep the source and revision they have"
	if in.Source != nil {
		keep = fmt.Sprintf("The Releases keep the source resolved last (%s)", describeSource(in.Source))
	}
	msg := fmt.Sprintf("Cannot resolve %s: %v. %s; convoy retries with backoff. Fix the source (or the template), "+
		"or grant the ReleaseSet's service account the reads it needs.", what, strings.TrimSuffix(in.SourceErr.Error(), "."), keep)
	if held {
		msg += " No Release is created or changed until the source resolves."
		setCondition(st, in, v1.ConditionReady, metav1.ConditionFalse, v1.ReasonSourceNotReady, msg)
	}
	setCondition(st, in, v1.ConditionProgressing, metav1.ConditionFalse, v1.ReasonSourceNotReady, msg)
}

// describeSource names a source for messages.
func describeSource(src *v1.ReleaseSetSource) string {
	var parts []string
	if src.ChartVersion != "" {
		parts = append(parts, "chart version "+src.ChartVersion)
	}
	if src.Commit != "" {
		parts = append(parts, "commit "+src.Commit)
	}
	if src.ValuesDigest != "" {
		parts = append(parts, "values "+src.ValuesDigest)
	}
	return strings.Join(parts, ", ")
}
