package controller

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A reconcile of a Release of cluster wave 0 (and each status change of one) reads only
// the Releases of another wave on its cluster from the cache, not every Release of the
// cluster: listing and copying them all at each reconcile made the controller's work and
// memory grow with the square of the Releases (decision 0112). A Release of another wave
// still sees every Release of its cluster.
func TestSameClusterOfWaveZeroReadsOnlyOtherWaves(t *testing.T) {
	e := newEnv(t, envOptions{})
	for name, wave := range map[string]int32{"zero-a": 0, "zero-b": 0, "zero-c": 0, "lower": -1, "higher": 2} {
		e.createRelease(name, clusterWave(wave))
	}
	e.createRelease("elsewhere", cluster("other"), clusterWave(3))
	names := func(of string) []string {
		others, err := sameCluster(e.ctx, e.reconciler.waves, e.release(of))
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, o := range others {
			out = append(out, o.Name)
		}
		slices.Sort(out)
		return out
	}
	want := map[string][]string{
		"zero-a": {"higher", "lower"},
		"higher": {"higher", "lower", "zero-a", "zero-b", "zero-c"},
		"lower":  {"higher", "lower", "zero-a", "zero-b", "zero-c"},
	}
	e.eventually("the cache to hold the six Releases", func() (bool, string) {
		got := map[string][]string{}
		for of := range want {
			got[of] = names(of)
		}
		diff := cmp.Diff(want, got)
		return diff == "", "Releases read from the cache (-want +got):\n" + diff
	})
}
