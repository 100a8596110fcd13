package controller

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/policy"
)

// Decision 0160 (the race left by decision 0073 and SP-03): between the apply of a sync wave and the
// observer's next assessment, the observer's data still shows the old objects of that
// wave Healthy. The sync waves count the health only when the observer assessed the
// inventory's generation (status.observedGeneration).
func TestCurrentHealth(t *testing.T) {
	h := &policy.Health{RenderRef: "sha256:r1", State: v1.HealthHealthy}
	inv := func(generation, observed int64) *v1.ReleaseInventory {
		return &v1.ReleaseInventory{
			ObjectMeta: metav1.ObjectMeta{Generation: generation},
			Status:     v1.ReleaseInventoryStatus{RenderRef: "sha256:r1", ObservedGeneration: observed},
		}
	}
	cases := map[string]struct {
		inv  *v1.ReleaseInventory
		want *policy.Health
	}{
		"assessed at the inventory's generation":          {inv: inv(4, 4), want: h},
		"a wave applied since (the generation moved on)":  {inv: inv(5, 4), want: nil},
		"an observer that does not record the generation": {inv: inv(5, 0), want: h},
		"no inventory": {inv: nil, want: h},
		"the cache's inventory older than what the observer read": {inv: inv(4, 5), want: h},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, currentHealth(tc.inv, h)); diff != "" {
				t.Errorf("currentHealth (-want +got):\n%s", diff)
			}
		})
	}
}
