package controller

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/render/charttest"
)

// testdataChart serves the chart testdata/charts/<name> from a repository of its own,
// and returns the Release option that points at it.
func testdataChart(t *testing.T, name string) releaseOption {
	t.Helper()
	repo := newRawRepo(t, name, "0.1.0", charttest.Package(t, filepath.Join("testdata", "charts", name)))
	return func(r *v1.Release) { r.Spec.Chart = v1.ChartSource{Repository: repo.URL, Name: name} }
}

// An object annotated helm.sh/resource-policy: keep, as Helm's charts mark the
// PersistentVolumeClaims and generated Secrets that must outlive them, is never
// pruned: a render that drops it leaves it in place and out of the ReleaseInventory
// (while a plain object dropped with it is pruned), and a Normal event names it. The
// render that applied it decides, even when the annotation was taken off the object
// on the target (internal/apply's tests prove that the target's annotation alone
// keeps an object too).
func TestKeptObjectIsNotPrunedButLetGo(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.createRelease("web", automatic(), testdataChart(t, "keep"))
	e.waitApplied("web", "True", v1.ReasonApplied)
	want := []string{"ConfigMap/web-dropped", "ConfigMap/web-kept", "ConfigMap/web-plain"}
	if got := e.inventoryNames("web"); !slices.Equal(got, want) {
		t.Fatalf("inventory %v, want %v", got, want)
	}
	e.removeKeepAnnotation("web-kept")

	e.update("web", values(`{"withKept":false}`))
	e.eventually("the render without web-kept applied and pruned", func() (bool, string) {
		got := e.inventoryNames("web")
		return slices.Equal(got, []string{"ConfigMap/web-plain"}), fmt.Sprintf("inventory %v", got)
	})
	if e.configMap("web-dropped") != nil {
		t.Error("web-dropped, dropped by the render without keep, was not pruned")
	}
	if e.configMap("web-kept") == nil {
		t.Error("web-kept, annotated helm.sh/resource-policy: keep, was pruned")
	}
	e.waitEvent("Kept", "ConfigMap "+e.ns+"/web-kept")
}

// Deleting a Release with deletionPolicy Delete leaves its kept objects in place, also
// one whose annotation was taken off on the target: the render that applied it says
// keep, and Helm's uninstall too judges by the release's manifests.
func TestKeptObjectOutlivesItsRelease(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.createRelease("web", automatic(), testdataChart(t, "keep"))
	rel := e.waitApplied("web", "True", v1.ReasonApplied)
	if e.configMap("web-kept") == nil || e.configMap("web-plain") == nil {
		t.Fatal("the chart's ConfigMaps were not applied")
	}
	e.removeKeepAnnotation("web-kept")

	if err := e.client.Delete(e.ctx, rel); err != nil {
		t.Fatal(err)
	}
	e.eventually("the Release gone", func() (bool, string) {
		err := e.client.Get(e.ctx, client.ObjectKeyFromObject(rel), &v1.Release{})
		return client.IgnoreNotFound(err) == nil && err != nil, fmt.Sprintf("get: %v", err)
	})
	for _, name := range []string{"web-plain", "web-dropped"} {
		if e.configMap(name) != nil {
			t.Errorf("%s is left after the Release's deletion", name)
		}
	}
	if e.configMap("web-kept") == nil {
		t.Error("web-kept, which the render annotates helm.sh/resource-policy: keep, was deleted with the Release")
	}
	e.waitEvent("Kept", "ConfigMap "+e.ns+"/web-kept")
}

// removeKeepAnnotation takes helm.sh/resource-policy off the ConfigMap name, as
// someone might by hand.
func (e *env) removeKeepAnnotation(name string) {
	e.t.Helper()
	if err := e.client.Patch(e.ctx, e.configMap(name), client.RawPatch(types.MergePatchType,
		[]byte(`{"metadata":{"annotations":{"helm.sh/resource-policy":null}}}`))); err != nil {
		e.t.Fatal(err)
	}
	if _, ok := e.configMap(name).Annotations["helm.sh/resource-policy"]; ok {
		e.t.Fatalf("%s still has the annotation", name)
	}
}

// waitEvent waits for an event of reason in the test's namespace whose note contains
// text.
func (e *env) waitEvent(reason, text string) {
	e.t.Helper()
	e.eventually(fmt.Sprintf("a %s event naming %s", reason, text), func() (bool, string) {
		var list eventsv1.EventList
		if err := e.client.List(e.ctx, &list, client.InNamespace(e.ns)); err != nil {
			return false, err.Error()
		}
		var notes []string
		for _, ev := range list.Items {
			if ev.Reason == reason && strings.Contains(ev.Note, text) {
				return true, ""
			}
			notes = append(notes, ev.Reason+": "+ev.Note)
		}
		return false, fmt.Sprintf("events: %q", notes)
	})
}
