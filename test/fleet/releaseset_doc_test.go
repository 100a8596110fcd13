package fleet_test

import (
	"os"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/dev"
)

// docs/fleets.md's "Try it on a local fleet" names the labels that `convoy dev
// --clusters 3` puts on its Clusters, and examples/releaseset.yaml stages by them:
// both must be what dev does. With dev's labels, the example's set selects dev-1 …
// dev-3 and its stage canary takes dev-1 alone, so that the walk-through prints what
// the page shows (canary 1 Cluster, main 2).
func TestReleaseSetWalkThroughMatchesTheLocalFleet(t *testing.T) {
	page, err := os.ReadFile("../../docs/fleets.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(page), "## Try it on a local fleet")
	if !ok {
		t.Fatal("docs/fleets.md has no section \"Try it on a local fleet\"")
	}
	intro, _, _ := strings.Cut(section, "```")
	intro = strings.Join(strings.Fields(intro), " ")
	for i := 1; i <= 3; i++ {
		for k, v := range dev.ClusterLabels(i) {
			if !strings.Contains(intro, "`"+k+"=") || !strings.Contains(intro, v) {
				t.Errorf("docs/fleets.md's walk-through does not name the label %s=%s of %s: %q", k, v, dev.ClusterName(i), intro)
			}
		}
		if !strings.Contains(intro, "`"+dev.ClusterName(i)+"`") {
			t.Errorf("docs/fleets.md's walk-through does not name the Cluster %s", dev.ClusterName(i))
		}
	}

	raw, err := os.ReadFile("../../examples/releaseset.yaml")
	if err != nil {
		t.Fatal(err)
	}
	set := &v1.ReleaseSet{}
	if err := yaml.UnmarshalStrict(raw, set); err != nil {
		t.Fatalf("examples/releaseset.yaml: %v", err)
	}
	selects := func(s *metav1.LabelSelector, i int) bool {
		t.Helper()
		if s == nil {
			return true
		}
		sel, err := metav1.LabelSelectorAsSelector(s)
		if err != nil {
			t.Fatal(err)
		}
		return sel.Matches(labels.Set(dev.ClusterLabels(i)))
	}
	if len(set.Spec.Strategy.Stages) != 2 {
		t.Fatalf("examples/releaseset.yaml has stages %+v, the walk-through shows canary and main", set.Spec.Strategy.Stages)
	}
	canary, main := set.Spec.Strategy.Stages[0], set.Spec.Strategy.Stages[1]
	for i := 1; i <= 3; i++ {
		if !selects(set.Spec.ClusterSelector, i) {
			t.Errorf("examples/releaseset.yaml's clusterSelector does not select %s (labels %v)", dev.ClusterName(i), dev.ClusterLabels(i))
		}
		if got, want := selects(canary.ClusterSelector, i), i == 1; got != want {
			t.Errorf("examples/releaseset.yaml's stage %s takes %s: %t, want %t", canary.Name, dev.ClusterName(i), got, want)
		}
	}
	if canary.Name != "canary" || main.Name != "main" || main.ClusterSelector != nil || main.Approval != v1.ApprovalManual {
		t.Errorf("examples/releaseset.yaml's stages %+v, the walk-through shows canary, then main (Manual, every Cluster left)", set.Spec.Strategy.Stages)
	}
}
