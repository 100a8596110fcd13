package main

import (
	"runtime/debug"
	"testing"
)

// The controller and the observer collect at GOGC 50 unless the environment says
// otherwise (defaultGCPercent).
func TestGCPercentDefaultsTo50UnlessGOGCIsSet(t *testing.T) {
	before := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(before) })
	for _, tc := range []struct {
		name string
		gogc string
		set  bool
		want int
	}{
		{name: "GOGC unset", gogc: "", set: true, want: 50},
		{name: "GOGC=200 (the runtime applied it)", gogc: "200", set: false, want: 100},
		{name: "GOGC=off", gogc: "off", set: false, want: 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			debug.SetGCPercent(100)
			set := setGCPercent(func(k string) string {
				if k == "GOGC" {
					return tc.gogc
				}
				return ""
			})
			if got := debug.SetGCPercent(100); set != tc.set || got != tc.want {
				t.Errorf("setGCPercent: set %v, GC percent %d; want set %v, %d", set, got, tc.set, tc.want)
			}
		})
	}
}
