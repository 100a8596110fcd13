package health

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// ignoredMetadata are the metadata fields that the API server maintains; a dry run
// changes them by itself, so they are never drift.
var ignoredMetadata = []string{
	"managedFields", "resourceVersion", "generation", "uid", "creationTimestamp", "selfLink",
}

// DriftedFields lists the field paths where the result of a server-side apply dry run
// of the render's object (force, convoy's field manager) differs from the live object:
// what convoy's apply would change. Paths are dotted (spec.replicas), with list indexes
// and map keys that contain a dot in brackets (spec.template.spec.containers[0].image,
// metadata.labels[app.kubernetes.io/name]), sorted. A field present on one side only is
// reported at that field; a list of another length is reported at the list.
//
// status and the metadata the API server maintains (managedFields, resourceVersion,
// generation, uid, creationTimestamp, selfLink) are ignored. Fields convoy does not
// manage need no rule: server-side apply keeps the fields of other managers (labels and
// annotations added by others, defaults, fields a controller sets), so they are the
// same on both sides.
func DriftedFields(live, dryRun *unstructured.Unstructured) []string {
	if live == nil || dryRun == nil {
		return nil
	}
	a, b := strip(live.Object), strip(dryRun.Object)
	var paths []string
	diff("", a, b, &paths)
	slices.Sort(paths)
	return paths
}

func strip(obj map[string]any) map[string]any {
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		out[k] = v
	}
	delete(out, "status")
	if md, ok := out["metadata"].(map[string]any); ok {
		m := make(map[string]any, len(md))
		for k, v := range md {
			m[k] = v
		}
		for _, k := range ignoredMetadata {
			delete(m, k)
		}
		out["metadata"] = m
	}
	return out
}

func diff(path string, a, b any, out *[]string) {
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok {
			*out = append(*out, path)
			return
		}
		for k, x := range av {
			y, ok := bv[k]
			if !ok {
				*out = append(*out, join(path, k))
				continue
			}
			diff(join(path, k), x, y, out)
		}
		for k := range bv {
			if _, ok := av[k]; !ok {
				*out = append(*out, join(path, k))
			}
		}
	case []any:
		bv, ok := b.([]any)
		if !ok || len(av) != len(bv) {
			*out = append(*out, path)
			return
		}
		for i := range av {
			diff(fmt.Sprintf("%s[%d]", path, i), av[i], bv[i], out)
		}
	default:
		if !scalarEqual(a, b) {
			*out = append(*out, path)
		}
	}
}

// scalarEqual compares JSON scalars; numbers compare by value (int64 and float64).
func scalarEqual(a, b any) bool {
	if x, ok := number(a); ok {
		y, ok := number(b)
		return ok && x == y
	}
	return reflect.DeepEqual(a, b)
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case int:
		return float64(n), true
	case int32:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}

func join(path, key string) string {
	if strings.ContainsAny(key, ".[]") {
		return path + "[" + key + "]"
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

// Drift is the drift status for the result of a check: the drifted objects (those with
// fields, sorted, fields sorted) and since, the time this result first showed: the
// stored since when the result is the same as the stored one, else now. A check that
// finds nothing gives a status with no drifted objects, since when that first showed.
func Drift(stored *v1.DriftStatus, drifted []v1.DriftedObject, now time.Time) *v1.DriftStatus {
	var objs []v1.DriftedObject
	for _, d := range drifted {
		if len(d.Fields) == 0 {
			continue
		}
		d.Fields = slices.Clone(d.Fields)
		slices.Sort(d.Fields)
		d.Fields = slices.Compact(d.Fields)
		objs = append(objs, d)
	}
	slices.SortFunc(objs, func(a, b v1.DriftedObject) int { return compareRefs(a.ObjectReference, b.ObjectReference) })
	if stored != nil && stored.Since != nil && equality.Semantic.DeepEqual(stored.Drifted, objs) {
		return &v1.DriftStatus{Since: stored.Since.DeepCopy(), Drifted: objs}
	}
	t := metav1.NewTime(now).Rfc3339Copy()
	return &v1.DriftStatus{Since: &t, Drifted: objs}
}

// NextDriftCheck says when the next drift check is due, from spec.syncPolicy.interval
// and the time of the last check (zero: none since the observer started): false when
// the interval is unset or 0 (no drift checks), else the delay from now, 0 when due.
func NextDriftCheck(interval *metav1.Duration, lastCheck, now time.Time) (time.Duration, bool) {
	if interval == nil || interval.Duration <= 0 {
		return 0, false
	}
	if lastCheck.IsZero() {
		return 0, true
	}
	return max(lastCheck.Add(interval.Duration).Sub(now), 0), true
}
