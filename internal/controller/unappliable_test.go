package controller

import (
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// The most common chart mistake, an unquoted number in a ConfigMap's data, reaches
// kube-apiserver's server-side apply as a 500 ("failed to create typed patch object
// ... expected string"). It is Unappliable, not DeployFailed: the message names the
// object and the field and says to quote the value, and the controller does not retry
// it (no error to the work queue, no requeue), as no retry of the same render can
// succeed.
func TestUnconvertibleValueIsUnappliable(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.createRelease("web", automatic(), testdataChart(t, "unquoted"))
	rel := e.waitApplied("web", "False", v1.ReasonUnappliable)
	msg := appliedMessage(rel)
	for _, want := range []string{"ConfigMap " + e.ns + "/web-settings", ".data.replicas: expected string", "quote the value"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q does not contain %q", msg, want)
		}
	}
	if e.configMap("web-settings") != nil {
		t.Error("the ConfigMap was applied")
	}

	n := e.settle("web")
	e.consistently("no retry of an Unappliable render", 3*time.Second, func() (bool, string) {
		got := e.reconciles("web")
		return got == n, fmt.Sprintf("%d reconciles after %d", got, n)
	})
	if r, _ := e.lastResult("web"); r.err != nil || r.res.RequeueAfter != 0 {
		t.Errorf("last result %+v, want no error and no requeue", r)
	}

	// A new render with a string there applies.
	e.update("web", values(`{"replicas":"three"}`))
	e.waitApplied("web", "True", v1.ReasonApplied)
	if cm := e.configMap("web-settings"); cm == nil || cm.Data["replicas"] != "three" {
		t.Errorf("after the fix: ConfigMap %v, want data.replicas three", cm)
	}
}
