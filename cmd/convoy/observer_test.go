package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The observer's flags mirror the controller's, on their own ports.
func TestObserverFlagDefaults(t *testing.T) {
	cmd := newObserverCommand()
	want := map[string]string{
		"kubeconfig":                "",
		"resync":                    "10m0s",
		"metrics-bind-address":      ":8082",
		"health-probe-bind-address": ":8083",
		"leader-elect":              "false",
		"leader-election-namespace": "convoy-system",
		"shard":                     "",
		"concurrency":               "4",
		"kube-api-qps":              "-1",
		"kube-api-burst":            "300",
		"kube-api-compression":      "false",
		"pprof-bind-address":        "",
		"startup-timeout":           "5m0s",
	}
	got := map[string]string{}
	for name := range want {
		f := cmd.Flags().Lookup(name)
		if f == nil {
			t.Errorf("flag --%s is missing", name)
			continue
		}
		got[name] = f.DefValue
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("flag defaults (-want +got):\n%s", diff)
	}
}
