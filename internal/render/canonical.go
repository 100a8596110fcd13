package render

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"kumodo.io/convoy/internal/hooks"
	"kumodo.io/convoy/internal/manifest"
)

// objectLess is the canonical order: wave, kind (Helm's install order), namespace,
// name; then group and version, so that the order is total.
func objectLess(a, b Object) bool {
	if a.Wave != b.Wave {
		return a.Wave < b.Wave
	}
	ka, kb := a.GetKind(), b.GetKind()
	if ra, rb := hooks.KindRank(ka), hooks.KindRank(kb); ra != rb {
		return ra < rb
	}
	if ka != kb {
		return ka < kb
	}
	if a.GetNamespace() != b.GetNamespace() {
		return a.GetNamespace() < b.GetNamespace()
	}
	if a.GetName() != b.GetName() {
		return a.GetName() < b.GetName()
	}
	return a.GetAPIVersion() < b.GetAPIVersion()
}

// hookLess orders a chart's hooks as Helm sorts the hooks of one event: by weight,
// then kind (Helm's install order), then name; then namespace, group and version, so
// that the order is total.
func hookLess(a, b hooks.Chart) bool {
	if a.Weight != b.Weight {
		return a.Weight < b.Weight
	}
	return objectLess(Object{Unstructured: a.Object}, Object{Unstructured: b.Object})
}

// canonicalize sorts objects and hooks and serialises them: a YAML stream of the
// objects, then the chart's hooks, each document with sorted keys.
func canonicalize(objs []Object, chartHooks []hooks.Chart) ([]byte, error) {
	sort.SliceStable(objs, func(i, j int) bool { return objectLess(objs[i], objs[j]) })
	sort.SliceStable(chartHooks, func(i, j int) bool { return hookLess(chartHooks[i], chartHooks[j]) })
	var buf bytes.Buffer
	write := func(u *unstructured.Unstructured) error {
		b, err := yaml.Marshal(u.Object) // via JSON: map keys sorted
		if err != nil {
			return unappliable("%s cannot be serialised: %w", describe(u), err)
		}
		buf.WriteString("---\n")
		buf.Write(b)
		return nil
	}
	for _, o := range objs {
		if err := write(o.Unstructured); err != nil {
			return nil, err
		}
	}
	for _, h := range chartHooks {
		if err := write(h.Object); err != nil {
			return nil, err
		}
	}
	return buf.Bytes(), nil
}

// refOf is the render ref of a canonical stream.
func refOf(canonical []byte) string {
	return "sha256:" + sha256Hex(canonical)
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// wavesOf lists the distinct waves of objects, ascending.
func wavesOf(objs []Object) []int32 {
	waves := make([]int32, 0, len(objs))
	for _, o := range objs {
		waves = append(waves, o.Wave)
	}
	if len(waves) == 0 {
		return nil
	}
	slices.Sort(waves)
	return slices.Compact(waves)
}

// Decode reads a canonical stream (Result.Canonical, or a Render's manifests once
// gunzip'd) back into objects, with their waves, and the chart's hooks, in canonical
// order.
func Decode(canonical []byte) ([]Object, []hooks.Chart, error) {
	us, err := manifest.DecodeStream(canonical)
	if err != nil {
		return nil, nil, unappliable("render manifests: %w", err)
	}
	return split(us)
}

// split sorts decoded objects, in canonical order, into the objects to apply, with
// their waves, and the chart's hooks.
func split(us []*unstructured.Unstructured) ([]Object, []hooks.Chart, error) {
	var objs []Object
	var chartHooks []hooks.Chart
	for _, u := range us {
		h, isHook, _, err := parseHook(u)
		if err != nil {
			return nil, nil, err
		}
		if isHook {
			chartHooks = append(chartHooks, h)
			continue
		}
		w, err := WaveOf(u)
		if err != nil {
			return nil, nil, err
		}
		objs = append(objs, Object{Unstructured: u, Wave: w})
	}
	return objs, chartHooks, nil
}

// DecodeManifests reads the manifests of a Render object (gzip'd canonical stream).
func DecodeManifests(manifests []byte) ([]Object, []hooks.Chart, error) {
	b, err := manifest.Decompress(manifests)
	if err != nil {
		return nil, nil, fmt.Errorf("render manifests: %w", err)
	}
	return Decode(b)
}
