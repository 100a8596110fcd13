package releaseset

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

func TestSelect(t *testing.T) {
	byRing := func(name, r string) v1.Stage {
		return v1.Stage{Name: name, ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"ring": r}}}
	}
	all := func(name string) v1.Stage { return v1.Stage{Name: name} }
	clusters := []v1.Cluster{cluster("d", ring("b")), cluster("a", ring("a")), cluster("c"), cluster("b", ring("a")),
		cluster("x", env("dev"), ring("a"))}
	cases := map[string]struct {
		set      *v1.ReleaseSet
		nsLabels map[string]string
		clusters []v1.Cluster
		want     map[string][]string // stage → Clusters, in stage order as "stage: a b"
		order    []string
		skipped  []v1.SkippedCluster
	}{
		"no stages: one stage rest with every selected Cluster": {
			set: testSet("s"), clusters: clusters,
			order: []string{"rest"}, want: map[string][]string{"rest": {"a", "b", "c", "d"}},
		},
		"a Cluster is in the first stage whose selector matches; the implicit stage rest takes the others": {
			set: testSet("s", stages(byRing("first", "a"), byRing("second", "b"))), clusters: clusters,
			order: []string{"first", "second", "rest"},
			want:  map[string][]string{"first": {"a", "b"}, "second": {"d"}, "rest": {"c"}},
		},
		"a stage without selector takes the rest, and no implicit stage follows": {
			set: testSet("s", stages(byRing("first", "a"), all("others"))), clusters: clusters,
			order: []string{"first", "others"}, want: map[string][]string{"first": {"a", "b"}, "others": {"c", "d"}},
		},
		"an earlier stage wins over a later one that also matches": {
			set: testSet("s", stages(all("everything"), byRing("never", "a"))), clusters: clusters,
			order: []string{"everything", "never", "rest"}, want: map[string][]string{"everything": {"a", "b", "c", "d"}},
		},
		"an empty selector selects nothing": {
			set: testSet("s", func(s *v1.ReleaseSet) { s.Spec.ClusterSelector = &metav1.LabelSelector{} }), clusters: clusters,
			order: []string{"rest"}, want: map[string][]string{},
		},
		"an unset selector selects nothing": {
			set: testSet("s", func(s *v1.ReleaseSet) { s.Spec.ClusterSelector = nil }), clusters: clusters,
			order: []string{"rest"}, want: map[string][]string{},
		},
		"a Cluster whose namespaceSelector does not admit the namespace is skipped": {
			set: testSet("s"), nsLabels: map[string]string{"team": "a"},
			clusters: []v1.Cluster{cluster("a", admitting(map[string]string{"team": "a"})), cluster("b", admitting(map[string]string{"team": "b"}))},
			order:    []string{"rest"}, want: map[string][]string{"rest": {"a"}},
			skipped: []v1.SkippedCluster{{Name: "b", Reason: v1.ReasonNamespaceNotAdmitted,
				Message: `Cluster "b" does not admit Releases of namespace "team-a" (namespaceSelector team=b): label the namespace to match, or change the Cluster's namespaceSelector`}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			sel, err := Select(tc.set, tc.nsLabels, tc.clusters)
			if err != nil {
				t.Fatal(err)
			}
			var order []string
			got := map[string][]string{}
			for _, s := range sel.Stages {
				order = append(order, s.Stage.Name)
				if len(s.Clusters) > 0 {
					got[s.Stage.Name] = s.Clusters
				}
			}
			if diff := cmp.Diff(tc.order, order); diff != "" {
				t.Errorf("stages (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Clusters of each stage (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.skipped, sel.Skipped); diff != "" {
				t.Errorf("skipped (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSelectRejectsAnInvalidSelector(t *testing.T) {
	bad := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "ring", Operator: "Near"}}}
	for name, set := range map[string]*v1.ReleaseSet{
		"spec.clusterSelector":    testSet("s", func(s *v1.ReleaseSet) { s.Spec.ClusterSelector = bad }),
		"spec.strategy.stages[0]": testSet("s", stages(v1.Stage{Name: "canary", ClusterSelector: bad})),
	} {
		_, err := Select(set, nil, []v1.Cluster{cluster("a")})
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("Select with an invalid %s: error %v, want one naming it", name, err)
		}
	}
}

func TestMaxParallel(t *testing.T) {
	cases := map[string]struct {
		v    *intstr.IntOrString
		n    int
		want int
	}{
		"unset: every Release of the stage": {n: 5, want: 5},
		"unset, empty stage: 1":             {n: 0, want: 1},
		"a number":                          {v: ptr.To(intstr.FromInt32(2)), n: 5, want: 2},
		"0: at least 1":                     {v: ptr.To(intstr.FromInt32(0)), n: 5, want: 1},
		"a percentage, rounded up":          {v: ptr.To(intstr.FromString("50%")), n: 3, want: 2},
		"a small percentage: at least 1":    {v: ptr.To(intstr.FromString("1%")), n: 3, want: 1},
		"100%":                              {v: ptr.To(intstr.FromString("100%")), n: 7, want: 7},
		"not a number nor a percentage: 1":  {v: ptr.To(intstr.FromString("many")), n: 7, want: 1},
	}
	for name, tc := range cases {
		if got := MaxParallel(tc.v, tc.n); got != tc.want {
			t.Errorf("%s: MaxParallel(%v, %d) = %d, want %d", name, tc.v, tc.n, got, tc.want)
		}
	}
}
