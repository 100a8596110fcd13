package cli

import (
	"strings"
	"testing"
)

func TestParseMutations(t *testing.T) {
	tests := map[string]struct {
		in      string
		want    int
		wantErr string
	}{
		"yaml list": {in: `
- target: {group: apps, kind: Deployment, name: podinfo}
  patch: |
    spec: {replicas: 5}
- target: {kind: Service, name: podinfo}
  jsonPatch: [{op: add, path: /metadata/labels/tier, value: web}]
`, want: 2},
		"json list":          {in: `[{"target":{"kind":"Service"},"patch":"{}"}]`, want: 1},
		"object with field":  {in: "apiVersion: convoy.kumodo.io/v1alpha1\nkind: Release\nmutations:\n- target: {kind: Service}\n  patch: '{}'\n", want: 1},
		"empty list removes": {in: "[]", want: 0},
		"empty file":         {in: "  \n", wantErr: "empty file"},
		"object without":     {in: "spec: {}", wantErr: "no mutations"},
		"unknown field":      {in: "- target: {kind: Service}\n  pach: x\n", wantErr: "unknown field"},
		"not yaml":           {in: "- [unclosed", wantErr: "not YAML"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := ParseMutations([]byte(tc.in))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != tc.want || got == nil {
				t.Errorf("%d mutations (%v), want %d", len(got), got, tc.want)
			}
		})
	}
}
