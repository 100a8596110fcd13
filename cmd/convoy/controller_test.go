package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// SP-27: the informer resync is the flag --resync, default 2 minutes.
func TestSP27_ControllerFlagDefaults(t *testing.T) {
	cmd := newControllerCommand()
	got := map[string]string{}
	for _, name := range []string{"resync", "kubeconfig", "metrics-bind-address", "health-probe-bind-address",
		"leader-elect", "shard", "chart-cache-dir", "concurrency", "kube-api-qps", "kube-api-burst", "kube-api-compression", "pprof-bind-address", "startup-timeout"} {
		f := cmd.Flags().Lookup(name)
		if f == nil {
			t.Errorf("flag --%s is missing", name)
			continue
		}
		got[name] = f.DefValue
	}
	want := map[string]string{"resync": "2m0s", "leader-elect": "false", "shard": "", "kubeconfig": "", "concurrency": "16",
		"kube-api-qps": "-1", "kube-api-burst": "300", "kube-api-compression": "false", "pprof-bind-address": "", "startup-timeout": "5m0s"}
	for name := range want {
		if diff := cmp.Diff(want[name], got[name]); diff != "" {
			t.Errorf("--%s default (-want +got):\n%s", name, diff)
		}
	}
}
