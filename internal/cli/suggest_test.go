package cli

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLevenshtein(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"podinfo", "podinfo", 0},
		{"podinfo", "podinf", 1},
		{"podinfo", "podinfoo", 1},
		{"podinfo", "pofinfo", 1},
		{"podinfo", "opdinfo", 2},
		{"redis", "podinfo", 5},
		{"", "abc", 3},
		{"häkchen", "hakchen", 1},
	}
	for _, tc := range tests {
		if got := Levenshtein(tc.a, tc.b); got != tc.want {
			t.Errorf("Levenshtein(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
		if got := Levenshtein(tc.b, tc.a); got != tc.want {
			t.Errorf("Levenshtein(%q, %q) = %d, want %d (symmetry)", tc.b, tc.a, got, tc.want)
		}
	}
}

func TestDidYouMean(t *testing.T) {
	names := []string{"podinfo", "podinfo-canary", "redis", "redis-ha", "postgres", "web"}
	tests := map[string]struct {
		name string
		want []string
	}{
		"one typo":             {name: "podinf", want: []string{"podinfo", "podinfo-canary"}},
		"transposition":        {name: "opdinfo", want: []string{"podinfo"}},
		"prefix counts":        {name: "redi", want: []string{"redis", "redis-ha"}},
		"nothing close":        {name: "kafka", want: []string{}},
		"short name no prefix": {name: "we", want: []string{"web"}},
		"exact is not offered": {name: "web", want: []string{}},
		"at most three":        {name: "x", want: []string{}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, DidYouMean(tc.name, names)); diff != "" {
				t.Errorf("DidYouMean(%q) (-want +got):\n%s", tc.name, diff)
			}
		})
	}
}
