package dev

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The local Clusters carry labels to select and stage by: dev-1 is the canary ring,
// the others main; zones round-robin as the simulated nodes'.
func TestClusterLabels(t *testing.T) {
	cases := map[int]map[string]string{
		1: {LabelDev: "true", LabelEnv: "dev", LabelRing: RingCanary, LabelRegion: "local", LabelZone: "local-a"},
		2: {LabelDev: "true", LabelEnv: "dev", LabelRing: RingMain, LabelRegion: "local", LabelZone: "local-b"},
		3: {LabelDev: "true", LabelEnv: "dev", LabelRing: RingMain, LabelRegion: "local", LabelZone: "local-c"},
		4: {LabelDev: "true", LabelEnv: "dev", LabelRing: RingMain, LabelRegion: "local", LabelZone: "local-a"},
	}
	for i, want := range cases {
		if diff := cmp.Diff(want, ClusterLabels(i)); diff != "" {
			t.Errorf("ClusterLabels(%d) (-want +got):\n%s", i, diff)
		}
	}
	if got := ClusterName(10); got != "dev-10" {
		t.Errorf("ClusterName(10) = %q, want dev-10", got)
	}
	if got := KubeconfigSecretName("dev-2"); got != "dev-2-kubeconfig" {
		t.Errorf("KubeconfigSecretName(dev-2) = %q", got)
	}
}

// --clusters takes 0 (no local clusters) to MaxClusters; anything else is refused with the range.
func TestValidateClusters(t *testing.T) {
	cases := map[string]struct {
		n       int
		wantErr bool
	}{
		"none":         {n: 0},
		"one":          {n: 1},
		"the most":     {n: MaxClusters},
		"negative":     {n: -1, wantErr: true},
		"beyond bound": {n: MaxClusters + 1, wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := validateClusters(tc.n)
			if (err != nil) != tc.wantErr {
				t.Fatalf("validateClusters(%d) = %v, want error %v", tc.n, err, tc.wantErr)
			}
			if err != nil && !strings.Contains(err.Error(), "want 0 to 20") {
				t.Errorf("the error does not give the range: %v", err)
			}
		})
	}
}
