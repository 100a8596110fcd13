package store

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// The Render metadata index keys each Render by the Release its label names.
func TestIndexRenderByRelease(t *testing.T) {
	for name, tc := range map[string]struct {
		labels map[string]string
		want   []string
	}{
		"a Render of a Release": {map[string]string{v1.LabelRelease: "podinfo"}, []string{"podinfo"}},
		"no release label":      {map[string]string{"app": "x"}, nil},
		"an empty label":        {map[string]string{v1.LabelRelease: ""}, nil},
	} {
		t.Run(name, func(t *testing.T) {
			m := RenderMetadata()
			m.ObjectMeta = metav1.ObjectMeta{Namespace: "team-a", Name: "r", Labels: tc.labels}
			if diff := cmp.Diff(tc.want, indexRenderByRelease(m)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
