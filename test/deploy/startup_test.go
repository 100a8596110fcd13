package deploy_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"kumodo.io/convoy/internal/startup"
)

// startupMargin is what the startupProbe allows beyond --startup-timeout: the caches'
// first sync once the wait is over.
const startupMargin = time.Minute

// Decision 0152: convoy's processes wait at start for kube-apiserver for up to
// --startup-timeout before they serve their probes. Each Deployment of deploy/ (the
// chart's render) has a startupProbe on its liveness endpoint that allows that bound and
// a minute more, so that the kubelet does not restart a process that waits on purpose
// (liveness begins only once the startupProbe passed), and no --startup-timeout longer
// than the default.
func TestStartupProbeCoversTheStartupWait(t *testing.T) {
	for _, process := range []string{"apiserver", "controller", "observer"} {
		t.Run(process, func(t *testing.T) {
			var d appsv1.Deployment
			typed(t, find(t, readObjects(t, filepath.Join(deployDir(t), process, "deployment.yaml")), "Deployment", "convoy-"+process), &d)
			c := d.Spec.Template.Spec.Containers[0]
			checkStartupProbe(t, c)
		})
	}
}

func checkStartupProbe(t *testing.T, c corev1.Container) {
	t.Helper()
	live, start := c.LivenessProbe, c.StartupProbe
	if live == nil || live.HTTPGet == nil {
		t.Fatalf("no HTTP liveness probe: %+v", live)
	}
	if start == nil || start.HTTPGet == nil || start.HTTPGet.Path != live.HTTPGet.Path || start.HTTPGet.Port != live.HTTPGet.Port ||
		start.HTTPGet.Scheme != live.HTTPGet.Scheme {
		t.Fatalf("startupProbe %+v, want a GET of the liveness probe's %s on %s", start, live.HTTPGet.Path, live.HTTPGet.Port.String())
	}
	period, failures := start.PeriodSeconds, start.FailureThreshold
	if period == 0 {
		period = 10 // Kubernetes' default
	}
	if failures == 0 {
		failures = 3
	}
	allowed := time.Duration(start.InitialDelaySeconds+period*failures) * time.Second
	if want := startup.DefaultTimeout + startupMargin; allowed < want {
		t.Errorf("the startupProbe allows %s (%d × %d s), want at least --startup-timeout's %s and %s more",
			allowed, failures, period, startup.DefaultTimeout, startupMargin)
	}
	for _, a := range c.Args {
		if v, ok := strings.CutPrefix(a, "--"+startup.FlagName+"="); ok {
			if d, err := time.ParseDuration(v); err != nil || d > startup.DefaultTimeout {
				t.Errorf("%s: a bound the startupProbe does not cover", a)
			}
		}
	}
}
