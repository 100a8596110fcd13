package main

import "testing"

func TestResourceOfKeyBelowThePrefix(t *testing.T) {
	for key, want := range map[string]string{
		"convoy.kumodo.io/renders/team-a/web-1-abc": "convoy.kumodo.io/renders",
		"convoy.kumodo.io/releases/team-a/web-1":    "convoy.kumodo.io/releases",
		"releases/team-a/web-1":                     "releases",
		"clusters/prod-1":                           "clusters",
		"compact_rev_key":                           "compact_rev_key",
	} {
		if got := resourceOf(key); got != want {
			t.Errorf("resourceOf(%q) = %q, want %q", key, got, want)
		}
	}
}
