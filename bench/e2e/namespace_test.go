package main

import (
	"slices"
	"testing"
)

func TestReleasesSpreadOverNamespacesOfPerNamespace(t *testing.T) {
	for _, tc := range []struct {
		per, n int
		want   []string
	}{
		{per: 1000, n: 1000, want: []string{"bench-e2e"}},
		{per: 1000, n: 1001, want: []string{"bench-e2e", "bench-e2e-1"}},
		{per: 1000, n: 3000, want: []string{"bench-e2e", "bench-e2e-1", "bench-e2e-2"}},
		{per: 2, n: 5, want: []string{"bench-e2e", "bench-e2e-1", "bench-e2e-2"}},
		{per: 0, n: 10000, want: []string{"bench-e2e"}},
	} {
		cfg := config{perNamespace: tc.per}
		if got := cfg.namespaces(tc.n); !slices.Equal(got, tc.want) {
			t.Errorf("per %d, n %d: namespaces %v, want %v", tc.per, tc.n, got, tc.want)
		}
		if tc.per > 0 {
			counts := map[string]int{}
			for i := range tc.n {
				counts[cfg.namespaceOf(i)]++
			}
			for ns, c := range counts {
				if c > tc.per {
					t.Errorf("per %d, n %d: %d Releases in %s", tc.per, tc.n, c, ns)
				}
			}
		}
	}
}
