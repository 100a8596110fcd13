package render

import (
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/manifest"
)

// WaveOf returns the sync wave of an object (manifest.WaveOf); a value that is not
// an integer is Unappliable.
func WaveOf(u *unstructured.Unstructured) (int32, error) {
	w, err := manifest.WaveOf(u)
	if err != nil {
		return 0, unappliable("%s: %w", describe(u), err)
	}
	return w, nil
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
