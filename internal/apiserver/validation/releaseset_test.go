package validation

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
)

func validReleaseSet() *convoyv1alpha1.ReleaseSet {
	return &convoyv1alpha1.ReleaseSet{
		ObjectMeta: metav1.ObjectMeta{Name: "podinfo", Namespace: "team-a"},
		Spec: convoyv1alpha1.ReleaseSetSpec{
			ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}},
			Template: convoyv1alpha1.ReleaseTemplate{
				Metadata: convoyv1alpha1.ReleaseTemplateMetadata{Labels: map[string]string{"team": "a"}},
				Spec:     validRelease().Spec,
			},
			Strategy: convoyv1alpha1.ReleaseSetStrategy{Stages: []convoyv1alpha1.Stage{
				{Name: "canary", ClusterSelector: selector("ring", "canary"), MaxParallel: ptrTo(intstr.FromInt32(1))},
				{Name: "rest", Approval: convoyv1alpha1.ApprovalManual},
			}},
		},
	}
}

func selector(key, value string) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchLabels: map[string]string{key: value}}
}

func ptrTo[T any](v T) *T { return &v }

func withStages(stages ...convoyv1alpha1.Stage) func(*convoyv1alpha1.ReleaseSet) {
	return func(s *convoyv1alpha1.ReleaseSet) { s.Spec.Strategy.Stages = stages }
}

func withMaxRemovals(v intstr.IntOrString) func(*convoyv1alpha1.ReleaseSet) {
	return func(s *convoyv1alpha1.ReleaseSet) { s.Spec.Strategy.MaxRemovals = &v }
}

func TestReleaseSet(t *testing.T) {
	canary := convoyv1alpha1.Stage{Name: "canary", ClusterSelector: selector("ring", "canary")}
	cases := map[string]struct {
		mutate func(*convoyv1alpha1.ReleaseSet)
		fields []string // the error fields, none when valid
	}{
		"valid":                  {mutate: func(*convoyv1alpha1.ReleaseSet) {}},
		"no selector, no stages": {mutate: func(s *convoyv1alpha1.ReleaseSet) { s.Spec.ClusterSelector, s.Spec.Strategy.Stages = nil, nil }},
		"last stage with a selector named otherwise": {mutate: withStages(canary,
			convoyv1alpha1.Stage{Name: "eu", ClusterSelector: selector("region", "eu")})},
		"percent":         {mutate: withStages(convoyv1alpha1.Stage{Name: "all", MaxParallel: ptrTo(intstr.FromString("25%"))})},
		"maxRemovals 0":   {mutate: withMaxRemovals(intstr.FromInt32(0))},
		"maxRemovals 0%":  {mutate: withMaxRemovals(intstr.FromString("0%"))},
		"maxRemovals 3":   {mutate: withMaxRemovals(intstr.FromInt32(3))},
		"maxRemovals 40%": {mutate: withMaxRemovals(intstr.FromString("40%"))},
		"paused":          {mutate: func(s *convoyv1alpha1.ReleaseSet) { s.Spec.Paused = true }},
		"100 percent":     {mutate: withStages(convoyv1alpha1.Stage{Name: "all", MaxParallel: ptrTo(intstr.FromString("100%"))})},
		"longest name":    {mutate: func(s *convoyv1alpha1.ReleaseSet) { s.Name = strings.Repeat("a", MaxReleaseSetNameLength) }},
		"name too long for its Releases": {mutate: func(s *convoyv1alpha1.ReleaseSet) { s.Name = strings.Repeat("a", MaxReleaseSetNameLength+1) },
			fields: []string{"metadata.name"}},
		"template with a cluster": {mutate: func(s *convoyv1alpha1.ReleaseSet) { s.Spec.Template.Spec.Cluster = "prod-eu" },
			fields: []string{"spec.template.spec.cluster"}},
		"template spec validated as a Release's": {mutate: func(s *convoyv1alpha1.ReleaseSet) {
			s.Spec.Template.Spec.Chart.Repository = "git://x"
			s.Spec.Template.Spec.SyncPolicy.Interval = dur("-1s")
		}, fields: []string{"spec.template.spec.chart.repository", "spec.template.spec.syncPolicy.interval"}},
		"template label that is not a label": {mutate: func(s *convoyv1alpha1.ReleaseSet) {
			s.Spec.Template.Metadata.Labels = map[string]string{"team": "a b"}
		}, fields: []string{"spec.template.metadata.labels"}},
		"template with the set's own label and annotation": {mutate: func(s *convoyv1alpha1.ReleaseSet) {
			s.Spec.Template.Metadata.Labels = map[string]string{convoyv1alpha1.LabelCluster: "x"}
			s.Spec.Template.Metadata.Annotations = map[string]string{convoyv1alpha1.AnnotationReleaseSetRevision: "sha256:00"}
		}, fields: []string{"spec.template.metadata.labels[convoy.kumodo.io/cluster]",
			"spec.template.metadata.annotations[convoy.kumodo.io/release-set-revision]"}},
		"template with a sync request": {mutate: func(s *convoyv1alpha1.ReleaseSet) {
			s.Spec.Template.Metadata.Annotations = map[string]string{convoyv1alpha1.AnnotationSyncRequestedAt: "2026-12-02T10:04:05Z"}
		}, fields: []string{"spec.template.metadata.annotations[convoy.kumodo.io/sync-requested-at]"}},
		"template with a bound sync request": {mutate: func(s *convoyv1alpha1.ReleaseSet) {
			s.Spec.Template.Metadata.Annotations = map[string]string{convoyv1alpha1.AnnotationSyncRequestedRender: "sha256:" + strings.Repeat("0f", 32)}
		}, fields: []string{"spec.template.metadata.annotations[convoy.kumodo.io/sync-requested-render]"}},
		"invalid cluster selector": {mutate: func(s *convoyv1alpha1.ReleaseSet) {
			s.Spec.ClusterSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "env", Operator: "Near"}}}
		}, fields: []string{"spec.clusterSelector.matchExpressions[0].operator"}},
		"invalid stage selector": {mutate: withStages(convoyv1alpha1.Stage{Name: "a", ClusterSelector: selector("ring", "not a value")}),
			fields: []string{"spec.strategy.stages[0].clusterSelector.matchLabels"}},
		"duplicate stage names": {mutate: withStages(canary, convoyv1alpha1.Stage{Name: "canary"}),
			fields: []string{"spec.strategy.stages[1].name"}},
		"stage without a name": {mutate: withStages(convoyv1alpha1.Stage{}), fields: []string{"spec.strategy.stages[0].name"}},
		"stage name not a DNS label": {mutate: withStages(convoyv1alpha1.Stage{Name: "Canary_1"}),
			fields: []string{"spec.strategy.stages[0].name"}},
		"rest before the last stage": {mutate: withStages(convoyv1alpha1.Stage{Name: "rest", ClusterSelector: selector("a", "b")}, canary),
			fields: []string{"spec.strategy.stages[0].name"}},
		"rest with a selector": {mutate: withStages(canary, convoyv1alpha1.Stage{Name: "rest", ClusterSelector: selector("a", "b")}),
			fields: []string{"spec.strategy.stages[1].name"}},
		"a stage without a selector before the last": {mutate: withStages(convoyv1alpha1.Stage{Name: "all"}, canary),
			fields: []string{"spec.strategy.stages[0].clusterSelector"}},
		"maxParallel 0": {mutate: withStages(convoyv1alpha1.Stage{Name: "a", MaxParallel: ptrTo(intstr.FromInt32(0))}),
			fields: []string{"spec.strategy.stages[0].maxParallel"}},
		"maxParallel 0%": {mutate: withStages(convoyv1alpha1.Stage{Name: "a", MaxParallel: ptrTo(intstr.FromString("0%"))}),
			fields: []string{"spec.strategy.stages[0].maxParallel"}},
		"maxParallel 101%": {mutate: withStages(convoyv1alpha1.Stage{Name: "a", MaxParallel: ptrTo(intstr.FromString("101%"))}),
			fields: []string{"spec.strategy.stages[0].maxParallel"}},
		"maxParallel a word": {mutate: withStages(convoyv1alpha1.Stage{Name: "a", MaxParallel: ptrTo(intstr.FromString("half"))}),
			fields: []string{"spec.strategy.stages[0].maxParallel"}},
		"maxParallel a number in a string": {mutate: withStages(convoyv1alpha1.Stage{Name: "a", MaxParallel: ptrTo(intstr.FromString("3"))}),
			fields: []string{"spec.strategy.stages[0].maxParallel"}},
		"maxParallel +5%": {mutate: withStages(convoyv1alpha1.Stage{Name: "a", MaxParallel: ptrTo(intstr.FromString("+5%"))}),
			fields: []string{"spec.strategy.stages[0].maxParallel"}},
		"maxRemovals -1":                          {mutate: withMaxRemovals(intstr.FromInt32(-1)), fields: []string{"spec.strategy.maxRemovals"}},
		"maxRemovals -5%":                         {mutate: withMaxRemovals(intstr.FromString("-5%")), fields: []string{"spec.strategy.maxRemovals"}},
		"maxRemovals 101%":                        {mutate: withMaxRemovals(intstr.FromString("101%")), fields: []string{"spec.strategy.maxRemovals"}},
		"maxRemovals a word":                      {mutate: withMaxRemovals(intstr.FromString("few")), fields: []string{"spec.strategy.maxRemovals"}},
		"maxRemovals a number in a string":        {mutate: withMaxRemovals(intstr.FromString("3")), fields: []string{"spec.strategy.maxRemovals"}},
		"maxRemovals 25 percent without the sign": {mutate: withMaxRemovals(intstr.FromString("25 %")), fields: []string{"spec.strategy.maxRemovals"}},
		"unknown approval": {mutate: withStages(convoyv1alpha1.Stage{Name: "a", Approval: "Sometimes"}),
			fields: []string{"spec.strategy.stages[0].approval"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := validReleaseSet()
			tc.mutate(s)
			var got []string
			for _, e := range ReleaseSet(s, ReleaseOptions{}) {
				got = append(got, e.Field)
			}
			if diff := cmp.Diff(tc.fields, got); diff != "" {
				t.Errorf("error fields (-want +got):\n%s\nerrors: %v", diff, ReleaseSet(s, ReleaseOptions{}))
			}
			old := validReleaseSet()
			s.Name, s.ResourceVersion, old.ResourceVersion = old.Name, "1", "1"
			if tc.fields == nil {
				if errs := ReleaseSetUpdate(s, old, ReleaseOptions{}); len(errs) > 0 {
					t.Errorf("ReleaseSetUpdate: %v", errs)
				}
			}
		})
	}
}
