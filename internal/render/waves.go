package render

import (
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"kumodo.io/convoy/api/v1alpha1"
)

// WaveOf returns the sync wave of an object: its convoy.kumodo.io/sync-wave
// annotation, else its argocd.argoproj.io/sync-wave annotation, else 0. A value that
// is not an integer is Unappliable.
func WaveOf(u *unstructured.Unstructured) (int32, error) {
	a := u.GetAnnotations()
	key := v1alpha1.AnnotationSyncWave
	v, ok := a[key]
	if !ok {
		key = v1alpha1.AnnotationArgoSyncWave
		if v, ok = a[key]; !ok {
			return 0, nil
		}
	}
	w, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
	if err != nil {
		return 0, unappliable("%s: annotation %s: %q is not an integer sync wave", describe(u), key, v)
	}
	return int32(w), nil
}

// setWave records wave in the object's convoy annotation when its annotations say
// otherwise, so that WaveOf of the stored manifests gives the same wave.
func setWave(u *unstructured.Unstructured, wave int32) {
	if w, err := WaveOf(u); err == nil && w == wave {
		return
	}
	a := u.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[v1alpha1.AnnotationSyncWave] = strconv.Itoa(int(wave))
	u.SetAnnotations(a)
}
