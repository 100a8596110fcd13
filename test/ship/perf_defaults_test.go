package ship_test

import (
	"strings"
	"testing"
)

// The chart (and deploy/, generated from it) runs convoy controller and convoy observer
// with the binary's defaults for the flags that size their work (issue 15: the defaults
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
