package controller

import (
	"fmt"
	"path/filepath"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/render/charttest"
)

// TestOCIChartSourceApplied: a Release whose chart comes from an OCI registry (tags
// are versions) is rendered and applied end to end, and a version change picks
// another tag.
func TestOCIChartSourceApplied(t *testing.T) {
	e := newEnv(t, envOptions{})
	reg := charttest.NewOCIRegistry(t)
	dir := filepath.Join("testdata", "charts", "app")
	reg.Push(t, "charts", charttest.Package(t, dir, charttest.Version("0.1.0")))
	reg.Push(t, "charts", charttest.Package(t, dir, charttest.Version("0.2.0"), charttest.Value("greeting", "hello from 0.2.0")))
	fromOCI := func(version string) releaseOption {
		return func(r *v1.Release) {
			r.Spec.Chart = v1.ChartSource{Repository: reg.Repository("charts"), Name: "app", Version: version}
		}
	}

	e.createRelease("web", automatic(), fromOCI("~0.1.0"))
	rel := e.waitApplied("web", "True", v1.ReasonApplied)
	if rel.Status.Render == nil || rel.Status.Render.ChartVersion != "0.1.0" {
		t.Fatalf("status.render = %+v, want chart version 0.1.0 (the tag that meets ~0.1.0)", rel.Status.Render)
	}
	if rel.Status.LastSuccessful == nil || rel.Status.LastSuccessful.RenderRef != rel.Status.Render.Ref {
		t.Errorf("lastSuccessful = %+v, want the current render", rel.Status.LastSuccessful)
	}
	if cm := e.configMap("web-config"); cm == nil || cm.Data["greeting"] != "hello" {
		t.Fatalf("ConfigMap web-config = %+v, want it applied from the OCI chart", cm)
	}
	inv := &v1.ReleaseInventory{}
	if err := e.client.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: "web"}, inv); err != nil {
		t.Fatalf("get the ReleaseInventory: %v", err)
	}
	if len(inv.Objects) != 1 || inv.Objects[0].Kind != "ConfigMap" || inv.Objects[0].Name != "web-config" {
		t.Errorf("inventory objects %+v, want web-config", inv.Objects)
	}
	if reg.BlobGets() == 0 {
		t.Error("the registry served no blob: the chart did not come from it")
	}

	// No constraint: the latest tag.
	e.update("web", fromOCI(""))
	e.eventually("chart 0.2.0 applied", func() (bool, string) {
		rel := e.release("web")
		cm := e.configMap("web-config")
		ok := rel.Status.LastSuccessful != nil && rel.Status.LastSuccessful.ChartVersion == "0.2.0" &&
			cm != nil && cm.Data["greeting"] == "hello from 0.2.0"
		return ok, fmt.Sprintf("lastSuccessful %+v, render %+v, ConfigMap %+v, applied: %s",
			rel.Status.LastSuccessful, rel.Status.Render, cm, appliedMessage(rel))
	})
}
