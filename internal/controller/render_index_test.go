package controller

import (
	"strings"
	"testing"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

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
