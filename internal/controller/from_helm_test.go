package controller

import (
	"testing"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// A Release that took over a Helm release (annotation convoy.kumodo.io/helm-release)
// upgrades from its first apply: the chart's pre-upgrade and post-upgrade hooks run,
// not its install hooks (a database Helm initialised is not initialised again), and
// the templates see .Release.IsUpgrade.
func TestFirstApplyOfAReleaseFromHelmIsAnUpgrade(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.createRelease("iuh", automatic(), chartName("install-upgrade-hooks"), annotation(v1.AnnotationHelmRelease, e.ns+"/iuh.v4"))

	rel := e.waitHooksWaiting("iuh", "Jobs migrate-db.")
	first := renderRefOf(rel)
	if job := e.chartJob("init-db", first); job != nil {
		t.Error("the pre-install Job runs on the first apply of a Release from Helm")
	}
	if s := e.secret("iuh-initial-password"); s != nil {
		t.Errorf("the pre-install Secret was applied on the first apply of a Release from Helm: %v", s.Name)
	}
	e.waitChartJobComplete("migrate-db", first)
	e.sync("iuh", false)
	e.waitHooksWaiting("iuh", "Jobs notify.")
	if job := e.chartJob("seed-data", first); job != nil {
		t.Error("the post-install Job runs on the first apply of a Release from Helm")
	}
	e.waitChartJobComplete("notify", first)
	e.sync("iuh", false)
	e.waitApplied("iuh", "True", v1.ReasonApplied)

	e.createRelease("gen", automatic(), chartName("generated"), annotation(v1.AnnotationHelmRelease, e.ns+"/gen.v1"))
	e.waitApplied("gen", "True", v1.ReasonApplied)
	if cm := e.configMap("gen-release"); cm == nil || cm.Data["isUpgrade"] != "true" || cm.Data["isInstall"] != "false" {
		t.Errorf("ConfigMap gen-release = %v, want isUpgrade true and isInstall false", cm)
	}
}
