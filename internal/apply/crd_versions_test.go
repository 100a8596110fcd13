package apply

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"kumodo.io/convoy/internal/testenv"
)

// withUnservedVersion is definition with a version v1alpha1 kept with served: false
// before its v1, as charts keep an old version so that stored objects still convert.
func withUnservedVersion(definition map[string]any) map[string]any {
	spec := definition["spec"].(map[string]any)
	v1 := spec["versions"].([]any)[0].(map[string]any)
	old := map[string]any{"name": "v1alpha1", "served": false, "storage": false, "schema": v1["schema"]}
	spec["versions"] = []any{old, v1}
	return definition
}

// The kinds the apply waits for and the dry run looks up are those of the served
// versions: a version with served: false never appears in discovery.
func TestCRDKindsAreTheServedVersions(t *testing.T) {
	definition := crd("widgets.example.com", "Widget")
	definition.Object = withUnservedVersion(definition.Object)
	got := crdKinds([]*planned{{Object: Object{Object: definition}, entry: Object{Object: definition}.Entry()}})
	want := map[schema.GroupVersionKind]bool{{Group: "widgets.example.com", Version: "v1", Kind: "Widget"}: true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("crdKinds (-want +got):\n%s", diff)
	}
}

// A CRD that keeps an unserved version applies with its custom resource in one go:
// the wave's wait for its kinds to be served waits for the served version only (it
// ran to WaitTimeout, then failed the apply with DeployFailed).
func TestACRDWithAnUnservedVersionIsServedAtOnce(t *testing.T) {
	e := integration(t)
	group := testenv.DNSName(t.Name()) + ".example.com"
	definition := crd(group, "Widget")
	definition.Object = withUnservedVersion(definition.Object)
	widget := obj(group+"/v1", "Widget", e.ns, "w")
	widget.Object["spec"] = map[string]any{"size": int64(1)}
	objects := []Object{{Wave: 0, Object: definition}, {Wave: 0, Object: widget}}
	plan, err := e.applier.DryRun(e.ctx, objects, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range plan.Waves() {
		if _, err := e.applier.ApplyWave(e.ctx, plan, w); err != nil {
			t.Fatalf("apply of wave %d: %v", w, err)
		}
	}
	e.mustExist(t, widget)
}
