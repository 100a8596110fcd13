package fleet_test

import (
	"fmt"
	"maps"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/testenv"
)

// spec.clusterOverrides on a real fleet: each target control plane runs the values of
// its own Cluster (the template's, then the overrides that select it, with the
// Cluster's name and region label in them); a changed override is a new revision that
// rolls out stage by stage, the canary first; and a set at rest writes nothing.
func TestClusterOverridesReachEachCluster(t *testing.T) {
	f := startRSFleet(t,
		map[string]string{"fleet": "on", "ring": "canary", "region": "eu"},
		map[string]string{"fleet": "on", "ring": "main", "region": "us"},
		map[string]string{"fleet": "on", "ring": "main", "region": "eu"},
	)
	const set = "web"
	canary, two, three := f.release(set, 1), f.release(set, 2), f.release(set, 3)
	order := f.watchStageOrder(set, func(name string) int {
		if name == canary {
			return 0
		}
		return 1
	})
	s := f.set(set, map[string]string{"fleet": "on"}, `{"value":"template"}`,
		v1.Stage{Name: "canary", ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"ring": "canary"}},
			MaxParallel: rsPtr(intstr.FromInt32(1))},
		v1.Stage{Name: "rest"})
	s.Spec.ClusterOverrides = overridesWith("v1")
	f.create(s)

	// Each Cluster's values: the first override for all, the second over it in us.
	rev1 := f.waitPhases(set, "", "canary Complete, rest Complete").Status.Revision
	want := func(v string) map[int]string {
		return map[int]string{
			1: fmt.Sprintf("%s.eu.%s", f.clusters[0], v),
			2: fmt.Sprintf("us:%s", f.clusters[1]),
			3: fmt.Sprintf("%s.eu.%s", f.clusters[2], v),
		}
	}
	for i, v := range want("v1") {
		f.waitDeployed(i, f.release(set, i), v)
	}

	// Steady state: neither the set's status nor what the set owns on its Releases is
	// written over several resyncs.
	before := f.setWrites(set)
	testenv.Consistently(t, f.ctx, "no write of the set nor of its Releases at rest", 4*rsResync, func() (bool, string) {
		now := f.setWrites(set)
		return maps.Equal(before, now), fmt.Sprintf("%v, then %v", before, now)
	})

	// A changed override: a new revision, the canary first, then the rest.
	testenv.Eventually(t, f.ctx, "update of the overrides", 30*time.Second, func() (bool, string) {
		s := f.getSet(set)
		s.Spec.ClusterOverrides = overridesWith("v2")
		if err := f.c.Update(f.ctx, s); err != nil {
			return false, err.Error()
		}
		return true, ""
	})
	rev2 := f.waitPhases(set, rev1, "canary Complete, rest Complete").Status.Revision
	for i, v := range want("v2") {
		f.waitDeployed(i, f.release(set, i), v)
	}
	order.check(t, canary, rev1, rev2)
	order.check(t, two, rev1, rev2)
	order.check(t, three, rev1, rev2)
}

// overridesWith are the test's overrides: for every Cluster a value of its name,
// region label and version; for those in us another value, merged over it.
func overridesWith(version string) []v1.ClusterOverride {
	return []v1.ClusterOverride{
		{ClusterSelector: &metav1.LabelSelector{},
			Values: &runtime.RawExtension{Raw: []byte(`{"value":"$(cluster.name).$(cluster.labels['region']).` + version + `"}`)}},
		{ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"region": "us"}},
			Values: &runtime.RawExtension{Raw: []byte(`{"value":"us:$(cluster.name)"}`)}},
	}
}

// setWrites is what a write of ReleaseSet name would change: its resourceVersion, and
// of each of its Releases what the set owns (generation for the spec, labels,
// annotations, owners).
func (f *rsFleet) setWrites(name string) map[string]string {
	f.t.Helper()
	out := map[string]string{"ReleaseSet " + name: f.getSet(name).ResourceVersion}
	for n, r := range f.releases(name) {
		var owners []string
		for _, o := range r.OwnerReferences {
			owners = append(owners, fmt.Sprintf("%s/%s %s controller=%t", o.Kind, o.Name, o.UID, ptr.Deref(o.Controller, false)))
		}
		out["Release "+n] = fmt.Sprintf("generation %d, labels %v, annotations %v, owners %v", r.Generation, r.Labels, r.Annotations, owners)
	}
	return out
}
