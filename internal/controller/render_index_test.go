package controller

import (
	"strings"
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
			m := renderMetadata()
			m.ObjectMeta = metav1.ObjectMeta{Namespace: "team-a", Name: "r", Labels: tc.labels}
			if diff := cmp.Diff(tc.want, indexRenderByRelease(m)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// A reconcile reads its Release's Renders through the index (decision 0130: a label
// selector in a cache List filtered every Render of the namespace at each reconcile,
// O(N²) a round): the history of each Release holds its own Renders, not those of a
// Release whose name it prefixes. The Render in memory is forgotten first, so that
// what the history holds comes from the index.
func TestTheHistoryOfAReleaseReadsItsRendersByIndex(t *testing.T) {
	e := newEnv(t, envOptions{})
	for _, name := range []string{"web", "web-2", "api"} {
		e.createRelease(name)
		e.waitApplied(name, "False", v1.ReasonWaitingForSync)
	}
	for _, name := range []string{"web", "web-2", "api"} {
		e.eventually("the history of "+name, func() (bool, string) {
			rel := e.release(name)
			e.reconciler.renders.forget(releaseKey(rel))
			h, err := e.reconciler.history(e.ctx, rel)
			if err != nil {
				return false, err.Error()
			}
			var got []string
			for _, c := range h.cands {
				got = append(got, c.name)
			}
			// "web-2-…" starts with "web-" too: it is web-2's, not web's.
			otherRelease := name == "web" && len(got) == 1 && strings.HasPrefix(got[0], "web-2-")
			ok := len(got) == 1 && strings.HasPrefix(got[0], name+"-") && !otherRelease
			return ok, "candidates: " + strings.Join(got, ", ")
		})
	}
}
