package controller

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"kumodo.io/convoy/internal/render"
	"kumodo.io/convoy/internal/targets"
)

func discoveryServing(kinds ...string) *targets.Discovery {
	list := &metav1.APIResourceList{GroupVersion: "apps/v1"}
	for _, k := range kinds {
		list.APIResources = append(list.APIResources, metav1.APIResource{Name: k + "s", Kind: k, Namespaced: true})
	}
	return &targets.Discovery{KubeVersion: "v1.37.2", Resources: []*metav1.APIResourceList{list}}
}

// TestCapabilitiesAreBuiltOncePerDiscovery: the Capabilities of a cluster's discovery
// are built at its first reconcile and shared while the Target returns the same
// *Discovery; a new read (another *Discovery) or another cluster builds its own, equal
// to what CapabilitiesFromDiscovery gives.
func TestCapabilitiesAreBuiltOncePerDiscovery(t *testing.T) {
	m := &capabilitiesMemo{}
	d1 := discoveryServing("Deployment")
	first := m.of("", d1)
	if diff := cmp.Diff(render.CapabilitiesFromDiscovery(d1.KubeVersion, d1.Resources), first); diff != "" {
		t.Fatalf("Capabilities (-want +got):\n%s", diff)
	}
	if again := m.of("", d1); &again.APIVersions[0] != &first.APIVersions[0] {
		t.Error("the same discovery built its Capabilities again")
	}

	d2 := discoveryServing("Deployment", "StatefulSet") // the Target read its API again
	second := m.of("", d2)
	if diff := cmp.Diff(render.CapabilitiesFromDiscovery(d2.KubeVersion, d2.Resources), second); diff != "" {
		t.Fatalf("after a new read (-want +got):\n%s", diff)
	}

	other := discoveryServing("DaemonSet")
	if got := m.of("remote", other); !hasVersion(got, "apps/v1/DaemonSet") || hasVersion(got, "apps/v1/StatefulSet") {
		t.Errorf("cluster remote got %v", got.APIVersions)
	}
	if again := m.of("", d2); &again.APIVersions[0] != &second.APIVersions[0] {
		t.Error("another cluster's discovery dropped the host's Capabilities")
	}
}

func hasVersion(c render.Capabilities, v string) bool {
	for _, s := range c.APIVersions {
		if s == v {
			return true
		}
	}
	return false
}
