package validation

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
)

// ReleaseInventory.syncWave (decision 0089): the progress of a render applied wave
// by wave; current counts the applied waves, 1…total.
func TestReleaseInventorySyncWave(t *testing.T) {
	cases := map[string]struct {
		syncWave *convoyv1alpha1.SyncWaveStatus
		wantErr  bool
	}{
		"unset: every wave applied": {},
		"1 of 3":                    {syncWave: &convoyv1alpha1.SyncWaveStatus{Current: 1, Total: 3}},
		"3 of 3":                    {syncWave: &convoyv1alpha1.SyncWaveStatus{Current: 3, Total: 3}},
		"0 of 3":                    {syncWave: &convoyv1alpha1.SyncWaveStatus{Current: 0, Total: 3}, wantErr: true},
		"4 of 3":                    {syncWave: &convoyv1alpha1.SyncWaveStatus{Current: 4, Total: 3}, wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			inv := &convoyv1alpha1.ReleaseInventory{
				ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "podinfo"},
				SyncWave:   tc.syncWave,
			}
			errs := ReleaseInventory(inv)
			if got := len(errs) > 0; got != tc.wantErr {
				t.Fatalf("errors %v, want errors: %t", errs, tc.wantErr)
			}
			if tc.wantErr && errs[0].Field != "syncWave" {
				t.Errorf("error on %q, want syncWave", errs[0].Field)
			}
		})
	}
}
