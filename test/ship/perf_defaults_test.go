package ship_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

// The chart (and deploy/, generated from it) runs convoy controller and convoy observer
// with the binary's defaults for the flags that size their work (docs/performance.md#defaults: the defaults
// a user gets are the fast ones, the same as `convoy controller`, `convoy observer` and
// `convoy dev`): it sets none of them unless the values' extraArgs do.
func TestChartKeepsPerformanceFlagDefaults(t *testing.T) {
	objs := render(t, nil, "convoy")
	for _, p := range []string{"controller", "observer"} {
		for _, a := range deployment(t, objs, "convoy-"+p).Spec.Template.Spec.Containers[0].Args {
			for _, f := range []string{"--concurrency", "--kube-api-qps", "--kube-api-burst", "--resync"} {
				if a == f || strings.HasPrefix(a, f+"=") {
					t.Errorf("the chart's %s sets %s: the defaults of `convoy %s` and `convoy dev` are no longer what it runs", p, a, p)
				}
			}
		}
	}
}

// Every convoy process of the chart (and deploy/) runs with GOMEMLIMIT, the Go garbage
// collector's soft limit, set to its container's memory limit through the downward API
// (decision 0127: memory at 10,000 Releases), also for each shard's Deployments.
func TestChartSetsGOMEMLIMITFromTheMemoryLimit(t *testing.T) {
	for name, values := range map[string]map[string]any{
		"defaults": nil,
		"shards":   {"shards": []any{"blue"}},
	} {
		t.Run(name, func(t *testing.T) {
			objs := render(t, values, "convoy")
			names := []string{"convoy-apiserver", "convoy-controller", "convoy-observer"}
			if values != nil {
				names = []string{"convoy-apiserver", "convoy-controller-blue", "convoy-observer-blue"}
			}
			for _, d := range names {
				c := deployment(t, objs, d).Spec.Template.Spec.Containers[0]
				var got *corev1.ResourceFieldSelector
				for _, e := range c.Env {
					if e.Name == "GOMEMLIMIT" && e.ValueFrom != nil {
						got = e.ValueFrom.ResourceFieldRef
					}
				}
				want := &corev1.ResourceFieldSelector{ContainerName: c.Name, Resource: "limits.memory"}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("%s: GOMEMLIMIT (-want +got):\n%s", d, diff)
				}
			}
		})
	}
}

// The chart's extraEnv reaches each process's container, after GOMEMLIMIT, also for each
// shard's Deployments: how an operator sets GOGC back to Go's default (the controller and
// the observer collect at 50 unless GOGC is set: docs/operations/scaling.md, "Memory").
func TestChartPassesExtraEnv(t *testing.T) {
	gogc := []any{map[string]any{"name": "GOGC", "value": "100"}}
	objs := render(t, map[string]any{
		"shards":     []any{"blue"},
		"apiserver":  map[string]any{"extraEnv": []any{map[string]any{"name": "GODEBUG", "value": "madvdontneed=1"}}},
		"controller": map[string]any{"extraEnv": gogc},
		"observer":   map[string]any{"extraEnv": gogc},
	}, "convoy")
	for d, want := range map[string]corev1.EnvVar{
		"convoy-apiserver":       {Name: "GODEBUG", Value: "madvdontneed=1"},
		"convoy-controller-blue": {Name: "GOGC", Value: "100"},
		"convoy-observer-blue":   {Name: "GOGC", Value: "100"},
	} {
		env := deployment(t, objs, d).Spec.Template.Spec.Containers[0].Env
		var names []string
		for _, e := range env {
			names = append(names, e.Name)
		}
		if diff := cmp.Diff([]string{"GOMEMLIMIT", want.Name}, names); diff != "" {
			t.Errorf("%s: environment variables (-want +got):\n%s", d, diff)
			continue
		}
		if diff := cmp.Diff(want, env[1]); diff != "" {
			t.Errorf("%s: %s (-want +got):\n%s", d, want.Name, diff)
		}
	}
}
